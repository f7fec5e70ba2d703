/**
 * A hostile SE-VPN server (#35): one that never answers, answers HTML, sends a huge head or PACK,
 * oversized blocks, or nothing but keep-alives. Each gets a coded error (or is simply lived with)
 * and nothing grows without bound. A real TLS server on loopback, speaking just enough SoftEther.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { dialSeVpn, encodeKeepAlive, Pack, SeSession } from '../../core/softether/index.js';
import { until } from '../helpers/fds.js';
import { selfSignedCert } from '../helpers/self-signed.js';

type Behaviour = (socket: TLSSocket, request: () => Promise<string>) => void | Promise<void>;

describe('a hostile SE-VPN server', () => {
  let cert = '';
  let key = '';
  let server: Server;
  let port = 0;
  let behaviour: Behaviour = () => {};

  beforeAll(async () => {
    ({ cert, key } = selfSignedCert('hostile'));
    server = createServer({ cert, key }, (socket) => {
      socket.on('error', () => {});
      let buf = Buffer.alloc(0);
      const waiters: Array<() => void> = [];
      socket.on('data', (c: Buffer) => {
        buf = Buffer.concat([buf, c]);
        for (const w of waiters.splice(0)) w();
      });
      // One HTTP request (head and Content-Length body) as text.
      const request = async (): Promise<string> => {
        for (;;) {
          const end = buf.indexOf('\r\n\r\n');
          if (end >= 0) {
            const len = Number(/content-length: (\d+)/i.exec(buf.subarray(0, end).toString())?.[1] ?? 0);
            if (buf.length >= end + 4 + len) {
              const text = buf.subarray(0, end + 4 + len).toString('latin1');
              buf = buf.subarray(end + 4 + len);
              return text;
            }
          }
          await new Promise<void>((r) => waiters.push(r));
        }
      };
      void behaviour(socket, request);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const dial = (timeoutMs = 3_000) =>
    dialSeVpn({
      host: '127.0.0.1',
      port,
      trust: { profileCa: [cert], serverName: null },
      hub: 'VPNGATE',
      username: 'vpn',
      password: 'vpn',
      maxConnection: 1,
      signal: AbortSignal.timeout(timeoutMs),
    });
  const answer = (socket: TLSSocket, body: Buffer, type = 'application/octet-stream'): void =>
    void socket.write(
      Buffer.concat([
        Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n`),
        body,
      ]),
    );
  const hello = (): Buffer =>
    new Pack()
      .addStr('hello', 'Hostile')
      .addInt('version', 1)
      .addInt('build', 1)
      .addData('random', Buffer.alloc(20, 1))
      .encode();
  const welcome = (): Buffer =>
    new Pack()
      .addStr('session_name', 'SID-HOSTILE-1')
      .addStr('connection_name', 'CID-1')
      .addData('session_key', Buffer.alloc(20, 2))
      .addInt('max_connection', 1)
      .addInt('use_encrypt', 1)
      .addInt('timeout', 10_000)
      .encode();
  /** A server that logs us in, then does `then` with the data stream. */
  const loggingIn =
    (then: (socket: TLSSocket) => void): Behaviour =>
    async (socket, request) => {
      await request();
      answer(socket, hello());
      await request();
      answer(socket, welcome());
      then(socket);
    };

  it('one that never answers: the dial ends at its deadline with GH_ERR_EGRESS_CONNECT_TIMEOUT, the connection closed', async () => {
    let closed = false;
    behaviour = (socket) => void socket.once('close', () => (closed = true));
    await expect(dial(1_000)).rejects.toMatchObject({ code: 'GH_ERR_EGRESS_CONNECT_TIMEOUT' });
    await until(() => (closed ? true : undefined), 2_000, 'the server side closed');
  });

  it('one that answers HTML (a captive portal or a web server): GH_ERR_SOFTETHER_PROTOCOL, not a PACK', async () => {
    behaviour = async (socket, request) => {
      await request();
      answer(socket, Buffer.from('<html>welcome to the hotel wifi</html>'), 'text/html');
    };
    await expect(dial()).rejects.toMatchObject({
      code: 'GH_ERR_SOFTETHER_PROTOCOL',
      message: expect.stringMatching(/not a PACK/),
    });
  });

  it('one that sends an endless head or a huge body: refused at 8 KiB of head and 64 KiB of body, not buffered', async () => {
    behaviour = async (socket, request) => {
      await request();
      socket.write('HTTP/1.1 200 OK\r\n');
      for (let i = 0; i < 100; i++) socket.write(`X-Padding-${i}: ${'a'.repeat(200)}\r\n`);
    };
    await expect(dial()).rejects.toMatchObject({
      code: 'GH_ERR_SOFTETHER_PROTOCOL',
      message: expect.stringMatching(/8192/),
    });
    behaviour = async (socket, request) => {
      await request();
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 1073741824\r\n\r\n');
    };
    await expect(dial()).rejects.toMatchObject({
      code: 'GH_ERR_SOFTETHER_PROTOCOL',
      message: expect.stringMatching(/1073741824/),
    });
  });

  it('one that sends a PACK claiming a million elements, or an error: coded refusals', async () => {
    behaviour = async (socket, request) => {
      await request();
      const b = Buffer.alloc(64);
      b.writeUInt32BE(1_000_000);
      answer(socket, b);
    };
    await expect(dial()).rejects.toMatchObject({
      code: 'GH_ERR_SOFTETHER_PROTOCOL',
      message: expect.stringMatching(/elements/),
    });
    behaviour = async (socket, request) => {
      await request();
      answer(socket, hello());
      await request();
      answer(socket, new Pack().addInt('error', 9).encode());
    };
    await expect(dial()).rejects.toMatchObject({ code: 'GH_ERR_SOFTETHER_AUTH_FAILED' });
  });

  it('one that sends an oversized block after the login: the session goes down with GH_ERR_SOFTETHER_PROTOCOL', async () => {
    behaviour = loggingIn((socket) => {
      const b = Buffer.alloc(8);
      b.writeUInt32BE(1, 0);
      b.writeUInt32BE(1_000_000, 4);
      socket.write(b);
    });
    const session = new SeSession(await dial(), silentLogger());
    const down = await new Promise<{ code?: string }>((r) => session.once('down', r));
    expect(down.code).toBe('GH_ERR_SOFTETHER_PROTOCOL');
  });

  it('one that sends nothing but keep-alives, fast: the session lives with it, frame-free', async () => {
    let stop = false;
    behaviour = loggingIn((socket) => {
      const flood = (): void => {
        if (stop || socket.destroyed) return;
        const burst = Buffer.concat(Array.from({ length: 200 }, () => encodeKeepAlive(500)));
        if (socket.write(burst)) setImmediate(flood);
        else socket.once('drain', flood);
      };
      flood();
    });
    const session = new SeSession(await dial(), silentLogger());
    // The process's memory while it goes on, for the figure in core/softether/README.md (printed,
    // not judged: RSS also holds what the allocator keeps of freed buffers).
    const rss0 = process.memoryUsage().rss;
    let rssPeak = rss0;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
    try {
      // ~50 MB of keep-alives go by; the reader holds at most one block at a time whatever comes
      // (softether-wire.test.ts pins that), so nothing of them stays.
      await until(() => (session.stats.keepAlivesIn > 100_000 ? true : undefined), 20_000, '100,000 keep-alives');
      expect(session.stats.framesIn).toBe(0);
      expect(session.stats.bytesIn).toBeGreaterThan(40 * 1024 * 1024);
      console.log(
        `keep-alive flood: ${(session.stats.bytesIn / 2 ** 20).toFixed(0)} MiB read; RSS ${(rss0 / 2 ** 20).toFixed(0)} → peak ${(rssPeak / 2 ** 20).toFixed(0)} MiB`,
      );
    } finally {
      clearInterval(sampler);
      stop = true;
      session.close();
    }
  }, 30_000);
});
