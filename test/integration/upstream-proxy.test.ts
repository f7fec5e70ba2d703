import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, silentLogger } from '../../core/common/index.js';
import {
  dialThroughUpstream,
  parseSocks5Udp,
  parseUpstreamUrl,
  socks5UdpAssociate,
  socks5UdpHeader,
} from '../../core/reach/index.js';
import { raceSources } from '../../core/vpngate/index.js';
import { upstreamDialer } from '../../core/reach/index.js';
import { listSite, type ListSite } from '../helpers/list-site.js';
import { freePort } from '../helpers/ports.js';
import { dante, microsocks, tinyproxy, type RunningProxy } from '../helpers/upstream-proxies.js';
import { vpnGateCsv } from '../helpers/vpngate-fixtures.js';

const proxies: RunningProxy[] = [];
const sites: ListSite[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
  await Promise.all(sites.splice(0).map((s) => s.close()));
});
const keep = <T extends RunningProxy>(p: T): T => (proxies.push(p), p);
const csv = vpnGateCsv([{ host: 'public-vpn-1', ip: '203.0.113.1' }]);

async function fetchThrough(url: string, listUrl: string) {
  return raceSources({
    sources: [{ url: listUrl, kind: 'api' }],
    dialer: upstreamDialer(parseUpstreamUrl(url)),
    timeoutMs: 5_000,
    maxBytes: 1 << 20,
    staggerMs: 1_000,
    concurrency: 1,
    signal: new AbortController().signal,
    logger: silentLogger(),
  });
}

describe("an upstream proxy (config upstream.url): the list through the user's other proxy", () => {
  it.each([
    ['SOCKS5 (microsocks)', () => microsocks()],
    [
      'SOCKS5 with a user name and password (microsocks)',
      () => microsocks({ auth: { user: 'alice', pass: 's3cret' } }),
    ],
    ['HTTP CONNECT (tinyproxy)', () => tinyproxy()],
    ['HTTP CONNECT with Basic credentials (tinyproxy)', () => tinyproxy({ auth: { user: 'alice', pass: 's3cret' } })],
  ])('fetches the list through %s, the name resolved by the proxy', async (_name, start) => {
    const proxy = keep(await start());
    const s = await listSite(csv);
    sites.push(s);
    const r = await fetchThrough(proxy.url, s.listUrl.replace('127.0.0.1', 'localhost'));
    expect(r.attempts[0]).toMatchObject({ ok: true, via: 'upstream' });
    expect(r.winner?.nodes).toHaveLength(1);
  });

  it('says the proxy refused the credentials (SOCKS5 and HTTP alike)', async () => {
    const socks = keep(await microsocks({ auth: { user: 'alice', pass: 's3cret' } }));
    const http = keep(await tinyproxy({ auth: { user: 'alice', pass: 's3cret' } }));
    for (const url of [
      socks.url.replace('s3cret', 'wrong'),
      http.url.replace('s3cret', 'wrong'),
      socks.url.replace('alice:s3cret@', ''),
    ]) {
      await expect(dialThroughUpstream(parseUpstreamUrl(url), '127.0.0.1', 9)).rejects.toMatchObject({
        code: ErrorCodes.UPSTREAM_AUTH_FAILED,
      });
    }
  });

  it('tells a target that refused from a proxy that is not there', async () => {
    const socks = keep(await microsocks());
    const closed = await freePort();
    await expect(dialThroughUpstream(parseUpstreamUrl(socks.url), '127.0.0.1', closed)).rejects.toMatchObject({
      code: ErrorCodes.EGRESS_CONNECT_REFUSED,
      message: expect.stringMatching(/connection refused/),
    });
    await expect(
      dialThroughUpstream(parseUpstreamUrl(`socks5://127.0.0.1:${closed}`), '127.0.0.1', 80),
    ).rejects.toMatchObject({
      code: ErrorCodes.UPSTREAM_FAILED,
      message: expect.stringMatching(/cannot reach the upstream proxy/),
    });
  });

  it('carries datagrams through a SOCKS5 UDP relay (Dante), and an HTTP proxy has none', async () => {
    const echo = createSocket('udp4');
    echo.on('message', (m, r) => echo.send(m, r.port, r.address));
    await new Promise<void>((r) => echo.bind(0, '127.0.0.1', () => r()));
    const echoPort = (echo.address() as AddressInfo).port;
    try {
      const d = keep(await dante());
      const { control, relay } = await socks5UdpAssociate(parseUpstreamUrl(d.url));
      const sock = createSocket('udp4');
      const got = new Promise<Buffer>((resolve) => sock.on('message', (m) => resolve(m)));
      await new Promise<void>((r) => sock.connect(relay.port, relay.host, () => r()));
      sock.send([socks5UdpHeader('127.0.0.1', echoPort), Buffer.from('ping through the relay')]);
      const reply = parseSocks5Udp(await got);
      expect(reply).toMatchObject({ host: '127.0.0.1', port: echoPort });
      expect(reply?.data.toString()).toBe('ping through the relay');
      sock.close();
      control.destroy();
      const http = keep(await tinyproxy());
      await expect(socks5UdpAssociate(parseUpstreamUrl(http.url))).rejects.toMatchObject({
        code: ErrorCodes.UPSTREAM_FAILED,
        message: expect.stringMatching(/carries no UDP/),
      });
    } finally {
      echo.close();
    }
  });

  it('refuses an upstream URL it cannot use, naming what is wrong and never printing the password', () => {
    expect(() => parseUpstreamUrl('ftp://h:1')).toThrow(/socks5 or http/);
    expect(() => parseUpstreamUrl('nonsense')).toThrow(/not a URL/);
    expect(parseUpstreamUrl('socks5h://bob:hunter2@proxy.lan:1081')).toMatchObject({
      kind: 'socks5',
      host: 'proxy.lan',
      port: 1081,
      username: 'bob',
      password: 'hunter2',
      display: 'socks5h://bob:***@proxy.lan:1081',
    });
    expect(parseUpstreamUrl('http://10.0.0.1')).toMatchObject({ kind: 'http', port: 8080 });
  });
});
