import { connect } from 'node:net';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/fds.js';
import { startProxy } from '../helpers/proxy.js';
import { Servers, startTcpServer } from '../helpers/servers.js';
import { RawClient, socksConnect } from '../helpers/socks-client.js';

const servers = new Servers();
afterEach(() => servers.closeAll());

/** Reads the whole request until EOF, then answers with a large response and ends. */
function answerAfterEof(responseBytes: number) {
  return (s: Socket): void => {
    let got = 0;
    s.on('data', (c: Buffer) => (got += c.length));
    s.on('end', () => {
      s.end(Buffer.alloc(responseBytes, got % 256));
    });
  };
}

describe('half-close', () => {
  it('delivers the whole response after the client half-closes its request side (SOCKS5)', async () => {
    const server = servers.track(await startTcpServer(answerAfterEof(2_000_000)));
    const p = servers.track(await startProxy());
    const { client } = await socksConnect(p.port, '127.0.0.1', server.port);
    client.write(Buffer.alloc(1000, 1));
    client.socket.end();
    await client.waitEnd(10_000);
    expect(client.received.length).toBe(2_000_000);
    expect(client.received[0]).toBe(1000 % 256);
  });

  it('delivers the whole response after the client half-closes inside an HTTP CONNECT tunnel', async () => {
    const server = servers.track(await startTcpServer(answerAfterEof(1_000_000)));
    const p = servers.track(await startProxy());
    const c = await RawClient.open(p.port);
    c.write(`CONNECT 127.0.0.1:${server.port} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
    const head = (await c.read(39)).toString();
    expect(head).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    c.write('request');
    c.socket.end();
    await c.waitEnd(10_000);
    expect(c.received.length).toBe(1_000_000);
  });

  it('keeps the client-to-server direction open after the server half-closes', async () => {
    let serverGot = '';
    const server = servers.track(
      await startTcpServer((s) => {
        s.end('bye');
        s.on('data', (c: Buffer) => (serverGot += c.toString()));
      }),
    );
    const p = servers.track(await startProxy());
    const { client } = await socksConnect(p.port, '127.0.0.1', server.port);
    expect((await client.read(3)).toString()).toBe('bye');
    await client.waitEnd();
    client.write('still talking');
    client.socket.end();
    await eventually(() => serverGot === 'still talking', 3_000, 'server received the late request bytes');
  });

  it('a raw net client sees EOF only after all bytes', async () => {
    const server = servers.track(await startTcpServer(answerAfterEof(300_000)));
    const p = servers.track(await startProxy());
    const s = connect({ port: p.port, host: '127.0.0.1', allowHalfOpen: true });
    await once(s, 'connect');
    s.write(Buffer.from([5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, server.port >> 8, server.port & 0xff]));
    let total = 0;
    s.on('data', (c: Buffer) => (total += c.length));
    s.end('x');
    await once(s, 'end');
    expect(total).toBe(2 + 10 + 300_000);
    s.destroy();
  });
});
