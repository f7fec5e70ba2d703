import { Duplex } from 'node:stream';
import { ErrorCodes, GatehopError } from '../common/index.js';
import { LwipErr, lwipError, lwipErrName } from './lwip-errors.js';

/** What a TcpStream may do to its pcb; every call goes through the stack's non-reentrant gate. */
export interface TcpPcbOps {
  sndbuf(): number;
  /** Copies `len` bytes at `offset` into lwIP; returns an lwIP err_t. */
  write(data: Buffer, offset: number, len: number, more: boolean): number;
  output(): void;
  recved(len: number): void;
  shutdownTx(): number;
  close(): void;
  abort(): void;
  info(): TcpInfo;
  /** The stack forgets this stream (after its pcb is gone). */
  release(): void;
}

export interface TcpInfo {
  state: number;
  /** lwIP's smoothed RTT, coarse: counted in 500 ms slow-timer ticks. */
  srttMs: number;
  retransmissions: number;
  sndBuf: number;
  rcvWnd: number;
  mss: number;
  localPort: number;
  /** The window the peer last heard of (rcvWnd is what we could take now). */
  rcvAnnWnd: number;
  /** Since the peer last sent anything, coarse (500 ms ticks). */
  idleMs: number;
  /** The peer's window, as it last told us. */
  sndWnd: number;
  /** Window updates announced again since the peer last sent data (glue.c, resend_window_update). */
  windowUpdatesResent: number;
}

/** Told of each received chunk, and when the reader fell behind (core/egress's BulkMeter fits). */
export interface ReceiveObserver {
  data(stream: object, bytes: number): void;
  heldBack(stream: object): void;
}

export interface TcpStreamStats {
  bytesIn: number;
  bytesOut: number;
  /** Received but not yet read by the consumer (the window lwIP has not reopened). */
  bytesQueued: number;
}

/** One write lwIP accepts at most (u16 length) and the glue's scratch size. */
const MAX_WRITE = 65_535;
/** Coalesce small segments into chunks up to this size when handing data to the consumer. */
const READ_CHUNK = 64 * 1024;

/**
 * A TCP connection through the user-space stack, as a Node Duplex with half-close.
 *
 * Flow control is explicit: received data waits in `#rx` and lwIP's receive window is reopened
 * (tcp_recved) only for bytes actually pushed to the consumer, so a consumer that stops reading
 * stops the remote sender once the window (256 KiB) is full. Writes go to lwIP as fast as its send
 * buffer takes them; the write callback waits otherwise, so `write()` returns false under load.
 */
export class TcpStream extends Duplex {
  readonly id: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localAddress: string;
  readonly stats: TcpStreamStats = { bytesIn: 0, bytesOut: 0, bytesQueued: 0 };
  /** Set by the stream's owner to meter what arrives (null: nobody asks). */
  observer: ReceiveObserver | null = null;
  #ops: TcpPcbOps | null;
  #connected = false;
  #rx: Buffer[] = [];
  #reading = false;
  #finReceived = false;
  #endPushed = false;
  #tx: Array<{ buf: Buffer; off: number; cb: (err?: Error | null) => void }> = [];
  #finalCb: ((err?: Error | null) => void) | null = null;
  #finSent = false;

  constructor(id: number, ops: TcpPcbOps, remote: { address: string; port: number }, localAddress: string) {
    super({ allowHalfOpen: true, readableHighWaterMark: READ_CHUNK, writableHighWaterMark: READ_CHUNK });
    this.id = id;
    this.#ops = ops;
    this.remoteAddress = remote.address;
    this.remotePort = remote.port;
    this.localAddress = localAddress;
  }

  get connected(): boolean {
    return this.#connected;
  }

  /** What has been handed to lwIP to send (net.Socket's name for it). */
  get bytesWritten(): number {
    return this.stats.bytesOut;
  }

  get localPort(): number {
    return this.#ops?.info().localPort ?? 0;
  }

  /** lwIP's view of the connection, or null once the pcb is gone. */
  info(): TcpInfo | null {
    return this.#ops?.info() ?? null;
  }

  // ---- events from the stack (never during an lwIP call) ----

  onConnected(): void {
    this.#connected = true;
    this.emit('connect');
    this.#flush();
  }

