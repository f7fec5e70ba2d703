import { Duplex } from 'node:stream';
import { errorFromJson, errorToJson, ErrorCodes, GatehopError } from '../../common/index.js';
import { ACK_EVERY_BYTES, STREAM_WINDOW_BYTES, type ToTunnel, type WireError } from './messages.js';
import type { BulkMeter } from '../bulk-meter.js';
import type { Outbox } from './outbox.js';

/** One stream's main-thread side of the boundary windows. */
export interface WorkerStreamFlowState {
  id: number;
  /** Sent to the worker, not yet acknowledged. */
  inFlight: number;
  /** Received from the worker, not yet acknowledged. */
  unacked: number;
  /** push() said the consumer is full: the acknowledgement waits for its next read. */
  full: boolean;
  writeBlocked: boolean;
  finReceived: boolean;
  finSent: boolean;
  farClosed: boolean;
  readableLength: number;
  readableFlowing: boolean | null;
  writableLength: number;
  bytesIn: number;
}

/**
 * The main thread's end of a TCP stream whose lwIP connection lives in a tunnel worker. It behaves
 * like the netstack's TcpStream (half-close; an error from the far side destroys it with that
 * error's code) and keeps two windows of STREAM_WINDOW_BYTES:
 * - upload: write callbacks wait while that much is unacknowledged, so `write()` returns false and
 *   the client socket piping into it pauses;
 * - download: bytes are acknowledged only once pushed to a consumer that wants more, so a client
 *   that stops reading makes the worker stop reading from lwIP, which closes the TCP window.
 */
export class WorkerTcpStream extends Duplex {
  readonly stats = { bytesIn: 0, bytesOut: 0 };
  readonly #id: number;
  readonly #out: Outbox<ToTunnel>;
  #inFlight = 0;
  #blockedWrite: (() => void) | null = null;
  /** Bytes pushed while the consumer was full: acknowledged when it asks for more. */
  #unacked = 0;
  /** push() said the consumer is full: acknowledgements wait for its next read. */
  #full = false;
  #finSent = false;
  #finReceived = false;
  /** The worker's side has closed; nothing more is sent to it. */
  #farClosed = false;

  readonly #meter: BulkMeter | null;

  /** `meter`: the egress's bulk meter, told each chunk and when the reader held the stream back. */
  constructor(id: number, out: Outbox<ToTunnel>, meter: BulkMeter | null = null) {
    super({ allowHalfOpen: true, readableHighWaterMark: 64 * 1024, writableHighWaterMark: 64 * 1024 });
    this.#id = id;
    this.#out = out;
    this.#meter = meter;
  }

  // ---- from the worker ----

  onData(data: ArrayBuffer): void {
    const buf = Buffer.from(data);
    this.stats.bytesIn += buf.length;
    this.#unacked += buf.length;
    if (this.#meter) {
      this.#meter.data(this, buf.length);
      // The reader has not taken what came before (its pipe paused, or bytes still buffered):
      // the client, not the node, sets this stream's pace now.
      if (this.readableFlowing !== true || this.readableLength > 0) this.#meter.heldBack(this);
    }
    if (!this.push(buf)) this.#full = true;
    else if (this.#unacked >= ACK_EVERY_BYTES) this.#ack();
  }

  onAck(bytes: number): void {
    this.#inFlight -= bytes;
    if (this.#inFlight < STREAM_WINDOW_BYTES && this.#blockedWrite) {
      const go = this.#blockedWrite;
      this.#blockedWrite = null;
      go();
    }
  }

  onFin(): void {
    this.#finReceived = true;
    this.push(null);
  }

  /** The worker's stream closed: cleanly after both FINs, or with the error that ended it. */
  onClosed(error: WireError | null): void {
    this.#farClosed = true;
    if (error) this.destroy(errorFromJson(error));
    else if (!(this.#finReceived && this.#finSent))
      this.destroy(new GatehopError(ErrorCodes.NETSTACK_CLOSED, 'the tunnel closed the connection'));
  }

  /** The tunnel (or its worker) is gone. */
  onTunnelGone(err: Error): void {
    this.#farClosed = true;
    this.destroy(err);
  }

  /** The boundary windows as this side sees them, with the Duplex's buffers (diagnostics only). */
  flowState(): WorkerStreamFlowState {
    return {
      id: this.#id,
      inFlight: this.#inFlight,
      unacked: this.#unacked,
      full: this.#full,
      writeBlocked: this.#blockedWrite !== null,
      finReceived: this.#finReceived,
      finSent: this.#finSent,
      farClosed: this.#farClosed,
      readableLength: this.readableLength,
      readableFlowing: this.readableFlowing,
      writableLength: this.writableLength,
      bytesIn: this.stats.bytesIn,
    };
  }

  // ---- Duplex ----

  override _read(): void {
    // The consumer wants more: after it was full, everything owed is acknowledged at once.
    if (this.#full || this.#unacked >= ACK_EVERY_BYTES) this.#ack();
    this.#full = false;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.#farClosed) {
      cb(new GatehopError(ErrorCodes.NETSTACK_CLOSED, 'the tunnel closed the connection'));
      return;
    }
    this.stats.bytesOut += chunk.length;
    this.#inFlight += chunk.length;
    this.#out.sendData(this.#id, chunk);
    if (this.#inFlight < STREAM_WINDOW_BYTES) cb();
    else this.#blockedWrite = () => cb();
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (!this.#farClosed) this.#out.send({ t: 'end', id: this.#id });
    this.#finSent = true;
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    // Both FINs exchanged and nothing failed: the worker's side closes on its own once its FIN is
    // out (a 'destroy' now would reset it, losing the tail). Anything else resets the far side.
    if (!this.#farClosed && (err || !(this.#finSent && this.#finReceived))) {
      this.#out.send({ t: 'destroy', id: this.#id, error: err ? errorToJson(err) : null });
    }
    this.#farClosed = true;
    this.#blockedWrite = null; // Duplex fails the pending write with the destroy error
    cb(err);
  }

  #ack(): void {
    if (this.#unacked === 0 || this.#farClosed) return;
    this.#out.send({ t: 'ack', id: this.#id, bytes: this.#unacked });
    this.#unacked = 0;
  }
}
