import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Collects a busy tunnel thread's heap when the ArrayBuffers it allocated pile up (#44).
 *
 * Why: a buffer that lives through two scavenges (a packet queued behind a window, a chunk lwIP
 * or a stream still holds) is promoted to the old generation, and its memory (malloc'd in glibc's
 * shared arena) comes back only at a full collection. V8 starts one for external memory only tens
 * of MiB above the last, and a tunnel thread's small old generation rarely fills, so dead buffers
 * piled up per isolate between collections; the soak saw the arena grow while the JS heap was flat.
 * A full collection of a tunnel thread's heap (a few MiB of objects) takes a few milliseconds.
 * (The thread's count includes the data it handed the main thread until the main thread frees it:
 * transfer-collector.ts keeps that short.)
 */
export interface BufferCollectorOptions {
  /** Collect when the thread's ArrayBuffers grew this much past what the last collection left. */
  slackBytes: number;
  /** How often the thread's ArrayBuffer bytes are read. */
  intervalMs: number;
  /** The thread's ArrayBuffer bytes (Node's allocator of this isolate). */
  readBytes?: () => number;
}

/** Looked at every second: a busy thread piled up 16–22 MB between looks two seconds apart (soak, 2026-12-05). */
export const BUFFER_COLLECTOR_DEFAULTS: BufferCollectorOptions = { slackBytes: 8 << 20, intervalMs: 1_000 };

export class BufferCollector {
  readonly #collect: () => void;
  readonly #opts: Required<BufferCollectorOptions>;
  #timer: NodeJS.Timeout | null = null;
  #base = 0;
  /** Since the last start: collections this collector started, the largest ArrayBuffer total it saw (bytes). */
  readonly stats = { collections: 0, peakBytes: 0 };

  constructor(collect: () => void, opts: BufferCollectorOptions = BUFFER_COLLECTOR_DEFAULTS) {
    this.#collect = collect;
    this.#opts = { readBytes: () => process.memoryUsage().arrayBuffers, ...opts };
  }

  /** Starts watching (a tunnel is served); a second start is a no-op. */
  start(): void {
    if (this.#timer) return;
    this.#base = this.#opts.readBytes();
    this.stats.collections = 0;
    this.stats.peakBytes = this.#base;
    this.#timer = setInterval(() => this.check(), this.#opts.intervalMs);
    this.#timer.unref();
  }

  /** One look; collects when the buffers grew past the slack. Returns whether it collected. */
  check(): boolean {
    const bytes = this.#opts.readBytes();
    if (bytes > this.stats.peakBytes) this.stats.peakBytes = bytes;
    if (bytes < this.#base) this.#base = bytes; // V8 collected on its own meanwhile
    if (bytes - this.#base <= this.#opts.slackBytes) return false;
    this.#collect();
    this.stats.collections++;
    this.#base = this.#opts.readBytes();
    return true;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

/** V8's `gc`: a full collection, or with `{ type: 'minor' }` a scavenge of the young generation. */
export type CollectGarbage = (options?: { type?: 'major' | 'minor' }) => void;

/**
 * V8's own collection, made reachable in this thread only (the flag reaches contexts made after
 * it), or null where the embedder refuses the flag (the heap is then collected when V8 decides).
 * Nothing of `--expose-gc` reaches the application's own context.
 */
export function exposeGc(): CollectGarbage | null {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as CollectGarbage;
  } catch {
    return null;
  }
}
