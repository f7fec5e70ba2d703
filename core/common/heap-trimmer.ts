import type { Logger } from './logger.js';
import { loadNative, type NativeModule } from './native.js';
import { detach } from './detach.js';

export interface HeapTrimmerOptions {
  /** Trim this often while the process runs (0: only when asked). */
  intervalMs: number;
  /** A burst of `soon()` calls (several tunnels ending at once) trims once, this long after the first. */
  debounceMs?: number;
  logger: Logger;
  /** The native module (tests pass one); by default the loaded one, and without it nothing is trimmed. */
  native?: Pick<NativeModule, 'heapTrim'> | null;
}

/**
 * Gives native heap memory that glibc keeps free back to the OS: after a tunnel's worker thread
 * ends (its arena's free memory is no one's now) and every few minutes.
 *
 * Why: the raised trim threshold (malloc-tuning.ts) lets every malloc arena keep up to 16 MiB free,
 * and each tunnel worker thread allocates through an arena of its own; over a 60-minute soak that
 * was +89 MB of RSS while the JS heap stayed flat (#24). A worker-churn model: 377 MB at the end
 * without a trim, 69 MB with one after each worker. A trim runs on a thread-pool thread (it walks
 * every arena under its lock: up to 208 ms in the soak), one at a time, and costs some page faults
 * for whatever allocates next, so it runs rarely and never per packet.
 */
export class HeapTrimmer {
  readonly #native: Pick<NativeModule, 'heapTrim'> | null;
  readonly #logger: Logger;
  readonly #debounceMs: number;
  #interval: NodeJS.Timeout | null = null;
  #pending: NodeJS.Timeout | null = null;
  #closed = false;
  #running = false;
  /** Trims done, and the longest one (wall time on the pool thread; the main thread does not wait). */
  readonly stats = { trims: 0, maxMs: 0 };

  constructor(opts: HeapTrimmerOptions) {
    this.#native = opts.native === undefined ? loadNative() : opts.native;
    this.#logger = opts.logger;
    this.#debounceMs = opts.debounceMs ?? 1_000;
    if (this.#native && opts.intervalMs > 0) {
      this.#interval = setInterval(() => detach(this.#logger, 'heap-trim', this.trim('interval')), opts.intervalMs);
      this.#interval.unref();
    }
  }

  /** Whether trimming does anything here (the native module loaded). */
  get active(): boolean {
    return this.#native !== null;
  }

  /** Trim shortly (debounced), e.g. when a worker thread has ended. */
  soon(): void {
    if (this.#closed || !this.#native || this.#pending) return;
    this.#pending = setTimeout(() => {
      this.#pending = null;
      detach(this.#logger, 'heap-trim', this.trim('worker-exit'));
    }, this.#debounceMs);
    this.#pending.unref();
  }

  /** Trim now (unless one runs); resolves when it is done. Never rejects: a failed trim is logged. */
  async trim(reason: string): Promise<void> {
    if (this.#closed || !this.#native || this.#running) return;
    this.#running = true;
    const started = performance.now();
    try {
      const released = await this.#native.heapTrim();
      const durationMs = performance.now() - started;
      this.stats.trims++;
      this.stats.maxMs = Math.max(this.stats.maxMs, durationMs);
      this.#logger.debug(
        { event: 'heap-trim', reason, released, durationMs: Math.round(durationMs * 100) / 100 },
        'native heap trimmed',
      );
    } catch (err) {
      this.#logger.warn(
        { event: 'heap-trim-failed', reason, err: (err as Error).message },
        `native heap trim failed: ${(err as Error).message}`,
      );
    } finally {
      this.#running = false;
    }
  }

  close(): void {
    this.#closed = true;
    if (this.#interval) clearInterval(this.#interval);
    if (this.#pending) clearTimeout(this.#pending);
    this.#interval = this.#pending = null;
  }
}
