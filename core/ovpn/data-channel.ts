import { createCipheriv, createDecipheriv, createHmac, randomFillSync, timingSafeEqual, type CipherGCMTypes } from 'node:crypto';
import { ErrorCodes, GatehopError } from '../common/index.js';
import type { DirectionalKeys } from './keys.js';
import { Op } from './packet.js';

/** The 16-byte keepalive payload (notes §6.5): sent as data, dropped on receipt. */
export const PING_PAYLOAD = Buffer.from('2a187bf3641eb4cb07ed2d0a981fc748', 'hex');

interface CipherSpec {
  node: string;
  keyLen: number;
  aead: boolean;
  ivLen: number;
}

/** Ciphers both OpenSSL (Node) and BoringSSL (Electron) provide; BoringSSL has no BF/CAST/DES-CBC. */
const CIPHERS: Record<string, CipherSpec> = {
  'AES-128-CBC': { node: 'aes-128-cbc', keyLen: 16, aead: false, ivLen: 16 },
  'AES-192-CBC': { node: 'aes-192-cbc', keyLen: 24, aead: false, ivLen: 16 },
  'AES-256-CBC': { node: 'aes-256-cbc', keyLen: 32, aead: false, ivLen: 16 },
  'AES-128-GCM': { node: 'aes-128-gcm', keyLen: 16, aead: true, ivLen: 12 },
  'AES-256-GCM': { node: 'aes-256-gcm', keyLen: 32, aead: true, ivLen: 12 },
  'CHACHA20-POLY1305': { node: 'chacha20-poly1305', keyLen: 32, aead: true, ivLen: 12 },
};

const DIGESTS: Record<string, { node: string; len: number }> = {
  SHA1: { node: 'sha1', len: 20 },
  SHA256: { node: 'sha256', len: 32 },
  SHA512: { node: 'sha512', len: 64 },
};

export const SUPPORTED_CIPHERS = Object.keys(CIPHERS);

/**
 * Random CBC IVs drawn from a pooled buffer: one CSPRNG call per 256 packets instead of one per
 * packet (a synchronous randomBytes(16) per packet was a fifth of the tunnel's CPU). Each IV is
 * copied by createCipheriv and Buffer.concat before the pool is ever replaced, never reused.
 */
class IvPool {
  #pool = Buffer.alloc(0);
  #at = 0;

  take(n: number): Buffer {
    if (this.#at + n > this.#pool.length) {
      this.#pool = randomFillSync(Buffer.allocUnsafe(4096));
      this.#at = 0;
    }
    const iv = this.#pool.subarray(this.#at, this.#at + n);
    this.#at += n;
    return iv;
  }
}

const ivPool = new IvPool();

export function isSupportedCipher(name: string): boolean {
  return name.toUpperCase() in CIPHERS;
}

export interface DataChannelStats {
  sent: number;
  received: number;
  decryptFailures: number;
  replays: number;
}

/**
 * One key's data channel (key_id 0): CBC + HMAC (encrypt-then-MAC over IV‖ciphertext) or AEAD
 * (tag before ciphertext, nonce = packet id ‖ implicit IV), P_DATA_V1 or V2, packet ids from 1, a
 * 64-wide replay window.
 */
export class DataChannel {
  readonly stats: DataChannelStats = { sent: 0, received: 0, decryptFailures: 0, replays: 0 };
  readonly #spec: CipherSpec;
  readonly #digest: { node: string; len: number } | null;
  readonly #keys: { encKey: Buffer; decKey: Buffer; encHmac: Buffer; decHmac: Buffer; encIv: Buffer; decIv: Buffer };
  #sendId = 0;
  #maxSeen = 0;
  #window = 0n; // bit i set: id (maxSeen - i) was seen

