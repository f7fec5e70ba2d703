import { connect } from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { curl } from '../helpers/curl.js';
import { drainOrTimeout, eventually, openFdCount } from '../helpers/fds.js';
import { startProxy } from '../helpers/proxy.js';
import { Servers, startEchoServer, startHttpServer } from '../helpers/servers.js';
import { connectRequest } from '../helpers/socks-client.js';

const servers = new Servers();
afterEach(() => servers.closeAll());

/** One complete short session: handshake, one echoed byte, close. */
function oneSession(proxyPort: number, echoPort: number, http: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect({ port: proxyPort, host: '127.0.0.1' });
    const expectBytes = http ? 39 + 1 : 12 + 1;
    let got = 0;
    s.on('connect', () => {
      if (http) s.write(`CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\n\r\n`);
      else s.write(Buffer.concat([Buffer.from([5, 1, 0]), connectRequest('127.0.0.1', echoPort)]));
    });
    s.on('data', (c: Buffer) => {
      got += c.length;
      if (got === expectBytes - 1) s.write('x');
      if (got >= expectBytes) s.destroy();
    });
    s.on('close', () => (got >= expectBytes ? resolve() : reject(new Error(`session ended after ${got} bytes`))));
    s.on('error', reject);
  });
}

describe('resources', () => {
  it('10,000 sequential sessions leave open file descriptors back at baseline', async () => {
    const echo = servers.track(await startEchoServer());
    const p = servers.track(await startProxy());
    await oneSession(p.port, echo.port, false); // warm up lazily created handles
    await eventually(() => p.server.stats.sessionsActive === 0, 5_000, 'warm-up closed');
    const baseline = openFdCount();
    for (let i = 0; i < 10_000; i++) await oneSession(p.port, echo.port, i % 5 === 0);
    await eventually(
      () => p.server.stats.sessionsActive === 0 && p.egress.stats.sessionsActive === 0,
      10_000,
      'sessions closed',
    );
    await eventually(() => openFdCount() <= baseline, 10_000, `fds back to ${baseline}`);
    expect(p.server.stats.sessionsTotal).toBe(10_001);
    expect(p.server.sessions.size).toBe(0);
  }, 120_000);

  it('a client that never reads holds the sender back instead of growing memory', async () => {
    // The echo server would send as fast as we write; the SOCKS client never reads its socket.
    const echo = servers.track(await startEchoServer());
    const p = servers.track(await startProxy());
    const s = connect({ port: p.port, host: '127.0.0.1' });
    s.on('error', () => {});
    await new Promise<void>((r) => s.on('connect', () => r()));
    s.write(Buffer.concat([Buffer.from([5, 1, 0]), connectRequest('127.0.0.1', echo.port)]));
    s.pause();
    // Pump for a second, honouring 'drain'. Without backpressure in the proxy it would read all of
    // it (hundreds of MiB); with it, the relay stalls once the socket buffers on the path are full.
    const chunk = Buffer.alloc(64 * 1024);
    const until = Date.now() + 1_000;
    while (Date.now() < until) {
      if (!s.write(chunk)) {
        await drainOrTimeout(s, 50);
      }
    }
    const relayed = p.server.stats.bytesUp;
    expect(relayed).toBeGreaterThan(0);
    expect(relayed).toBeLessThan(48 * 1024 * 1024);
    console.log(`relayed before stall: ${(relayed / 1048576).toFixed(1)} MiB`);
    s.destroy();
  });
});

describe('random bytes on the proxy port (property)', () => {
  it('never disturb the proxy: every session is closed and a real request still works', async () => {
    const web = servers.track(await startHttpServer());
    const p = servers.track(await startProxy({ handshakeTimeoutMs: 500 }));
    const prefixes = [
      Buffer.from([5]),
      Buffer.from([5, 1, 0]),
      Buffer.from('GET '),
      Buffer.from('CONNECT '),
      Buffer.alloc(0),
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: prefixes.length - 1 }),
        fc.uint8Array({ maxLength: 400 }),
        async (pi, bytes) => {
          await new Promise<void>((resolve) => {
            const s = connect({ port: p.port, host: '127.0.0.1' });
            s.on('error', () => {});
            s.on('connect', () => {
              s.write(Buffer.concat([prefixes[pi]!, Buffer.from(bytes)]));
              setTimeout(() => s.destroy(), 5);
            });
            s.on('close', () => resolve());
          });
        },
      ),
      { numRuns: 300 },
    );
    await eventually(() => p.server.stats.sessionsActive === 0, 5_000, 'fuzzed sessions closed');
    const r = await curl(['--socks5-hostname', `127.0.0.1:${p.port}`, `${web.url}/`]);
    expect(r.stdout.toString()).toBe('hello');
  }, 60_000);
});
