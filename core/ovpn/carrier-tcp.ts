import type { Socket } from 'node:net';
import { ErrorCodes, GatehopError } from '../common/index.js';
import { dialNodeTcp, tcpErrorCode } from '../reach/index.js';
import type { Carrier, CarrierOptions } from './carrier.js';
import type { SealedBatch } from './data-channel.js';
import { frameTcp, TcpRecordReader } from './packet.js';

/** What may wait in the socket unsent before packets are dropped (a server that stopped reading). */
export const MAX_TCP_BACKLOG = 4 * 1024 * 1024;
/** OpenVPN's records over TCP are at most this long (a packet plus the largest control overhead). */
const MAX_RECORD = 2048;

/** OpenVPN over TCP, straight to the server or through the upstream proxy: records framed by length. */
export async function openTcpCarrier(o: CarrierOptions): Promise<Carrier> {
  const where = `TCP ${o.host}:${o.port}`;
  const socket = await dialNodeTcp({
    host: o.host,
    port: o.port,
    upstream: o.upstream,
    what: where,
    ...(o.signal ? { signal: o.signal } : {}),
  });
  return new TcpCarrier(socket, o, where);
}

class TcpCarrier implements Carrier {
  readonly kind;
  readonly framed = true;
  #closed = false;
  /** The server sent something: it answered, so a close may end the stream in order. */
  #heard = false;

  constructor(
    private readonly socket: Socket,
    o: CarrierOptions,
    where: string,
  ) {
    this.kind = o.upstream ? ('tcp-upstream' as const) : ('tcp' as const);
    const reader = new TcpRecordReader(MAX_RECORD);
    const fail = (err: GatehopError): void => {
      if (this.#closed) return;
      this.close();
      o.sink.failed(err);
    };
    socket.on('data', (chunk: Buffer) => {
      this.#heard = true;
      let records: Buffer[];
      try {
        records = reader.push(chunk);
      } catch (err) {
        fail(
          new GatehopError(ErrorCodes.OVPN_PROTOCOL, `server sent a bad TCP record: ${(err as Error).message}`, {
            cause: err,
          }),
        );
        return;
      }
      if (!this.#closed) o.sink.packets(records);
    });
    socket.on('error', (err: NodeJS.ErrnoException) =>
      fail(new GatehopError(tcpErrorCode(err), `${where}: ${err.message}`, { cause: err })),
    );
    socket.on('close', () => fail(new GatehopError(ErrorCodes.EGRESS_CLOSED, `${where} closed by the server`)));
    // An upstream dial hands over a paused socket.
    socket.resume();
  }

  send(packet: Buffer): boolean {
    if (this.#closed || this.socket.writableLength > MAX_TCP_BACKLOG) return false;
    this.socket.write(frameTcp(packet));
    return true;
  }

  sendBatch(batch: SealedBatch): { sent: number; bytes: number } {
    if (this.#closed || this.socket.writableLength > MAX_TCP_BACKLOG) return { sent: 0, bytes: 0 };
    this.socket.write(batch.data.subarray(0, batch.bytes));
    return { sent: batch.count, bytes: batch.bytes - 2 * batch.count };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.socket.removeAllListeners('close');
    this.socket.removeAllListeners('data');
    this.socket.on('error', () => {});
    // A server that never answered (a filter dropping OpenVPN): a plain close would leave our hard
    // reset queued in the kernel, resent for minutes after Gatehop gave up on it, on a network
    // now known to block OpenVPN, the very packet a filter looks for (#60). A reset drops it.
    if (this.#heard) this.socket.destroy();
    else this.socket.resetAndDestroy();
  }
}
