import { createServer, type AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { sniffName } from '../../core/router/index.js';
import { clientHello } from '../helpers/tls-hello.js';

/** The first bytes a real TLS client (Node's OpenSSL) sends for `servername`. */
async function realHello(servername: string): Promise<Buffer> {
  return new Promise((resolve) => {
    const server = createServer((s) => {
      s.once('data', (b: Buffer) => {
        resolve(b);
        s.destroy();
        server.close();
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const t = tlsConnect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', servername });
      t.on('error', () => {});
    });
  });
}

describe('the name in a connection’s first bytes (#33)', () => {
  it('reads the SNI of a real ClientHello, and of a minimal one; a hello cut short asks for more', async () => {
    const real = await realHello('www.Example.ir');
    expect(sniffName(real)).toEqual({ name: 'www.example.ir' });
    expect(sniffName(clientHello('a.b.test'))).toEqual({ name: 'a.b.test' });
    expect(sniffName(real.subarray(0, 40))).toEqual({ need: 'more' });
  });

  it('reads an HTTP request’s Host (port dropped), and asks for more until the Host line ends', () => {
    expect(sniffName(Buffer.from('GET / HTTP/1.1\r\nAccept: */*\r\nHost: cdn.test:8080\r\n\r\n'))).toEqual({
      name: 'cdn.test',
    });
    expect(sniffName(Buffer.from('POST /x HTTP/1.1\r\nHost: cdn.te'))).toEqual({ need: 'more' });
    expect(sniffName(Buffer.from('GET'))).toEqual({ need: 'more' });
  });

  it('names nothing for other protocols, IP literals, bad names and lying lengths', () => {
    expect(sniffName(Buffer.from('SSH-2.0-OpenSSH_9.6\r\n'))).toBeNull();
    expect(sniffName(Buffer.from([0x00, 0x01, 0x02]))).toBeNull();
    expect(sniffName(Buffer.from('GET / HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n'))).toBeNull();
    expect(sniffName(clientHello('bad name!'))).toBeNull();
    const lying = clientHello('x.test');
    lying.writeUInt16BE(0xffff, lying.length - 'x.test'.length - 2); // the name's length past the end
    expect(sniffName(lying)).toBeNull();
  });
});
