import { createHmac } from 'node:crypto';

/** P_hash(K, seed) from RFC 2246 §5. */
function pHash(alg: 'md5' | 'sha1', secret: Buffer, seed: Buffer, n: number): Buffer {
  const out: Buffer[] = [];
  let a = seed;
  let size = 0;
  while (size < n) {
    a = createHmac(alg, secret).update(a).digest();
    const block = createHmac(alg, secret).update(a).update(seed).digest();
    out.push(block);
    size += block.length;
  }
  return Buffer.concat(out).subarray(0, n);
}

/** The TLS 1.0 PRF: P_MD5(S1, seed) XOR P_SHA1(S2, seed), halves sharing the middle byte when odd. */
export function tls1Prf(secret: Buffer, seed: Buffer, n: number): Buffer {
  const half = Math.ceil(secret.length / 2);
  const s1 = secret.subarray(0, half);
  const s2 = secret.subarray(secret.length - half);
  const md5 = pHash('md5', s1, seed, n);
  const sha1 = pHash('sha1', s2, seed, n);
  for (let i = 0; i < n; i++) md5[i] = md5[i]! ^ sha1[i]!;
  return md5;
}

/** OpenVPN's key2 block via its PRF (notes §4.5), the only method SoftEther knows. */
export function openvpnPrfKeys(p: {
  preMaster: Buffer;
  clientRandom1: Buffer;
  serverRandom1: Buffer;
  clientRandom2: Buffer;
  serverRandom2: Buffer;
  clientSessionId: Buffer;
  serverSessionId: Buffer;
}): Buffer {
  const master = tls1Prf(
    p.preMaster,
    Buffer.concat([Buffer.from('OpenVPN master secret'), p.clientRandom1, p.serverRandom1]),
    48,
  );
  return tls1Prf(
    master,
    Buffer.concat([
      Buffer.from('OpenVPN key expansion'),
      p.clientRandom2,
      p.serverRandom2,
      p.clientSessionId,
      p.serverSessionId,
    ]),
    256,
  );
}

/** The client's view of key2 (notes §4.4): encrypt with keys[0], decrypt with keys[1]. */
export interface DirectionalKeys {
  encryptCipher: Buffer;
  encryptHmac: Buffer;
  decryptCipher: Buffer;
  decryptHmac: Buffer;
}

export function sliceKey2(key2: Buffer): DirectionalKeys {
  return {
    encryptCipher: key2.subarray(0, 64),
    encryptHmac: key2.subarray(64, 128),
    decryptCipher: key2.subarray(128, 192),
    decryptHmac: key2.subarray(192, 256),
  };
}
