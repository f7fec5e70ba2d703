import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Collects a thread's heap when the ArrayBuffers it holds pile up (#44): a busy tunnel thread's,
 * and the main thread's.
 *
 * Why: a buffer that lives through two scavenges (a packet queued behind a window, a chunk lwIP
 * or a stream still holds, a download's data waiting in a slow client's socket queue) is promoted
 * to the old generation, and its memory (malloc'd in a glibc arena) comes back only at a full
 * collection. V8 starts one for external memory only tens of MiB above the last, and a thread whose
 * old generation rarely fills piles up dead buffers between collections. The main thread holds the
 * data every tunnel thread hands it (each batch a buffer malloc'd in the tunnel threads' shared
 * arena, transferred): a heap profile of the soak (heaptrack, 6 minutes) found those buffers to be
 * half of the process's peak malloc'd bytes, freed in whatever order the main thread's collections
 * found them, so the arena grew to hold dozens of MiB of dead and half-used pages (41 → 111 MB in
 * an hour). A full collection of a tunnel thread's heap takes a few milliseconds, of the main
 * thread's (tens of MiB of objects) ~10–30 ms; `minIntervalMs` keeps that rare under a fast
 * transfer, where V8's own trigger comes first anyway.
 */
export interface BufferCollectorOptions {
  /** Collect when the thread's ArrayBuffers grew this much past what the last collection left. */
  slackBytes: number;
  /** How often the thread's ArrayBuffer bytes are read. */
  intervalMs: number;
  /** Never two collections closer than this (0: every look may collect). */
  minIntervalMs?: number;
  /** The thread's ArrayBuffer bytes (Node's allocator of this isolate). */
  readBytes?: () => number;
  /** A clock in ms (tests pass one). */
  now?: () => number;
}

/** Looked at every second: a busy thread piled up 16–22 MB between looks two seconds apart (soak, 2026-12-05). */
export const BUFFER_COLLECTOR_DEFAULTS: BufferCollectorOptions = { slackBytes: 8 << 20, intervalMs: 1_000 };

/**
 * The main thread: it holds every tunnel's data in transit to the clients (16 MiB is a few seconds
 * of the soak's downloads) and its heap is larger, so it collects at most every 5 s.
 */
export const MAIN_BUFFER_COLLECTOR: BufferCollectorOptions = {
  slackBytes: 16 << 20,
  intervalMs: 1_000,
  minIntervalMs: 5_000,
};

export class BufferCollector {
  readonly #collect: () => void;
  readonly #opts: Required<BufferCollectorOptions>;
  #timer: NodeJS.Timeout | null = null;
  #base = 0;
  #lastAt = -Infinity;
  /**
   * Since the last start: collections this collector started, the largest ArrayBuffer total it
   * saw (bytes), and the longest collection (ms of this thread's time).
   */
  readonly stats = { collections: 0, peakBytes: 0, maxMs: 0 };

  constructor(collect: () => void, opts: BufferCollectorOptions = BUFFER_COLLECTOR_DEFAULTS) {
    this.#collect = collect;
    this.#opts = {
      readBytes: () => process.memoryUsage().arrayBuffers,
      now: () => performance.now(),
      minIntervalMs: 0,
      ...opts,
    };
  }

  /** Starts watching (a tunnel is served); a second start is a no-op. */
  start(): void {
    if (this.#timer) return;
    this.#base = this.#opts.readBytes();
    this.stats.collections = 0;
    this.stats.peakBytes = this.#base;
    this.stats.maxMs = 0;
    this.#timer = setInterval(() => this.check(), this.#opts.intervalMs);
    this.#timer.unref();
  }

  /** One look; collects when the buffers grew past the slack. Returns whether it collected. */
  check(): boolean {
    const bytes = this.#opts.readBytes();
    if (bytes > this.stats.peakBytes) this.stats.peakBytes = bytes;
    if (bytes < this.#base) this.#base = bytes; // V8 collected on its own meanwhile
    if (bytes - this.#base <= this.#opts.slackBytes) return false;
    const started = this.#opts.now();
    if (started - this.#lastAt < this.#opts.minIntervalMs) return false;
    this.#collect();
    const ended = this.#opts.now();
    this.#lastAt = ended;
    this.stats.collections++;
    this.stats.maxMs = Math.max(this.stats.maxMs, ended - started);
    this.#base = this.#opts.readBytes();
    return true;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

/**
 * V8's own full collection, made reachable in this thread only (the flag reaches contexts made
 * after it), or null where the embedder refuses the flag (the heap is then collected when V8
 * decides). Nothing else of `--expose-gc` leaks into the application's own context.
 */
export function exposeGc(): (() => void) | null {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return null;
  }
}
