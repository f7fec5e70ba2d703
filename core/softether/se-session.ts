import { EventEmitter } from 'node:events';
import { randomInt } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { ErrorCodes, GatehopError, isGatehopError, type Logger } from '../common/index.js';
import { BlockReader, encodeBlocks, encodeKeepAlive, MAX_FRAME } from './blocks.js';
import type { SeConnection, Welcome } from './se-dial.js';

/** What may wait unsent in the TLS socket before frames are dropped (a node that stopped reading). */
const MAX_BACKLOG = 4 * 1024 * 1024;
/** Frames written in one turn of the event loop go out as one send (one TLS record when they fit). */
const MAX_FRAMES_PER_SEND = 64;

export interface SeSessionStats {
  framesIn: number;
  framesOut: number;
  bytesIn: number;
  bytesOut: number;
  droppedOut: number;
  keepAlivesIn: number;
  keepAlivesOut: number;
  oversizedIn: number;
}

/**
 * An established SE-VPN session on one connection: Ethernet frames both ways in SoftEther's blocks,
 * keep-alives at a random interval in [timeout/5, timeout/2] of the Welcome's timeout (pushed back
 * by data, as SoftEther's client does), and the session declared lost when nothing arrives for the
 * timeout. Emits 'frames' (in order) and, once, 'down' with the reason.
 */
export class SeSession extends EventEmitter<{ frames: [Buffer[]]; down: [GatehopError] }> {
  readonly welcome: Welcome;
  readonly stats: SeSessionStats = {
    framesIn: 0,
    framesOut: 0,
    bytesIn: 0,
    bytesOut: 0,
    droppedOut: 0,
    keepAlivesIn: 0,
    keepAlivesOut: 0,
    oversizedIn: 0,
  };
  readonly #tls: TLSSocket;
  readonly #log: Logger;
  readonly #reader = new BlockReader();
  #outbox: Buffer[] = [];
  #flushScheduled = false;
  #lastRecv = Date.now();
  #nextKeepAlive = 0;
  #timer: NodeJS.Timeout;
  #closed = false;

  constructor(conn: SeConnection, logger: Logger) {
    super();
    this.welcome = conn.welcome;
    this.#tls = conn.tls;
    this.#log = logger.child({ component: 'softether', session: conn.welcome.sessionName });
    this.#tls.on('data', (chunk: Buffer) => this.#onData(chunk));
    this.#tls.on('error', (err: Error) =>
      this.#fail(new GatehopError(ErrorCodes.EGRESS_FAILED, `SE-VPN connection: ${err.message}`, { cause: err })),
    );
    this.#tls.on('close', () =>
      this.#fail(new GatehopError(ErrorCodes.NETSTACK_CLOSED, 'SE-VPN connection closed by the server')),
    );
    this.#scheduleKeepAlive();
    // One timer for both duties: a second is fine against timeouts of tens of seconds.
    this.#timer = setInterval(() => this.#tick(), 1000);
    this.#timer.unref();
    if (conn.rest.length) this.#onData(conn.rest);
    this.#tls.resume();
  }

  /** When the last bytes (frames or keep-alives) came from the server. */
  get lastReceivedAt(): number {
    return this.#lastRecv;
  }

  /** Queues Ethernet frames; those of one turn go out together. False when the session is down. */
  send(frames: readonly Buffer[]): boolean {
    if (this.#closed) return false;
    for (const f of frames) {
      if (f.length === 0 || f.length > MAX_FRAME) {
        this.stats.droppedOut++;
        continue;
      }
      this.#outbox.push(f);
    }
    if (!this.#flushScheduled && this.#outbox.length > 0) {
      this.#flushScheduled = true;
      queueMicrotask(() => this.#flush());
    }
    return true;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#outbox = [];
    this.#tls.removeAllListeners('data');
    this.#tls.removeAllListeners('close');
    this.#tls.on('error', () => {});
    this.#tls.end();
    this.#tls.destroy();
  }

  #flush(): void {
    this.#flushScheduled = false;
    const batch = this.#outbox;
    this.#outbox = [];
    if (this.#closed || batch.length === 0) return;
    if (this.#tls.writableLength > MAX_BACKLOG) {
      this.stats.droppedOut += batch.length;
      return;
    }
    for (let i = 0; i < batch.length; i += MAX_FRAMES_PER_SEND) {
      const part = batch.slice(i, i + MAX_FRAMES_PER_SEND);
      const wire = encodeBlocks(part);
      this.#tls.write(wire);
      this.stats.framesOut += part.length;
      this.stats.bytesOut += wire.length;
    }
    this.#scheduleKeepAlive();
  }

  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    this.#lastRecv = Date.now();
    this.stats.bytesIn += chunk.length;
    let frames: Buffer[];
    try {
      frames = this.#reader.push(chunk);
    } catch (err) {
      this.#fail(isGatehopError(err) ? err : new GatehopError(ErrorCodes.SOFTETHER_PROTOCOL, (err as Error).message));
      return;
    }
    this.stats.keepAlivesIn = this.#reader.keepAlives;
    this.stats.oversizedIn = this.#reader.oversized;
    if (frames.length === 0) return;
    this.stats.framesIn += frames.length;
    this.emit('frames', frames);
  }

  #scheduleKeepAlive(): void {
    const t = this.welcome.timeoutMs;
    this.#nextKeepAlive = Date.now() + randomInt(Math.floor(t / 5), Math.floor(t / 2) + 1);
  }

  #tick(): void {
    const now = Date.now();
    if (now - this.#lastRecv > this.welcome.timeoutMs) {
      this.#fail(
        new GatehopError(
          ErrorCodes.EGRESS_HOST_UNREACHABLE,
          `nothing from the SE-VPN server for ${Math.round(this.welcome.timeoutMs / 1000)} s`,
        ),
      );
      return;
    }
    if (now >= this.#nextKeepAlive && this.#tls.writableLength <= MAX_BACKLOG) {
      this.#tls.write(encodeKeepAlive());
      this.stats.keepAlivesOut++;
      this.#scheduleKeepAlive();
    }
  }

  #fail(err: GatehopError): void {
    if (this.#closed) return;
    this.#log.info({ event: 'softether-down', err: err.message }, 'SE-VPN session down');
    this.close();
    this.emit('down', err);
  }
}
