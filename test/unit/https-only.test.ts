/**
 * privacy.httpsOnly's judge of a client's first bytes (core/proxy/https-only.ts, #59): a TLS
 * ClientHello passes, anything else is refused, and only what could still become a ClientHello is
 * waited for. The ClientHellos are real ones, written by Node's TLS client.
 */
import { connect as tlsConnect } from 'node:tls';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { judgeFirstBytes } from '../../core/proxy/https-only.js';

/** The first bytes a real TLS client writes (TLS 1.2 and 1.3 capable, with SNI). */
async function realClientHello(): Promise<Buffer> {
  const server = createServer();
  const got = new Promise<Buffer>((resolve) =>
    server.once('connection', (s) => s.once('data', (d: Buffer) => (resolve(d), s.destroy()))),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const c = tlsConnect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername: 'example.org' });
  c.on('error', () => {});
  const hello = await got;
  c.destroy();
  server.close();
  return hello;
}

describe('HTTPS only: TLS ClientHello or refused (#59)', () => {
  it('passes a real ClientHello, and waits while its first five bytes are still arriving', async () => {
    const hello = await realClientHello();
    expect(judgeFirstBytes(hello)).toBe('tls');
    for (let n = 0; n < 6; n++) expect(judgeFirstBytes(hello.subarray(0, n)), `${n} bytes`).toBe('undecided');
    expect(judgeFirstBytes(hello.subarray(0, 6))).toBe('tls');
  });

  it('refuses plain HTTP of any method, registered or not, with the page', () => {
    for (const line of [
      'GET / HTTP/1.1',
      'REPORT /cal HTTP/1.1',
      'MKCOL /d HTTP/1.1',
      'PRI * HTTP/2.0',
      'GE',
      'get / HTTP/1.0',
    ])
      expect(judgeFirstBytes(Buffer.from(line)), line).toBe('http');
  });

  it('refuses every other protocol, and a TLS record that is not a ClientHello, at once', () => {
    for (const b of [
      Buffer.from('SSH-2.0-OpenSSH_9.2\r\n'),
      Buffer.from([0x05, 0x01, 0x00]), // a SOCKS5 greeting
      Buffer.from([0x16, 0x02]), // not TLS 3.x
      Buffer.from([0x16, 0x03, 0x09]), // no such version
      Buffer.from([0x16, 0x03, 0x01, 0x00, 0x30, 0x02]), // a ServerHello
      Buffer.from([0x17, 0x03, 0x03, 0x00, 0x10, 0x01]), // application data
      Buffer.from([0x00, 0x2a, 0x38]), // OpenVPN over TCP
    ])
      expect(judgeFirstBytes(b), b.toString('hex')).toBe('other');
  });
});
