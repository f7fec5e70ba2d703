import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface LoopDelayReading {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The window the figures cover. */
  windowMs: number;
}

const RESOLUTION_MS = 10;

/**
 * The main event loop's delay over fixed windows: everything on the main thread shares it (the
 * proxy, the API, the controller, in-thread tunnels, and in the desktop app the tray and IPC), so
 * it is what a stalled tray or a slow /status feels. Readers get the last complete window (the
 * current one until the first completes). The histogram records the whole interval between its
 * samples, resolution included (an idle loop reads 10.2 ms at resolution 10): the delay is what
 * lies beyond it.
 */
export class LoopDelay {
  readonly #histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  readonly #timer: NodeJS.Timeout;
  readonly #windowMs: number;
  #last: LoopDelayReading | null = null;

  constructor(windowMs = 10_000) {
    this.#windowMs = windowMs;
    this.#histogram.enable();
    this.#timer = setInterval(() => {
      this.#last = this.#current();
      this.#histogram.reset();
    }, windowMs);
    this.#timer.unref();
  }

  read(): LoopDelayReading {
    return this.#last ?? this.#current();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#histogram.disable();
  }

  #current(): LoopDelayReading {
    const h = this.#histogram;
    if (h.count === 0) return { p50Ms: 0, p99Ms: 0, maxMs: 0, windowMs: this.#windowMs };
    const beyond = (ns: number): number => Math.round(Math.max(0, ns / 1e6 - RESOLUTION_MS) * 10) / 10;
    return {
      p50Ms: beyond(h.percentile(50)),
      p99Ms: beyond(h.percentile(99)),
      maxMs: beyond(h.max),
      windowMs: this.#windowMs,
    };
  }
}
