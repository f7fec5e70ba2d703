import { createServer, type AddressInfo, type Socket } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  dialThroughUpstream,
  encodeSocksAddress,
  ipv6ToBytes,
  parseSocks5Udp,
  parseSocksAddress,
  parseUpstreamUrl,
  socks5UdpHeader,
} from '../../core/reach/index.js';
import { socks5Codec } from '../../core/proxy/index.js';

describe('one SOCKS5 address codec for both directions (#34 item 6)', () => {
  it.each([
    ['::ffff:1.2.3.4', [1, 1, 2, 3, 4]],
    ['::FFFF:10.0.0.1', [1, 10, 0, 0, 1]],
    ['1.2.3.4', [1, 1, 2, 3, 4]],
  ])('%s goes as the IPv4 address it is', (host, head) => {
    expect([...encodeSocksAddress(host, 0x1234)]).toEqual([...head, 0x12, 0x34]);
  });

  it('an IPv6 literal with a dotted IPv4 tail keeps its bytes (the client copy read "1.2.3.4" as the hex word 1)', () => {
    expect(ipv6ToBytes('64:ff9b::1.2.3.4').toString('hex')).toBe('0064ff9b000000000000000001020304');
    const enc = encodeSocksAddress('64:ff9b::1.2.3.4', 53);
    expect(enc[0]).toBe(4);
    expect(parseSocksAddress(enc, 0)).toMatchObject({ kind: 'ok', value: { host: '64:ff9b::102:304', port: 53 } });
  });

  it('the client UDP header and the server parser agree on every address (property)', () => {
    const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'));
    const v6 = fc.ipV6();
    const name = fc.domain();
    fc.assert(
      fc.property(fc.oneof(v4, v6, name), fc.nat(65535), (host, port) => {
        const header = socks5UdpHeader(host, port);
        const server = socks5Codec.parseUdpHeader(Buffer.concat([header, Buffer.from('x')]));
        expect(server.kind).toBe('ok');
        const back = parseSocks5Udp(Buffer.concat([header, Buffer.from('x')]))!;
        expect(back.port).toBe(port);
        expect(back.data.toString()).toBe('x');
        if (server.kind === 'ok') expect(server.value.target.host).toBe(back.host);
        // The same bytes the server writes for the same address.
        expect(socks5Codec.encodeUdpHeader(host, port).equals(header)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('dialling a mapped address through a real SOCKS5 upstream sends it as IPv4 (ATYP 1)', async () => {
    let request: Buffer | null = null;
    const server = createServer((s: Socket) => {
      let stage = 0;
      s.on('data', (d: Buffer) => {
        if (stage++ === 0) return void s.write(Buffer.from([5, 0]));
        request = d;
        s.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 80]));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const up = parseUpstreamUrl(`socks5://127.0.0.1:${port}`);
      const sock = await dialThroughUpstream(up, '::ffff:198.51.100.7', 443, { timeoutMs: 5_000 });
      sock.destroy();
      expect([...request!]).toEqual([5, 1, 0, 1, 198, 51, 100, 7, 0x01, 0xbb]);
    } finally {
      server.close();
    }
  });
});
