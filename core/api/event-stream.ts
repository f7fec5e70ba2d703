import type { ServerResponse } from 'node:http';

export interface EventStreamOptions {
  /** A client whose unsent output stays past this for `stallMs` is dropped (default 1 MiB). */
  maxBufferedBytes?: number;
  /** How long a client may stay past `maxBufferedBytes` without draining (default 5 s). */
  stallMs?: number;
  /** Past this a client is dropped at once, reading or not (default 16 × maxBufferedBytes). */
  hardMaxBufferedBytes?: number;
  heartbeatMs?: number;
}

/**
 * Server-Sent Events to many clients. Every write goes to the socket at once. A client that stops
 * reading is disconnected and counted, so a stalled consumer can never make the core buffer
 * without bound: past the soft cap it has `stallMs` to drain (a node list of thousands is a few
 * MB, sent in one burst to a client that reads it at once: behind for a moment, not stalled),
 * past the hard cap it is dropped at once.
 */
export class EventStream {
  readonly #clients = new Set<ServerResponse>();
  /** When each client went past the soft cap without draining since. */
  readonly #behindSince = new WeakMap<ServerResponse, number>();
  readonly #max: number;
  readonly #hardMax: number;
  readonly #stallMs: number;
  readonly #heartbeat: NodeJS.Timeout;
  dropped = 0;
  sent = 0;

  constructor(opts: EventStreamOptions = {}) {
    this.#max = opts.maxBufferedBytes ?? 1 << 20;
    this.#hardMax = opts.hardMaxBufferedBytes ?? 16 * this.#max;
    this.#stallMs = opts.stallMs ?? 5_000;
    this.#heartbeat = setInterval(() => {
      for (const res of [...this.#clients]) this.#write(res, ': heartbeat\n\n');
    }, opts.heartbeatMs ?? 15_000);
    this.#heartbeat.unref();
  }

  get clients(): number {
    return this.#clients.size;
  }

  /** Takes over `res` as an event stream; `initial` events go first (the current state). */
  attach(res: ServerResponse, initial: Array<{ event: string; data: unknown }> = []): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    this.#clients.add(res);
    res.once('close', () => this.#clients.delete(res));
    for (const e of initial) this.#write(res, frame(e.event, e.data));
  }

  publish(event: string, data: unknown): void {
    if (this.#clients.size === 0) return;
    const text = frame(event, data);
    for (const res of [...this.#clients]) this.#write(res, text);
  }

  #write(res: ServerResponse, text: string): void {
    if (res.destroyed) {
      this.#clients.delete(res);
      return;
    }
    const pending = res.writableLength;
    if (pending > this.#max) {
      const since = this.#behindSince.get(res);
      if (since === undefined) {
        this.#behindSince.set(res, Date.now());
        res.once('drain', () => this.#behindSince.delete(res));
      }
      if (pending + text.length > this.#hardMax || (since !== undefined && Date.now() - since > this.#stallMs)) {
        this.dropped++;
        this.#clients.delete(res);
        res.destroy();
        return;
      }
    }
    res.write(text);
    this.sent++;
  }

  close(): void {
    clearInterval(this.#heartbeat);
    for (const res of [...this.#clients]) res.end();
    this.#clients.clear();
  }
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