  constructor(
    cipher: string,
    auth: string | null,
    keys: DirectionalKeys,
    private readonly keyId: number,
    private readonly peerId: number | null,
  ) {
    const spec = CIPHERS[cipher.toUpperCase()];
    if (!spec) throw new GatehopError(ErrorCodes.PROFILE_INVALID, `cipher ${cipher} is not supported (have ${SUPPORTED_CIPHERS.join(', ')})`);
    this.#spec = spec;
    const digest = spec.aead ? null : DIGESTS[(auth ?? 'SHA1').toUpperCase()];
    if (!spec.aead && !digest) throw new GatehopError(ErrorCodes.PROFILE_INVALID, `auth ${auth} is not supported`);
    this.#digest = digest ?? null;
    this.#keys = {
      encKey: keys.encryptCipher.subarray(0, spec.keyLen),
      decKey: keys.decryptCipher.subarray(0, spec.keyLen),
      encHmac: keys.encryptHmac.subarray(0, digest?.len ?? 0),
      decHmac: keys.decryptHmac.subarray(0, digest?.len ?? 0),
      encIv: keys.encryptHmac.subarray(0, 8),
      decIv: keys.decryptHmac.subarray(0, 8),
    };
  }

  #header(): Buffer {
    if (this.peerId === null) return Buffer.from([(Op.DATA_V1 << 3) | this.keyId]);
    const h = Buffer.allocUnsafe(4);
    h.writeUInt32BE((((Op.DATA_V2 << 3) | this.keyId) << 24) | (this.peerId & 0xffffff));
    return h;
  }

  encrypt(payload: Buffer): Buffer {
    const pid = Buffer.allocUnsafe(4);
    pid.writeUInt32BE(++this.#sendId >>> 0);
    this.stats.sent++;
    const header = this.#header();
    if (this.#spec.aead) {
      const c = createCipheriv(this.#spec.node as CipherGCMTypes, this.#keys.encKey, Buffer.concat([pid, this.#keys.encIv]), { authTagLength: 16 });
      c.setAAD(this.peerId === null ? pid : Buffer.concat([header, pid]));
      const ct = Buffer.concat([c.update(payload), c.final()]);
      return Buffer.concat([header, pid, c.getAuthTag(), ct]);
    }
    const iv = ivPool.take(16);
    const c = createCipheriv(this.#spec.node, this.#keys.encKey, iv);
    const ct = Buffer.concat([c.update(pid), c.update(payload), c.final()]);
    const mac = createHmac(this.#digest!.node, this.#keys.encHmac).update(iv).update(ct).digest();
    return Buffer.concat([header, mac, iv, ct]);
  }

  /** The payload, or null when the packet fails authentication, is malformed or replayed (counted). */
  decrypt(packet: Buffer): Buffer | null {
    const op = packet[0]! >> 3;
    const headLen = op === Op.DATA_V2 ? 4 : 1;
    // The opcode byte is outside the HMAC (CBC, DATA_V1): only a data packet of this key may
    // reach the cipher (found by fuzzing: a key id flipped on the wire still decrypted).
    if ((op !== Op.DATA_V1 && op !== Op.DATA_V2) || (packet[0]! & 7) !== this.keyId) {
      this.stats.decryptFailures++;
      return null;
    }
    try {
      let pid: number;
      let payload: Buffer;
      if (this.#spec.aead) {
        if (packet.length < headLen + 4 + 16) throw new Error('short');
        const pidBuf = packet.subarray(headLen, headLen + 4);
        const tag = packet.subarray(headLen + 4, headLen + 20);
        const d = createDecipheriv(this.#spec.node as CipherGCMTypes, this.#keys.decKey, Buffer.concat([pidBuf, this.#keys.decIv]), { authTagLength: 16 });
        d.setAAD(op === Op.DATA_V2 ? packet.subarray(0, headLen + 4) : pidBuf);
        d.setAuthTag(tag);
        payload = Buffer.concat([d.update(packet.subarray(headLen + 20)), d.final()]);
        pid = pidBuf.readUInt32BE(0);
      } else {
        const hl = this.#digest!.len;
        if (packet.length < headLen + hl + 16 + 16) throw new Error('short');
        const mac = packet.subarray(headLen, headLen + hl);
        const ivct = packet.subarray(headLen + hl);
        const want = createHmac(this.#digest!.node, this.#keys.decHmac).update(ivct).digest();
        if (!timingSafeEqual(mac, want)) throw new Error('hmac');
        const d = createDecipheriv(this.#spec.node, this.#keys.decKey, ivct.subarray(0, 16));
        const plain = Buffer.concat([d.update(ivct.subarray(16)), d.final()]);
        if (plain.length < 4) throw new Error('short');
        pid = plain.readUInt32BE(0);
        payload = plain.subarray(4);
      }
      if (!this.#acceptId(pid)) {
        this.stats.replays++;
        return null;
      }
      this.stats.received++;
      return payload;
    } catch {
      this.stats.decryptFailures++;
      return null;
    }
  }

  /** Sliding replay window of 64 ids (notes §6.4). */
  #acceptId(id: number): boolean {
    if (id === 0) return false;
    if (id > this.#maxSeen) {
      const shift = BigInt(id - this.#maxSeen);
      this.#window = shift >= 64n ? 1n : ((this.#window << shift) | 1n) & 0xffffffffffffffffn;
      this.#maxSeen = id;
      return true;
    }
    const back = BigInt(this.#maxSeen - id);
    if (back >= 64n || (this.#window >> back) & 1n) return false;
    this.#window |= 1n << back;
    return true;
  }
}
