/**
 * SHA-0 (FIPS 180, 1993): SHA-1 without the one-bit rotation in the message schedule. SoftEther
 * hashes passwords with it (src/Mayaqua/Encrypt.c `Sha0`, used by `HashPassword` and
 * `SecurePassword`); Node's crypto has no SHA-0. Only ever applied to short login inputs, so a
 * plain implementation is enough.
 */
export function sha0(data: Buffer): Buffer {
  const bitLength = data.length * 8;
  // The message, a 1 bit, zeros to 56 mod 64, and the 64-bit length.
  const padded = Buffer.alloc(Math.ceil((data.length + 9) / 64) * 64);
  data.copy(padded);
  padded[data.length] = 0x80;
  padded.writeUInt32BE(Math.floor(bitLength / 2 ** 32), padded.length - 8);
  padded.writeUInt32BE(bitLength >>> 0, padded.length - 4);

  let h0 = 0x67452301;
  let h1 = 0xefcdab89;
  let h2 = 0x98badcfe;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0;
  const w = new Uint32Array(80);
  for (let at = 0; at < padded.length; at += 64) {
    for (let i = 0; i < 16; i++) w[i] = padded.readUInt32BE(at + i * 4);
    // SHA-1 rotates this by one bit; SHA-0 does not.
    for (let i = 16; i < 80; i++) w[i] = w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!;
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    for (let i = 0; i < 80; i++) {
      let f: number;
      let k: number;
      if (i < 20) {
        f = (b & c) | (~b & d);
        k = 0x5a827999;
      } else if (i < 40) {
        f = b ^ c ^ d;
        k = 0x6ed9eba1;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8f1bbcdc;
      } else {
        f = b ^ c ^ d;
        k = 0xca62c1d6;
      }
      const t = (rotl(a, 5) + f + e + k + w[i]!) >>> 0;
      e = d;
      d = c;
      c = rotl(b, 30);
      b = a;
      a = t;
    }
    h0 = (h0 + a) >>> 0;
    h1 = (h1 + b) >>> 0;
    h2 = (h2 + c) >>> 0;
    h3 = (h3 + d) >>> 0;
    h4 = (h4 + e) >>> 0;
  }
  const out = Buffer.alloc(20);
  [h0, h1, h2, h3, h4].forEach((h, i) => out.writeUInt32BE(h, i * 4));
  return out;
}

function rotl(x: number, n: number): number {
  return ((x << n) | (x >>> (32 - n))) >>> 0;
}
