import { ErrorCodes, GatehopError, type DataKeyBytes, type NativeDataKeySpec } from '../common/index.js';
import type { DirectionalKeys } from './keys.js';

/** Ciphers both OpenSSL (Node) and BoringSSL (Electron) provide; BoringSSL has no BF/CAST/DES-CBC. */
export interface CipherSpec {
  /** OpenSSL's name. */
  openssl: string;
  keyLen: number;
  aead: boolean;
}

export const CIPHERS: Record<string, CipherSpec> = {
  'AES-128-CBC': { openssl: 'aes-128-cbc', keyLen: 16, aead: false },
  'AES-192-CBC': { openssl: 'aes-192-cbc', keyLen: 24, aead: false },
  'AES-256-CBC': { openssl: 'aes-256-cbc', keyLen: 32, aead: false },
  'AES-128-GCM': { openssl: 'aes-128-gcm', keyLen: 16, aead: true },
  'AES-256-GCM': { openssl: 'aes-256-gcm', keyLen: 32, aead: true },
  'CHACHA20-POLY1305': { openssl: 'chacha20-poly1305', keyLen: 32, aead: true },
};

export const DIGESTS: Record<string, { openssl: string; len: number }> = {
  SHA1: { openssl: 'sha1', len: 20 },
  SHA256: { openssl: 'sha256', len: 32 },
  SHA512: { openssl: 'sha512', len: 64 },
};

export const SUPPORTED_CIPHERS = Object.keys(CIPHERS);

/** What seal() and open() key with: the key's bytes (core/common's DataKeyBytes) and how to use them. */
export interface DataKeyMaterial extends DataKeyBytes {
  cipher: CipherSpec;
  digest: { openssl: string; len: number } | null;
  /** The pushed peer-id (P_DATA_V2), or null for P_DATA_V1. */
  peerId: number | null;
}

/** The same key as the native addon reads it. */
export function nativeKeySpec(k: DataKeyMaterial): NativeDataKeySpec {
  return {
    cipher: k.cipher.openssl,
    digest: k.digest?.openssl ?? null,
    keyId: k.keyId,
    peerId: k.peerId ?? -1,
    encKey: k.encKey,
    decKey: k.decKey,
    encHmac: k.encHmac,
    decHmac: k.decHmac,
    encIv: k.encIv,
    decIv: k.decIv,
  };
}

export function keyMaterial(
  cipher: string,
  auth: string | null,
  keys: DirectionalKeys,
  keyId: number,
  peerId: number | null,
): DataKeyMaterial {
  const spec = CIPHERS[cipher.toUpperCase()];
  if (!spec)
    throw new GatehopError(
      ErrorCodes.PROFILE_INVALID,
      `cipher ${cipher} is not supported (have ${SUPPORTED_CIPHERS.join(', ')})`,
    );
  const digest = spec.aead ? null : DIGESTS[(auth ?? 'SHA1').toUpperCase()];
  if (!spec.aead && !digest) throw new GatehopError(ErrorCodes.PROFILE_INVALID, `auth ${auth} is not supported`);
  return {
    cipher: spec,
    digest: digest ?? null,
    keyId,
    peerId,
    encKey: keys.encryptCipher.subarray(0, spec.keyLen),
    decKey: keys.decryptCipher.subarray(0, spec.keyLen),
    encHmac: keys.encryptHmac.subarray(0, digest?.len ?? 0),
    decHmac: keys.decryptHmac.subarray(0, digest?.len ?? 0),
    encIv: keys.encryptHmac.subarray(0, 8),
    decIv: keys.decryptHmac.subarray(0, 8),
  };
}

/**
 * Sealed packets end to end in data: lengths[i] bytes each, each after a [u16 length] record
 * header when sealed for TCP. lengths may be reused by the next seal(): read it before then.
 */
export interface SealedBatch {
  data: Buffer;
  lengths: Uint32Array;
  count: number;
  /** data's used length, record headers included. */
  bytes: number;
}

/** Why open() dropped a packet. */
export type OpenDrop = 'failed' | 'replay';

/** The most sealing adds to a payload: V2 header, SHA-512 HMAC, IV, packet id, a padding block, a TCP record header. */
export const SEAL_OVERHEAD = 4 + 64 + 16 + 4 + 16 + 2;

/**
 * One key's packet crypto, batched (notes §6): the native engine (gatehop-native, contexts keyed
 * once) or the JavaScript one (Node's crypto, an object per packet), the same bytes on the wire.
 */
export interface DataCipher {
  readonly engine: 'native' | 'javascript';
  /** The last packet id sent. */
  readonly sendId: number;
  seal(payloads: readonly Buffer[], tcpFraming: boolean): SealedBatch;
  /** Each packet's payload (a view of the packet, decrypted in place by the native engine), or why it was dropped. */
  open(packets: readonly Buffer[]): Array<Buffer | OpenDrop>;
}
