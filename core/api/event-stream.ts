import type { ServerResponse } from 'node:http';

export interface EventStreamOptions {
  /** A client whose unsent output passes this is dropped, not buffered further. */
  maxBufferedBytes?: number;
  heartbeatMs?: number;
}

/**
 * Server-Sent Events to many clients. Every write goes to the socket at once; a client that does
 * not read (its buffered output grows past the cap) is disconnected and counted, so a stalled
 * consumer can never make the core buffer without bound.
 */
export class EventStream {
  readonly #clients = new Set<ServerResponse>();
  readonly #max: number;
  readonly #heartbeat: NodeJS.Timeout;
  dropped = 0;
  sent = 0;

  constructor(opts: EventStreamOptions = {}) {
    this.#max = opts.maxBufferedBytes ?? 1 << 20;
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
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
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
    if (res.writableLength > this.#max) {
      this.dropped++;
      this.#clients.delete(res);
      res.destroy();
      return;
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
