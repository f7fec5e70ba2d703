import { getSystemErrorName } from 'node:util';
import type { NativeModule, NativeUdpSocket } from '../common/index.js';

/** recvmmsg reads at most this many datagrams per call (native/src/udp_socket.c BATCH). */
const BATCH = 64;

/**
 * The UDP carrier in gatehop-native: one recvmmsg and one call into JavaScript per batch of
 * datagrams instead of one of each per datagram (Node's dgram), sendmmsg for a sealed batch.
 */
export class NativeUdpCarrier {
  readonly #native: NativeModule;
  readonly #socket: NativeUdpSocket;
  readonly #lengths = new Uint32Array(BATCH);
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
    this.#socket = native.udpOpen(ip, port, rcvbuf, this.#lengths, (data, count) => {
      if (!data) {
        const code = safeErrorName(count);
        onError(Object.assign(new Error(`${code} (read)`), { code }));
        return;
      }
      const datagrams = new Array<Buffer>(count);
      let at = 0;
      for (let i = 0; i < count; i++) {
        const len = this.#lengths[i]!;
        datagrams[i] = data.subarray(at, at + len);
        at += len;
      }
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
