import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from '../../core/app/index.js';
import { startRoutingApp } from '../helpers/routing-app.js';
import { socksConnect } from '../helpers/socks-client.js';

/**
 * Issue #33, names without leaks: a client that resolves names itself connects by IP; its name
 * comes from its first bytes (TLS SNI, HTTP Host) before domain rules run. Real TLS hellos from
 * Node's TLS client, through the real proxy, to a real listener that counts who reaches it.
 */
describe('a flow addressed by IP is routed by the name in its first bytes (#33)', () => {
  let app: RunningApp;
  let target: Server;
  let reached = 0;
  let port = 0;

  beforeAll(async () => {
    target = createServer((s) => {
      reached++;
      s.on('data', () => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
      s.on('error', () => {});
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
    port = (target.address() as AddressInfo).port;
    // This test's listener is on a free port; 443, 80 and the like are the default.
    app = await startRoutingApp(['DOMAIN-SUFFIX,blocked.test,REJECT', 'MATCH,DIRECT'], { sniffPorts: [port] });
  });

  afterAll(async () => {
    await app.stop();
    await new Promise<void>((r) => target.close(() => r()));
  });

  /** A SOCKS5 CONNECT to 127.0.0.1:port, then `speak` on the tunnel; resolves when the proxy closes it or it answers. */
  async function through(speak: (s: Socket) => void): Promise<{ answered: boolean }> {
    const { client, reply } = await socksConnect(app.listening.proxy.port, '127.0.0.1', port);
    expect(reply[1]).toBe(0x00); // told "connected" before the name is known
    const socket = client.socket;
    return new Promise((resolve) => {
      let answered = false;
      socket.on('data', () => {
        answered = true;
        socket.destroy();
      });
      socket.on('error', () => {});
      // The client is half-open (allowHalfOpen): the proxy's FIN is its 'end'.
      socket.once('end', () => resolve({ answered }));
      socket.once('close', () => resolve({ answered }));
      speak(socket);
      setTimeout(() => socket.destroy(), 3_000).unref();
    });
  }

  it('TLS: the SNI a rule refuses is closed before anything dials; another SNI reaches the host', async () => {
    const before = reached;
    const tlsHello = (servername: string) => (s: Socket) => {
      const t = tlsConnect({ socket: s, servername, rejectUnauthorized: false });
      t.on('error', () => {});
    };
    await through(tlsHello('www.blocked.test'));
    expect(reached).toBe(before);
    await through(tlsHello('allowed.test'));
    expect(reached).toBe(before + 1);
  });

  it('HTTP: the Host header decides the same way', async () => {
    const before = reached;
    const get = (host: string) => (s: Socket) => s.write(`GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect(await through(get('cdn.blocked.test'))).toEqual({ answered: false });
    expect(reached).toBe(before);
    expect(await through(get('example.test'))).toEqual({ answered: true });
    expect(reached).toBe(before + 1);
  });
});
