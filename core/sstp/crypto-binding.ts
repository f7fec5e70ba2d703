/**
 * SSTP's crypto binding ([MS-SSTP] 3.2.5.2): the client proves that the TLS connection and the
 * PPP authentication inside it are the same session. The Call Connected message carries the
 * server's nonce, a hash of the server's certificate and a Compound MAC over the whole message,
 * keyed by the Compound MAC Key derived from the Higher-Layer Authentication Key (HLAK): for
 * MS-CHAPv2, the client's MPPE send key then receive key; for PAP (no keys), 32 zero bytes.
 */
import { createHash, createHmac } from 'node:crypto';

export type BindingHash = 'sha1' | 'sha256';

/** Hash protocol bits of the Crypto Binding Request (CERT_HASH_PROTOCOL_SHA1 / _SHA256). */
export const HASH_SHA1 = 0x01;
export const HASH_SHA256 = 0x02;

const CMK_SEED = Buffer.from('SSTP inner method derived CMK', 'ascii');

/** SHA-256 when the server offers it, else SHA-1; null when it offers neither. */
export function pickBindingHash(bitmask: number): BindingHash | null {
  if (bitmask & HASH_SHA256) return 'sha256';
  if (bitmask & HASH_SHA1) return 'sha1';
  return null;
}

/** The HLAK: 32 bytes, send key then receive key as the client sees them; zeros without keys. */
export function hlakOf(keys: { sendKey: Uint8Array; recvKey: Uint8Array } | null): Buffer {
  return keys ? Buffer.concat([keys.sendKey, keys.recvKey]) : Buffer.alloc(32);
}

/** The certificate hash field: the hash of the DER certificate, zero-padded to 32 bytes (SHA-1 is 20). */
export function certHashField(certDer: Uint8Array, hash: BindingHash): Buffer {
  const out = Buffer.alloc(32);
  out.set(createHash(hash).update(certDer).digest());
  return out;
}

/** CMK = T1 = HMAC(HLAK, seed | LEN (16-bit little-endian) | 0x01); one round gives the whole key. */
export function compoundMacKey(hlak: Uint8Array, hash: BindingHash): Buffer {
  const len = hash === 'sha256' ? 32 : 20;
  return createHmac(hash, hlak)
    .update(CMK_SEED)
    .update(Buffer.from([len & 0xff, len >> 8, 0x01]))
    .digest();
}

/** The Compound MAC over the Call Connected message whose MAC field is still zeros (padded to 32 bytes). */
export function compoundMac(hlak: Uint8Array, callConnectedZeroMac: Uint8Array, hash: BindingHash): Buffer {
  const out = Buffer.alloc(32);
  out.set(createHmac(hash, compoundMacKey(hlak, hash)).update(callConnectedZeroMac).digest());
  return out;
}
