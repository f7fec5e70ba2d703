import { getSystemErrorName } from 'node:util';
import type { NativeModule, NativeUdpSocket } from '../common/index.js';

/** recvmmsg reads at most this many datagrams per call (native/src/udp_socket.c BATCH). */
const BATCH = 64;
/** Datagram i of a read lies at i × SLOT in the receive buffer (native/src/udp_socket.c SLOT). */
const SLOT = 4096;

/**
 * The UDP carrier in gatehop-native: one recvmmsg and one call into JavaScript per batch of
 * datagrams instead of one of each per datagram (Node's dgram), sendmmsg for a sealed batch.
 * Datagrams are read into one receive buffer of this carrier's, again and again: those handed to
 * onDatagrams are views into it, valid within the call only (TunnelLink.onPackets).
 */
export class NativeUdpCarrier {
  readonly #native: NativeModule;
  readonly #socket: NativeUdpSocket;
  readonly #lengths = new Uint32Array(BATCH);
  readonly #recv = Buffer.allocUnsafeSlow(BATCH * SLOT);
  readonly #one = new Uint32Array(1);

  /** Throws (GATEHOP_NATIVE_*) when the socket cannot be made; the caller falls back to dgram. */
  constructor(
    native: NativeModule,
    ip: string,
    port: number,
    rcvbuf: number,
    onDatagrams: (datagrams: Buffer[]) => void,
    onError: (err: Error) => void,
  ) {
    this.#native = native;
    this.#socket = native.udpOpen(ip, port, rcvbuf, this.#lengths, this.#recv, (data, count) => {
      if (!data) {
        const code = safeErrorName(count);
        onError(Object.assign(new Error(`${code} (read)`), { code }));
        return;
      }
      const datagrams = new Array<Buffer>(count);
      for (let i = 0; i < count; i++) datagrams[i] = data.subarray(i * SLOT, i * SLOT + this.#lengths[i]!);
      onDatagrams(datagrams);
    });
  }

  /** Datagrams end to end in data; how many the kernel took (the rest: a full send buffer). */
  send(data: Buffer, lengths: Uint32Array, count: number): number {
    return this.#native.udpSend(this.#socket, data, lengths, count);
  }

  sendOne(packet: Buffer): boolean {
    this.#one[0] = packet.length;
    return this.#native.udpSend(this.#socket, packet, this.#one, 1) === 1;
  }

  close(): void {
    this.#native.udpClose(this.#socket);
  }
}

function safeErrorName(negErrno: number): string {
  try {
    return getSystemErrorName(negErrno);
  } catch {
    return `errno ${-negErrno}`;
  }
}
