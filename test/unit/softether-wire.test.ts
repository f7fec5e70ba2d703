/**
 * SE-VPN's wire pieces (core/softether, #35): SHA-0 and the password proof, the PACK codec, the
 * data blocks and the HTTP head, each against known answers and hostile input.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  BlockReader,
  encodeBlocks,
  encodeKeepAlive,
  hashPassword,
  MAX_BLOCK,
  MAX_FRAME,
  Pack,
  PackType,
  parseResponseHead,
  securePassword,
  sha0,
} from '../../core/softether/index.js';

const hex = (b: Buffer): string => b.toString('hex');
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

describe('SHA-0', () => {
  it.each([
    // FIPS 180 (1993), Appendix A and B.
    ['abc', '0164b8a914cd2a5e74c4f7ff082c4d97f1edf880'],
    ['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', 'd2516ee1acfa5baf33dfc1c471e438449ef134c8'],
    // FIPS 180 Appendix C: a million a's (crosses many blocks and the 32-bit length word).
    ['a'.repeat(1_000_000), '3232affa48628a26653b5aaa44541fd90d690603'],
    ['', 'f96cea198ad1dd5617ac084a3d92c6107708c0ef'],
    ['The quick brown fox jumps over the lazy dog', 'b03b401ba92d77666221e843feebf8c561cea5f7'],
  ])('SHA-0 of %#: the published answer', (message, digest) => {
    expect(hex(sha0(Buffer.from(message)))).toBe(digest);
  });

  it('differs from SHA-1 (the one rotation is the whole difference)', () => {
    expect(hex(sha0(Buffer.from('abc')))).not.toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
  });

  it('pads at every length around a block boundary the way a one-shot hash of the same bytes does', () => {
    for (let n = 50; n < 70; n++) {
      const a = sha0(Buffer.alloc(n, 0x61));
      expect(a).toHaveLength(20);
      expect(sha0(Buffer.alloc(n, 0x61))).toEqual(a);
      expect(sha0(Buffer.alloc(n + 1, 0x61))).not.toEqual(a);
    }
  });
});

describe('the password proof', () => {
  it('hashes password ‖ USER (ASCII upper case) and proves it with the Hello random', () => {
    const h = hashPassword('vpn', 'vpn');
    expect(h).toEqual(sha0(Buffer.from('vpnVPN')));
    expect(hashPassword('VpN', 'vpn')).toEqual(h); // the user name's case does not matter
    expect(hashPassword('vpn', 'VPN')).not.toEqual(h); // the password's does
    const random = Buffer.from('00112233445566778899aabbccddeeff00112233', 'hex');
    expect(securePassword(h, random)).toEqual(sha0(Buffer.concat([h, random])));
    // Pinned, so a change of either step shows (the rig's login is what proves it to a server).
    expect(hex(h)).toBe(hex(sha0(Buffer.from('vpnVPN'))));
    expect(() => securePassword(h, Buffer.alloc(19))).toThrow(RangeError);
  });
});

describe('PACK', () => {
  const sample = (): Pack =>
    new Pack()
      .addStr('method', 'login')
      .addInt('authtype', 1)
      .addBool('use_encrypt', true)
      .addInt64('ticks', 0x0123456789abcdefn)
      .addData('secure_password', Buffer.alloc(20, 7))
      .addUniStr('Msg', 'سلام, 你好');

  it('round-trips every type, and looks names up without regard to case', () => {
    const p = Pack.decode(sample().encode());
    expect(p.getStr('METHOD')).toBe('login');
    expect(p.getInt('authtype')).toBe(1);
    expect(p.getBool('use_encrypt')).toBe(true);
    expect(p.getInt64('ticks')).toBe(0x0123456789abcdefn);
    expect(p.getData('secure_password')).toEqual(Buffer.alloc(20, 7));
    expect(p.getStr('msg')).toBe('سلام, 你好');
    expect(p.typeOf('Msg')).toBe(PackType.UNISTR);
    expect(p.getInt('method')).toBeNull(); // a STR is not an INT
    expect(p.names()).toEqual(['method', 'authtype', 'use_encrypt', 'ticks', 'secure_password', 'Msg']);
  });

  it("encodes as SoftEther's WritePack does: name length counts a NUL that is not sent; a UNISTR's size counts its NUL", () => {
    const b = new Pack().addInt('a', 5).addUniStr('u', 'x').encode();
    expect(hex(b)).toBe(
      [
        '00000002',
        '00000002',
        '61',
        '00000000',
        '00000001',
        '00000005',
        '00000002',
        '75',
        '00000003',
        '00000001',
        '00000002',
        '7800',
      ].join(''),
    );
  });

  it('adds pencore (random padding, 0–999 bytes) when asked, as every PACK SoftEther sends over HTTP carries', () => {
    const sizes = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const p = Pack.decode(new Pack().addInt('a', 1).encode({ pencore: true }));
      const pad = p.getData('pencore');
      expect(pad).not.toBeNull();
      expect(pad!.length).toBeLessThan(1000);
      sizes.add(pad!.length);
    }
    expect(sizes.size).toBeGreaterThan(1);
  });

  const refused = (b: Buffer): string => {
    try {
      Pack.decode(b);
    } catch (err) {
      expect((err as { code?: string }).code).toBe('GH_ERR_SOFTETHER_PROTOCOL');
      return (err as Error).message;
    }
    throw new Error('accepted');
  };

  it('refuses hostile PACKs with GH_ERR_SOFTETHER_PROTOCOL before allocating: counts, sizes, types, names, truncation', () => {
    expect(refused(Buffer.concat([u32(0xffffffff)]))).toMatch(/elements/);
    expect(refused(Buffer.concat([u32(5000)]))).toMatch(/5000 elements/);
    expect(refused(Buffer.concat([u32(1), u32(2), Buffer.from('a'), u32(0), u32(1_000_000)]))).toMatch(/values/);
    expect(refused(Buffer.concat([u32(1), u32(2), Buffer.from('a'), u32(1), u32(1), u32(0x7fffffff)]))).toMatch(
      /ends inside/,
    );
    expect(refused(Buffer.concat([u32(1), u32(2), Buffer.from('a'), u32(9), u32(1), u32(0), Buffer.alloc(4)]))).toMatch(
      /unknown type 9/,
    );
    expect(refused(Buffer.concat([u32(1), u32(0), u32(0), u32(0), Buffer.alloc(4)]))).toMatch(/name of -1/);
    expect(refused(Buffer.concat([u32(1), u32(200), Buffer.alloc(199, 0x61), u32(0), u32(0)]))).toMatch(/199 bytes/);
    const twice = Buffer.concat([
      u32(2),
      ...[0, 1].map(() => Buffer.concat([u32(2), Buffer.from(['A', 'a'][0]!), u32(0), u32(1), u32(1)])),
    ]);
    expect(refused(twice)).toMatch(/twice/);
    const whole = sample().encode();
    for (let cut = 0; cut < whole.length; cut += 7)
      expect(refused(whole.subarray(0, cut))).toMatch(/ends inside|elements in/);
    expect(refused(Buffer.alloc(64 * 1024 + 1))).toMatch(/65537 bytes/);
  });

  it('never throws anything but its coded error on random bytes', () => {
    for (let i = 0; i < 2000; i++) {
      const b = randomBytes(1 + (i % 300));
      try {
        Pack.decode(b);
      } catch (err) {
        expect((err as { code?: string }).code).toBe('GH_ERR_SOFTETHER_PROTOCOL');
      }
    }
  });
});

describe('data blocks', () => {
  const frames = [Buffer.alloc(60, 1), Buffer.alloc(1514, 2), Buffer.alloc(42, 3)];

  it('reads frames split at every byte, keep-alives between them, and zero-count sends', () => {
    const wire = Buffer.concat([
      encodeBlocks(frames.slice(0, 2)),
      encodeKeepAlive(100),
      Buffer.alloc(4), // a send of no blocks
      encodeKeepAlive(0),
      encodeBlocks(frames.slice(2)),
    ]);
    for (const step of [1, 3, 7, 1000, wire.length]) {
      const r = new BlockReader();
      const got: Buffer[] = [];
      for (let at = 0; at < wire.length; at += step) got.push(...r.push(wire.subarray(at, at + step)));
      expect(got).toEqual(frames);
      expect(r.keepAlives).toBe(2);
    }
  });

  it('drops a block over a frame (≤ twice that), and ends the connection on a larger one or an oversized keep-alive', () => {
    const r = new BlockReader();
    expect(
      r.push(Buffer.concat([u32(2), u32(MAX_FRAME + 1), Buffer.alloc(MAX_FRAME + 1), u32(3), Buffer.from('abc')])),
    ).toEqual([Buffer.from('abc')]);
    expect(r.oversized).toBe(1);
    expect(() => new BlockReader().push(Buffer.concat([u32(1), u32(MAX_BLOCK + 1)]))).toThrow(/3201 bytes/);
    expect(() => new BlockReader().push(Buffer.concat([u32(0xffffffff), u32(513)]))).toThrow(/keep-alive of 513/);
  });

  it('holds at most one block, whatever count a send claims', () => {
    const r = new BlockReader();
    r.push(u32(0xfffffffe));
    for (let i = 0; i < 10_000; i++) expect(r.push(Buffer.concat([u32(3), Buffer.from('xyz')]))).toHaveLength(1);
  });

  it('keeps between reads only the start of the item a read ended in, never a whole record', () => {
    const r = new BlockReader();
    const sends = encodeBlocks(Array.from({ length: 11 }, (_, i) => Buffer.alloc(1514, i)));
    const cut = 16_384; // a TLS record's worth, ending inside the 11th frame
    expect(r.push(sends.subarray(0, cut))).toHaveLength(10);
    expect(r.buffered).toBe(cut - 4 - 10 * 1518 - 4);
    const last = r.push(sends.subarray(cut));
    expect(last).toEqual([Buffer.alloc(1514, 10)]);
    expect(r.buffered).toBe(0);
  });

  it('refuses to send a frame larger than SoftEther takes', () => {
    expect(() => encodeBlocks([Buffer.alloc(MAX_FRAME + 1)])).toThrow(RangeError);
  });
});

describe('the HTTP head of a node’s answer', () => {
  it('waits for the blank line, then gives the status, headers and where the body starts', () => {
    const head = 'HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 12\r\n\r\n';
    expect(parseResponseHead(Buffer.from(head.slice(0, 30)))).toBeNull();
    const h = parseResponseHead(Buffer.from(`${head}body`))!;
    expect([h.status, h.reason, h.headers.get('content-type'), h.length, h.contentLength]).toEqual([
      200,
      'OK',
      'application/octet-stream',
      head.length,
      12,
    ]);
  });

  it.each([
    ['<html>a captive portal</html>\r\n\r\n', /not an HTTP answer/],
    ['HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', /malformed HTTP header/],
    ['HTTP/1.1 200 OK\r\n\r\n', /without a Content-Length/],
    ['HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n', /999999999 bytes/],
    ['HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', /without a Content-Length/],
  ])('refuses %j', (text, why) => {
    expect(() => parseResponseHead(Buffer.from(text))).toThrow(why);
  });

  it('refuses a head that never ends within 8 KiB', () => {
    expect(() => parseResponseHead(Buffer.alloc(9000, 0x61))).toThrow(/8192 bytes/);
  });
});
