/**
 * MD4 (RFC 1320), for MS-CHAPv2's NT password hash. OpenSSL 3 keeps MD4 in its legacy provider,
 * which Node does not load (and Electron's BoringSSL does not have), so it is written out here.
 * It hashes a password of a few bytes per tunnel; speed does not matter.
 */
const S = [
  [3, 7, 11, 19],
  [3, 5, 9, 13],
  [3, 9, 11, 15],
] as const;
const ROUND2_ORDER = [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];
const ROUND3_ORDER = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];

const rotl = (x: number, n: number): number => ((x << n) | (x >>> (32 - n))) >>> 0;

export function md4(input: Uint8Array): Buffer {
  const bitLen = input.length * 8;
  // Padding: 0x80, zeros to 56 mod 64, then the bit length as 64-bit little-endian.
  const padded = Buffer.alloc(((input.length + 8) >> 6) * 64 + 64);
  padded.set(input);
  padded[input.length] = 0x80;
  padded.writeUInt32LE(bitLen >>> 0, padded.length - 8);
  padded.writeUInt32LE(Math.floor(bitLen / 0x100000000), padded.length - 4);
  let a = 0x67452301;
  let b = 0xefcdab89;
  let c = 0x98badcfe;
  let d = 0x10325476;
  const x = new Array<number>(16);
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) x[i] = padded.readUInt32LE(off + 4 * i);
    const [aa, bb, cc, dd] = [a, b, c, d];
    for (let i = 0; i < 16; i++) {
      const f = (b & c) | (~b & d);
      const t = rotl((a + f + x[i]!) >>> 0, S[0][i % 4]!);
      [a, b, c, d] = [d, t, b, c];
    }
    for (let i = 0; i < 16; i++) {
      const g = (b & c) | (b & d) | (c & d);
      const t = rotl((a + g + x[ROUND2_ORDER[i]!]! + 0x5a827999) >>> 0, S[1][i % 4]!);
      [a, b, c, d] = [d, t, b, c];
    }
    for (let i = 0; i < 16; i++) {
      const h = b ^ c ^ d;
      const t = rotl((a + h + x[ROUND3_ORDER[i]!]! + 0x6ed9eba1) >>> 0, S[2][i % 4]!);
      [a, b, c, d] = [d, t, b, c];
    }
    a = (a + aa) >>> 0;
    b = (b + bb) >>> 0;
    c = (c + cc) >>> 0;
    d = (d + dd) >>> 0;
  }
  const out = Buffer.alloc(16);
  out.writeUInt32LE(a, 0);
  out.writeUInt32LE(b, 4);
  out.writeUInt32LE(c, 8);
  out.writeUInt32LE(d, 12);
  return out;
}
