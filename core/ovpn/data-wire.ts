import { Op } from './packet.js';

/** A data packet's header: P_DATA_V1 (opcode and key id), or P_DATA_V2 with the pushed peer-id. */
export function dataHeader(keyId: number, peerId: number | null): Buffer {
  if (peerId === null) return Buffer.from([(Op.DATA_V1 << 3) | keyId]);
  const h = Buffer.allocUnsafe(4);
  h.writeUInt32BE(((((Op.DATA_V2 << 3) | keyId) << 24) | (peerId & 0xffffff)) >>> 0);
  return h;
}

/** Sliding replay window of 64 packet ids (notes §6.4); native/src/data_key.c has its twin. */
export class ReplayWindow {
  #maxSeen = 0;
  #window = 0n; // bit i set: id (maxSeen - i) was seen

  accept(id: number): boolean {
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
