import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCheck, parseExit } from '../../core/app/exit-check.js';
import { silentLogger } from '../../core/common/index.js';
import { directDialer } from '../../core/reach/index.js';

describe('parseExit: what an address-echo service said', () => {
  it.each([
    ['{"ip":"203.0.113.7","country":"JP"}', '203.0.113.7', 'JP'],
    ['{"query":"198.51.100.2","countryCode":"kr","status":"success"}', '198.51.100.2', 'KR'],
    ['{"origin":"192.0.2.1, 10.0.0.1"}', '192.0.2.1', null],
    ['{"ip":"2001:db8::1","country_code":"US"}', '2001:db8::1', 'US'],
    ['203.0.113.9\n', '203.0.113.9', null],
    ['ip=192.0.2.44\nloc=JP\n', '192.0.2.44', null],
  ])('%s → %s %s', (body, address, country) => {
    expect(parseExit(body)).toEqual({ address, country });
  });

  it('says there is no address rather than guess: a page, an error, a country that is not a code', () => {
    expect(parseExit('<html>Access denied</html>')).toEqual({ address: null, country: null });
    expect(parseExit('{"ip":"not-an-ip","country":"Japan"}')).toEqual({ address: null, country: null });
    expect(parseExit('999.1.1.1')).toEqual({ address: null, country: null });
  });
});

describe('ExitCheck over a real HTTP echo on loopback', () => {
  let server: Server | null = null;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  async function echo(handler: (url: string) => [number, string]): Promise<string> {
    server = createServer((req, res) => {
      const [status, body] = handler(req.url ?? '/');
      res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('measures the exit through the dialer it is given, names the node, and tells its listeners', async () => {
    const base = await echo(() => [200, '{"ip":"203.0.113.7","country":"JP"}']);
    const check = new ExitCheck({
      url: () => `${base}/ip`,
      dialer: () => directDialer(),
      activeNodeId: () => 'node-a',
      intervalMs: 60_000,
      logger: silentLogger(),
    });
    const seen: unknown[] = [];
    check.onChange((e) => seen.push(e));
    const info = await check.check();
    expect(info).toMatchObject({ nodeId: 'node-a', address: '203.0.113.7', country: 'JP', error: null });
    expect(check.last).toBe(info);
    expect(seen).toEqual([info]);
    check.close();
  });

  it('one measurement at a time: asking twice while one runs gets the same answer', async () => {
    let hits = 0;
    const base = await echo(() => (hits++, [200, '192.0.2.5']));
    const check = new ExitCheck({
      url: () => base,
      dialer: () => directDialer(),
      activeNodeId: () => 'n',
      intervalMs: 60_000,
      logger: silentLogger(),
    });
    const [a, b] = await Promise.all([check.check(), check.check()]);
    expect(a).toBe(b);
    expect(hits).toBe(1);
  });

  it('says why there is no address: unset, no tunnel, an error status, no address in the answer, nothing listening', async () => {
    const base = await echo((u) => (u === '/500' ? [500, 'oops'] : [200, 'hello']));
    const make = (url: string | null, up = true) =>
      new ExitCheck({
        url: () => url,
        dialer: () => (up ? directDialer() : null),
        activeNodeId: () => 'n',
        intervalMs: 60_000,
        logger: silentLogger(),
      });
    expect((await make(null).check()).error).toBe('exitCheck.url is not set');
    expect((await make(base, false).check()).error).toBe('no tunnel is up');
    expect((await make(`${base}/500`).check()).error).toMatch(/answered 500/);
    expect((await make(`${base}/`).check()).error).toMatch(/answered no address/);
    const closedPort = new URL(base).port;
    await new Promise<void>((r) => server!.close(() => r()));
    server = null;
    const refused = await make(`http://127.0.0.1:${closedPort}/`).check();
    expect(refused.address).toBeNull();
    expect(refused.error).toMatch(/ECONNREFUSED/);
  });
});
