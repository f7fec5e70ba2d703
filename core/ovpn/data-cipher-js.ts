import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  randomFillSync,
  timingSafeEqual,
  type CipherGCMTypes,
} from 'node:crypto';
import { type DataCipher, type DataKeyMaterial, type OpenDrop, type SealedBatch } from './data-cipher.js';
import { dataHeader, ReplayWindow } from './data-wire.js';
import { Op } from './packet.js';

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

/**
 * The data channel's crypto with Node's crypto API: the fallback where gatehop-native is absent.
 * Node has no reusable cipher context, so every packet makes its cipher (and HMAC) object.
 */
export class JsDataCipher implements DataCipher {
  readonly engine = 'javascript';
  readonly #k: DataKeyMaterial;
  readonly #header: Buffer;
  readonly #replay = new ReplayWindow();
  #sendId = 0;

  constructor(k: DataKeyMaterial) {
    this.#k = k;
    this.#header = dataHeader(k.keyId, k.peerId);
  }

  get sendId(): number {
    return this.#sendId;
  }

  seal(payloads: readonly Buffer[], tcpFraming: boolean): SealedBatch {
    const parts: Buffer[] = [];
    const lengths = new Uint32Array(payloads.length);
    payloads.forEach((p, i) => {
      const packet = this.#sealOne(p);
      lengths[i] = packet.length;
      if (tcpFraming) {
        const len = Buffer.allocUnsafe(2);
        len.writeUInt16BE(packet.length);
        parts.push(len);
      }
      parts.push(packet);
    });
    const data = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    return { data, lengths, count: payloads.length, bytes: data.length };
  }

  #sealOne(payload: Buffer): Buffer {
    const pid = Buffer.allocUnsafe(4);
    pid.writeUInt32BE(++this.#sendId >>> 0);
    const k = this.#k;
    if (k.cipher.aead) {
      const c = createCipheriv(k.cipher.openssl as CipherGCMTypes, k.encKey, Buffer.concat([pid, k.encIv]), {
        authTagLength: 16,
      });
      c.setAAD(k.peerId === null ? pid : Buffer.concat([this.#header, pid]));
      const ct = Buffer.concat([c.update(payload), c.final()]);
      return Buffer.concat([this.#header, pid, c.getAuthTag(), ct]);
    }
    const iv = ivPool.take(16);
    const c = createCipheriv(k.cipher.openssl, k.encKey, iv);
    const ct = Buffer.concat([c.update(pid), c.update(payload), c.final()]);
    const mac = createHmac(k.digest!.openssl, k.encHmac).update(iv).update(ct).digest();
    return Buffer.concat([this.#header, mac, iv, ct]);
  }

  open(packets: readonly Buffer[]): Array<Buffer | OpenDrop> {
    return packets.map((p) => this.#openOne(p));
  }

  #openOne(packet: Buffer): Buffer | OpenDrop {
    const k = this.#k;
    const op = packet[0]! >> 3;
    const headLen = op === Op.DATA_V2 ? 4 : 1;
    // The opcode byte is outside the HMAC (CBC, DATA_V1): only a data packet of this key may
    // reach the cipher (found by fuzzing: a key id flipped on the wire still decrypted).
    if (packet.length === 0 || (op !== Op.DATA_V1 && op !== Op.DATA_V2) || (packet[0]! & 7) !== k.keyId)
      return 'failed';
    let pid: number;
    let payload: Buffer;
    try {
      if (k.cipher.aead) {
        if (packet.length < headLen + 4 + 16) return 'failed';
        const pidBuf = packet.subarray(headLen, headLen + 4);
        const d = createDecipheriv(k.cipher.openssl as CipherGCMTypes, k.decKey, Buffer.concat([pidBuf, k.decIv]), {
          authTagLength: 16,
        });
        d.setAAD(op === Op.DATA_V2 ? packet.subarray(0, headLen + 4) : pidBuf);
        d.setAuthTag(packet.subarray(headLen + 4, headLen + 20));
        payload = Buffer.concat([d.update(packet.subarray(headLen + 20)), d.final()]);
        pid = pidBuf.readUInt32BE(0);
      } else {
        const hl = k.digest!.len;
        if (packet.length < headLen + hl + 16 + 16) return 'failed';
        const ivct = packet.subarray(headLen + hl);
        const want = createHmac(k.digest!.openssl, k.decHmac).update(ivct).digest();
        if (!timingSafeEqual(packet.subarray(headLen, headLen + hl), want)) return 'failed';
        const d = createDecipheriv(k.cipher.openssl, k.decKey, ivct.subarray(0, 16));
        const plain = Buffer.concat([d.update(ivct.subarray(16)), d.final()]);
        if (plain.length < 4) return 'failed';
        pid = plain.readUInt32BE(0);
        payload = plain.subarray(4);
      }
    } catch {
      return 'failed'; // a bad tag or padding: OpenSSL's error is the verdict
    }
    return this.#replay.accept(pid) ? payload : 'replay';
  }
}
