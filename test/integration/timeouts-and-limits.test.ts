import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, GatehopError } from '../../core/common/index.js';
import { DirectEgress } from '../../core/egress/index.js';
import type { ConnectTcpOptions, Egress } from '../../core/contracts/index.js';
import { eventually } from '../helpers/fds.js';
import { startProxy } from '../helpers/proxy.js';
import { Servers, startEchoServer } from '../helpers/servers.js';
import { RawClient, connectRequest, socksConnect } from '../helpers/socks-client.js';

const servers = new Servers();
afterEach(() => servers.closeAll());

/** An egress whose connects never complete until aborted: only the session's timer can end them. */
function hangingEgress(): Egress {
  const direct = new DirectEgress('hanging');
  return Object.assign(Object.create(direct) as Egress, {
    connectTcp: (_h: string, _p: number, opts: ConnectTcpOptions = {}) =>
      new Promise((_, reject) => {
        opts.signal?.addEventListener('abort', () => reject(opts.signal!.reason as Error));
      }),
  });
}

describe('session timers', () => {
  it('closes a client that never finishes its handshake (handshake timeout)', async () => {
    const p = servers.track(await startProxy({ handshakeTimeoutMs: 200 }));
    const c = await RawClient.open(p.port);
    c.write([5, 1]); // greeting cut short
    await c.waitEnd(3_000);
    expect(p.server.stats.timeouts.handshake).toBe(1);
    expect(p.server.stats.sessionsActive).toBe(0);
  });

  it('closes at once a client that half-closes mid-handshake or without a byte, instead of holding it until the handshake timer', async () => {
    // Found by fuzzing (issue #24): each such connection held a session slot for 10 s.
    const p = servers.track(await startProxy({ handshakeTimeoutMs: 60_000 }));
    for (const head of [[5, 1], [5, 1, 0, 5, 1, 0, 3, 11, 0x65, 0x78], []]) {
      const c = await RawClient.open(p.port);
      if (head.length) c.write(head);
      c.socket.end();
      await c.waitEnd(3_000);
    }
    await eventually(() => p.server.stats.sessionsActive === 0, 3_000, 'no session left');
    expect(p.server.stats.timeouts.handshake).toBe(0);
    expect(p.server.stats.malformed['eof-in-handshake']).toBe(2);
  });

  it('closes an HTTP client that never sends a full request head with 408', async () => {
    const p = servers.track(await startProxy({ handshakeTimeoutMs: 200 }));
    const c = await RawClient.open(p.port);
    c.write('GET http://127.0.0.1/ HTTP/1.1\r\n');
    await c.waitEnd(3_000);
    expect(c.received.toString()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a connect slower than the handshake timeout but within the connect timeout succeeds (the timers do not overlap)', async () => {
    const echo = servers.track(await startEchoServer());
    const direct = new DirectEgress('slow');
    const slow = Object.assign(Object.create(direct) as Egress, {
      connectTcp: async (h: string, port: number, opts: ConnectTcpOptions = {}) => {
        await new Promise((r) => setTimeout(r, 400));
        return direct.connectTcp(h, port, opts);
      },
    });
    const p = servers.track(await startProxy({ handshakeTimeoutMs: 200, connectTimeoutMs: 2_000, egress: slow }));
    const { client, reply } = await socksConnect(p.port, '127.0.0.1', echo.port);
    expect(reply[1]).toBe(0x00);
    client.write('ok');
    expect((await client.read(2)).toString()).toBe('ok');
    expect(p.server.stats.timeouts.handshake).toBe(0);
    client.destroy();
  });

  it('replies 0x06 when the upstream connect outlasts the connect timeout', async () => {
    const p = servers.track(await startProxy({ connectTimeoutMs: 200, egress: hangingEgress() }));
    const c = await RawClient.open(p.port);
    c.write([5, 1, 0]);
    await c.read(2);
    c.write(connectRequest('10.255.255.1', 80));
    const reply = await c.read(10, 3_000);
    expect(reply[1]).toBe(0x06);
    expect(p.server.stats.timeouts.connect).toBe(1);
    await c.waitEnd();
  });

  it('answers 504 on an HTTP CONNECT that outlasts the connect timeout', async () => {
    const p = servers.track(await startProxy({ connectTimeoutMs: 200, egress: hangingEgress() }));
    const c = await RawClient.open(p.port);
    c.write('CONNECT 10.255.255.1:443 HTTP/1.1\r\n\r\n');
    await c.waitEnd(3_000);
    expect(c.received.toString()).toMatch(/^HTTP\/1\.1 504/);
  });

  it('closes an established session with no traffic (idle timeout) and not a busy one', async () => {
    const echo = servers.track(await startEchoServer());
    const p = servers.track(await startProxy({ idleTimeoutMs: 300 }));
    const idle = await socksConnect(p.port, '127.0.0.1', echo.port);
    const busy = await socksConnect(p.port, '127.0.0.1', echo.port);
    const ticker = setInterval(() => busy.client.write('.'), 50);
    try {
      await idle.client.waitEnd(3_000);
      expect(busy.client.ended).toBe(false);
      expect(p.server.stats.timeouts.idle).toBe(1);
    } finally {
      clearInterval(ticker);
      busy.client.destroy();
    }
  });
});

describe('admission control', () => {
  it('refuses sessions past maxSessions with reply 0x01 / HTTP 503 and counts them', async () => {
    const echo = servers.track(await startEchoServer());
    const p = servers.track(await startProxy({ maxSessions: 2 }));
    const a = await socksConnect(p.port, '127.0.0.1', echo.port);
    const b = await socksConnect(p.port, '127.0.0.1', echo.port);
    const c = await socksConnect(p.port, '127.0.0.1', echo.port);
    expect(a.reply[1]).toBe(0);
    expect(b.reply[1]).toBe(0);
    expect(c.reply[1]).toBe(0x01);
    const h = await RawClient.open(p.port);
    h.write(`GET http://127.0.0.1:${echo.port}/ HTTP/1.1\r\nHost: x\r\n\r\n`);
    await h.waitEnd();
    expect(h.received.toString()).toMatch(/^HTTP\/1\.1 503/);
    expect(p.server.stats.rejected).toBe(2);
    // Capacity returns when a session ends.
    a.client.destroy();
    await eventually(() => p.server.stats.sessionsActive === 1, 3_000, 'session released');
    const d = await socksConnect(p.port, '127.0.0.1', echo.port);
    expect(d.reply[1]).toBe(0);
    b.client.destroy();
    d.client.destroy();
  });
});

describe('egress shutdown', () => {
  it('closing the proxy force-closes every session and its upstream', async () => {
    const echo = servers.track(await startEchoServer());
    const p = await startProxy();
    const a = await socksConnect(p.port, '127.0.0.1', echo.port);
    await p.close();
    await a.client.waitEnd();
    expect(p.server.sessions.size).toBe(0);
    expect(p.egress.stats.sessionsActive).toBe(0);
    await expect(p.egress.connectTcp('127.0.0.1', echo.port)).rejects.toMatchObject({ code: ErrorCodes.EGRESS_CLOSED });
  });

  it('an aborted signal ends a direct connect with the abort reason', async () => {
    const egress = new DirectEgress();
    const ac = new AbortController();
    ac.abort(new GatehopError(ErrorCodes.ABORTED, 'test abort'));
    await expect(egress.connectTcp('127.0.0.1', 9, { signal: ac.signal })).rejects.toMatchObject({
      code: ErrorCodes.ABORTED,
    });
    await egress.close();
  });
});