  onData(data: Buffer): void {
    this.stats.bytesIn += data.length;
    this.stats.bytesQueued += data.length;
    this.#rx.push(data);
    if (this.observer) {
      this.observer.data(this, data.length);
      // What came before is still waiting for the reader: the reader, not the peer, sets the pace.
      if (!this.#reading || this.#rx.length > 1) this.observer.heldBack(this);
    }
    if (this.#reading) this.#pump();
  }

  onFin(): void {
    this.#finReceived = true;
    this.#pump();
  }

  onSent(): void {
    this.#flush();
  }

  onPoll(): void {
    // Retries a write that failed with ERR_MEM while nothing was in flight (no sent callback comes).
    this.#flush();
  }

  /** lwIP freed the pcb (RST, abort, timeout). */
  onError(err: number): void {
    const ops = this.#ops;
    this.#ops = null;
    ops?.release();
    const what = `TCP ${this.remoteAddress}:${this.remotePort}`;
    this.destroy(lwipError(err, what, !this.#connected));
  }

  // ---- Duplex ----

  override _read(): void {
    this.#reading = true;
    this.#pump();
  }

  #pump(): void {
    while (this.#reading && this.#rx.length > 0) {
      let chunk: Buffer;
      if (this.#rx.length === 1 || this.#rx[0]!.length >= READ_CHUNK) {
        chunk = this.#rx.shift()!;
      } else {
        const parts: Buffer[] = [];
        let size = 0;
        while (this.#rx.length > 0 && size + this.#rx[0]!.length <= READ_CHUNK) {
          const b = this.#rx.shift()!;
          parts.push(b);
          size += b.length;
        }
        chunk = Buffer.concat(parts, size);
      }
      this.stats.bytesQueued -= chunk.length;
      this.#ops?.recved(chunk.length);
      if (!this.push(chunk)) this.#reading = false;
    }
    if (this.#rx.length === 0 && this.#finReceived && !this.#endPushed) {
      this.#endPushed = true;
      this.push(null);
    }
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (!this.#ops) {
      cb(
        new GatehopError(
          ErrorCodes.NETSTACK_CLOSED,
          `TCP ${this.remoteAddress}:${this.remotePort}: connection is gone`,
        ),
      );
      return;
    }
    this.#tx.push({ buf: chunk, off: 0, cb });
    this.#flush();
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.#finalCb = cb;
    this.#flush();
  }

  #flush(): void {
    const ops = this.#ops;
    if (!ops || !this.#connected) return;
    let wrote = false;
    while (this.#tx.length > 0) {
      const head = this.#tx[0]!;
      const room = ops.sndbuf();
      if (room === 0) break;
      const n = Math.min(room, head.buf.length - head.off, MAX_WRITE);
      const more = n < head.buf.length - head.off || this.#tx.length > 1;
      const err = ops.write(head.buf, head.off, n, more);
      if (err === LwipErr.MEM) break; // queue full: resumes from the sent or poll callback
      if (err !== LwipErr.OK) {
        this.destroy(new GatehopError(ErrorCodes.NETSTACK_FAILED, `TCP write failed: lwIP ${lwipErrName(err)}`));
        return;
      }
      wrote = true;
      this.stats.bytesOut += n;
      head.off += n;
      if (head.off === head.buf.length) {
        this.#tx.shift();
        head.cb();
      }
    }
    if (this.#tx.length === 0 && this.#finalCb && !this.#finSent) {
      const err = ops.shutdownTx();
      if (err === LwipErr.MEM) {
        if (wrote) ops.output();
        return; // retried from sent/poll
      }
      this.#finSent = true;
      const cb = this.#finalCb;
      this.#finalCb = null;
      ops.output();
      cb(
        err === LwipErr.OK
          ? null
          : new GatehopError(ErrorCodes.NETSTACK_FAILED, `TCP shutdown failed: lwIP ${lwipErrName(err)}`),
      );
      return;
    }
    if (wrote) ops.output();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    const ops = this.#ops;
    this.#ops = null;
    if (ops) {
      // Both FINs exchanged and nothing failed: a normal close. Anything else resets the peer.
      if (!err && this.#finSent && this.#finReceived) ops.close();
      else ops.abort();
      ops.release();
    }
    const pendingErr = err ?? new GatehopError(ErrorCodes.NETSTACK_CLOSED, 'stream destroyed');
    for (const w of this.#tx.splice(0)) w.cb(pendingErr);
    this.#rx = [];
    this.stats.bytesQueued = 0;
    cb(err);
  }
}
