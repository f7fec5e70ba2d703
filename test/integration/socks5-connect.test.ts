import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, GatehopError } from '../../core/common/index.js';
import { DirectEgress } from '../../core/egress/index.js';
import type { Egress } from '../../core/contracts/index.js';
import { curl, sha256 } from '../helpers/curl.js';
import { startProxy, testCredentials, TEST_USER, type RunningProxy } from '../helpers/proxy.js';
import { makeBlob, Servers, startEchoServer, startHttpServer, startTcpServer } from '../helpers/servers.js';
import { connectRequest, RawClient, socksConnect } from '../helpers/socks-client.js';

const servers = new Servers();
afterEach(() => servers.closeAll());

async function proxy(opts: Parameters<typeof startProxy>[0] = {}): Promise<RunningProxy> {
  return servers.track(await startProxy(opts));
}

/** An egress whose connects fail with a given error code, to pin the reply mapping. */
function failingEgress(code: (typeof ErrorCodes)[keyof typeof ErrorCodes]): Egress {
  const direct = new DirectEgress('failing');
  return Object.assign(Object.create(direct) as Egress, {
    connectTcp: async () => {
      throw new GatehopError(code, 'synthetic failure');
    },
  });
}

describe('SOCKS5 CONNECT through the direct egress', () => {
  it('fetches a page with curl --socks5-hostname (the name is resolved by the egress)', async () => {
    const blob = makeBlob(300_000);
    const web = servers.track(await startHttpServer(blob));
    const p = await proxy();
    const r = await curl(['--socks5-hostname', `127.0.0.1:${p.port}`, `http://localhost:${web.port}/blob`]);
    expect(r.stderr).toBe('');
    expect(sha256(r.stdout)).toBe(blob.sha256);
  });

  it('authenticates with curl --socks5 --proxy-user and refuses a wrong password', async () => {
    const web = servers.track(await startHttpServer());
    const p = await proxy({ credentials: testCredentials() });
    const ok = await curl([
      '--socks5',
      `127.0.0.1:${p.port}`,
      '--proxy-user',
      `${TEST_USER.username}:${TEST_USER.password}`,
      `${web.url}/`,
    ]);
    expect(ok.stdout.toString()).toBe('hello');
    const bad = await curl([
      '--socks5',
      `127.0.0.1:${p.port}`,
      '--proxy-user',
      `${TEST_USER.username}:nope`,
      `${web.url}/`,
    ]);
    expect(bad.code).not.toBe(0);
    expect(p.server.stats.authFailures).toBe(1);
  });

  it('refuses NO_AUTH when credentials are configured (method 0xFF)', async () => {
    const p = await proxy({ credentials: testCredentials() });
    const c = await RawClient.open(p.port);
    c.write([5, 1, 0]);
    expect([...(await c.read(2))]).toEqual([5, 0xff]);
    await c.waitEnd();
  });

  it('connects to an IPv6 target', async () => {
    const echo = servers.track(await startEchoServer('::1'));
    const p = await proxy();
    const { client, reply } = await socksConnect(p.port, '::1', echo.port);
    expect(reply[1]).toBe(0);
    client.write('ping6');
    expect((await client.read(5)).toString()).toBe('ping6');
    client.destroy();
  });

  it('relays bytes the client sent before the CONNECT reply (optimistic data)', async () => {
    const echo = servers.track(await startEchoServer());
    const p = await proxy();
    const c = await RawClient.open(p.port);
    // Larger than any handshake message: early payload must not be mistaken for a bloated handshake.
    const early = Buffer.alloc(10_000, 7);
    c.write(Buffer.concat([Buffer.from([5, 1, 0]), connectRequest('127.0.0.1', echo.port), early]));
    const head = await c.read(2 + 10);
    expect(head[3]).toBe(0);
    expect((await c.read(early.length)).equals(early)).toBe(true);
    c.destroy();
  });

  it('replies 0x05 when the target refuses the connection', async () => {
    const closed = await startTcpServer(() => {});
    const port = closed.port;
    await closed.close();
    const p = await proxy();
    const { reply, client } = await socksConnect(p.port, '127.0.0.1', port);
    expect(reply[1]).toBe(0x05);
    await client.waitEnd();
    expect(p.server.stats.errorReplies['0x05']).toBe(1);
  });

  it.each([
    [ErrorCodes.EGRESS_HOST_UNREACHABLE, 0x04],
    [ErrorCodes.EGRESS_DNS_NOT_FOUND, 0x04],
    [ErrorCodes.EGRESS_NETWORK_UNREACHABLE, 0x03],
    [ErrorCodes.EGRESS_CONNECT_TIMEOUT, 0x06],
    [ErrorCodes.EGRESS_NOT_ALLOWED, 0x02],
    [ErrorCodes.EGRESS_FAILED, 0x01],
  ])('replies with the mapped code when the egress fails with %s', async (code, expected) => {
    const p = await proxy({ egress: failingEgress(code) });
    const { reply } = await socksConnect(p.port, 'unreachable.test', 80);
    expect(reply[1]).toBe(expected);
  });

  it('answers BIND with 0x07 and an unknown address type with 0x08', async () => {
    const p = await proxy();
    const a = await RawClient.open(p.port);
    a.write([5, 1, 0]);
    await a.read(2);
    a.write(connectRequest('127.0.0.1', 9, 0x02));
    expect((await a.read(10))[1]).toBe(0x07);
    const b = await RawClient.open(p.port);
    b.write([5, 1, 0, 5, 1, 0, 9, 1, 2]);
    expect((await b.read(2 + 10))[3]).toBe(0x08);
  });

  it('answers a method list of length 0 with 0xFF and closes', async () => {
    const p = await proxy();
    const c = await RawClient.open(p.port);
    c.write([5, 0]);
    expect([...(await c.read(2))]).toEqual([5, 0xff]);
    await c.waitEnd();
    expect(p.server.stats.malformed['no-methods']).toBe(1);
  });

  it('answers a domain of length 0 with general failure', async () => {
    const p = await proxy();
    const c = await RawClient.open(p.port);
    c.write([5, 1, 0, 5, 1, 0, 3, 0, 0, 80]);
    expect((await c.read(12))[3]).toBe(0x01);
    await c.waitEnd();
  });

  it('closes on garbage first bytes and on a SOCKS4 greeting, counting both', async () => {
    const p = await proxy();
    const g = await RawClient.open(p.port);
    g.write([0xde, 0xad, 0xbe, 0xef]);
    await g.waitEnd();
    const s4 = await RawClient.open(p.port);
    s4.write([4, 1, 0, 80, 127, 0, 0, 1, 0]);
    await s4.waitEnd();
    expect(p.server.stats.malformed['unknown-protocol']).toBe(1);
    expect(p.server.stats.malformed['socks4-unsupported']).toBe(1);
  });

  it('keeps serving other sessions while one sends a truncated handshake', async () => {
    const web = servers.track(await startHttpServer());
    const p = await proxy();
    const stuck = await RawClient.open(p.port);
    stuck.write([5, 2, 0]); // promises two methods, sends one
    const r = await curl(['--socks5-hostname', `127.0.0.1:${p.port}`, `${web.url}/`]);
    expect(r.stdout.toString()).toBe('hello');
    stuck.destroy();
  });
});
