import type { NativeDataKey, NativeModule } from '../common/index.js';
import {
  nativeKeySpec,
  SEAL_OVERHEAD,
  type DataCipher,
  type DataKeyMaterial,
  type OpenDrop,
  type SealedBatch,
} from './data-cipher.js';

/**
 * The data channel's crypto in gatehop-native (native/src/data_key.c): cipher and HMAC contexts
 * keyed once, a whole batch sealed or opened in one call, packets opened in place.
 */
export class NativeDataCipher implements DataCipher {
  readonly engine = 'native';
  readonly #native: NativeModule;
  readonly #key: NativeDataKey;
  #sent = 0;
  #lengths = new Uint32Array(64);
  #results = new Int32Array(128);

  constructor(native: NativeModule, k: DataKeyMaterial) {
    this.#native = native;
    this.#key = native.dataKeyOpen(nativeKeySpec(k));
  }

  get sendId(): number {
    return this.#sent;
  }

  seal(payloads: readonly Buffer[], tcpFraming: boolean): SealedBatch {
    const count = payloads.length;
    if (this.#lengths.length < count) this.#lengths = new Uint32Array(Math.max(count, this.#lengths.length * 2));
    let bound = 0;
    for (const p of payloads) bound += p.length + SEAL_OVERHEAD;
    // A new buffer per batch: dgram and the TCP socket keep a reference until the kernel has it.
    const data = Buffer.allocUnsafe(bound);
    const bytes = this.#native.dataSeal(this.#key, payloads, data, this.#lengths, tcpFraming);
    this.#sent = (this.#sent + count) >>> 0;
    return { data, lengths: this.#lengths, count, bytes };
  }

  open(packets: readonly Buffer[]): Array<Buffer | OpenDrop> {
    const count = packets.length;
    if (this.#results.length < count * 2) this.#results = new Int32Array(Math.max(count * 2, this.#results.length * 2));
    const r = this.#results;
    this.#native.dataOpen(this.#key, packets, r);
    const out = new Array<Buffer | OpenDrop>(count);
    for (let i = 0; i < count; i++) {
      const len = r[2 * i + 1]!;
      out[i] = len >= 0 ? packets[i]!.subarray(r[2 * i], r[2 * i]! + len) : len === -2 ? 'replay' : 'failed';
    }
    return out;
  }
}
