import { exposeGc, type CollectGarbage } from './buffer-collector.js';

/**
 * Frees, soon after they die, the buffers another thread handed this one (#44): a young-generation
 * collection of this thread's heap every `everyBytes` received.
 *
 * Why: a tunnel thread's stream data crosses to the main thread (and a client's uploads the other
 * way) as transferred ArrayBuffers, malloc'd by the sending thread. The receiving thread frees them
 * only when its own collector gets round to them, and neither side's accounting sees the pile:
 * the receiver's `arrayBuffers` leaves them out (its allocator did not make them), and V8 starts a
 * scavenge when JavaScript objects fill the young generation, not when external bytes do. In the
 * soak the main thread held up to 29.5 MB of dead transferred data (heaptrack, 6 minutes: half of
 * the process's peak malloc'd bytes) while its allocator reported none, freed in whatever order
 * its collections found it; the tunnel threads' shared arena grew to hold those pages (41 → 111 MB
 * in an hour). A scavenge costs ~0.1–1 ms (the young generation's live objects, not its size).
 */
export interface TransferCollectorOptions {
  /** Scavenge after this many bytes arrived from other threads since the last. */
  everyBytes: number;
  /** Never two scavenges closer than this (a fast transfer: V8's own ones come often enough then). */
  minIntervalMs: number;
  /** A clock in ms (tests pass one). */
  now?: () => number;
}

/** 8 MiB: two seconds of the soak's downloads; at 100 MiB/s, a scavenge (mostly under 1 ms) every 80 ms. */
export const TRANSFER_COLLECTOR_DEFAULTS: TransferCollectorOptions = { everyBytes: 8 << 20, minIntervalMs: 50 };

export class TransferCollector {
  readonly #gc: CollectGarbage | null;
  readonly #everyBytes: number;
  readonly #minIntervalMs: number;
  readonly #now: () => number;
  #pending = 0;
  #lastAt = -Infinity;
  /** Bytes received from other threads, scavenges made for them, and the longest (ms). */
  readonly stats = { bytes: 0, collections: 0, maxMs: 0 };

  /** `gc`: V8's (exposeGc()); null (an embedder refused the flag): only counted. */
  constructor(gc: CollectGarbage | null, opts: TransferCollectorOptions = TRANSFER_COLLECTOR_DEFAULTS) {
    this.#gc = gc;
    this.#everyBytes = opts.everyBytes;
    this.#minIntervalMs = opts.minIntervalMs;
    this.#now = opts.now ?? (() => performance.now());
  }

  /** `bytes` arrived from another thread (its buffer, now this thread's to free). */
  received(bytes: number): void {
    this.stats.bytes += bytes;
    this.#pending += bytes;
    if (this.#pending < this.#everyBytes || !this.#gc) return;
    const started = this.#now();
    if (started - this.#lastAt < this.#minIntervalMs) return;
    this.#pending = 0;
    this.#gc({ type: 'minor' });
    this.#lastAt = this.#now();
    this.stats.collections++;
    this.stats.maxMs = Math.max(this.stats.maxMs, this.#lastAt - started);
  }
}

let threadCollector: TransferCollector | undefined;

/** This thread's collector (a collection is the whole thread's, so one per thread; made at first use). */
export function threadTransferCollector(): TransferCollector {
  return (threadCollector ??= new TransferCollector(exposeGc()));
}
