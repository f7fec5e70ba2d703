import type { Logger } from '../common/index.js';

/** What a lazily loaded table shows in the routing status. */
export interface LazyDataStatus {
  loaded: boolean;
  ranges: number;
  bytes: number;
  error: string | null;
}

/**
 * Address data a rule may need (GeoIP's countries, ASN's systems), loaded once, in the background,
 * only when a rule first names it; the table is built again when it arrives. A failed load is
 * reported and tried again at the next reason to (a rebuild that still wants it).
 */
export class LazyData<T extends { readonly ranges: number; readonly bytes: number }> {
  #value: T | null = null;
  #error: string | null = null;
  #loading: Promise<void> | null = null;

  constructor(
    /** As the log says it: `GeoIP`, `ASN data`. */
    private readonly what: string,
    /** The log events' stem: `geoip` → geoip-loaded, geoip-failed. */
    private readonly event: string,
    private readonly load: () => Promise<T>,
    private readonly log: Logger,
    private readonly onLoaded: () => void,
  ) {}

  get value(): T | null {
    return this.#value;
  }

  /** Starts the load unless it is loaded or under way. */
  ensure(): void {
    if (this.#value || this.#loading) return;
    const started = Date.now();
    const before = process.memoryUsage().rss;
    this.#loading = this.load()
      .then((v) => {
        this.#value = v;
        this.#error = null;
        const durationMs = Date.now() - started;
        this.log.info(
          {
            event: `${this.event}-loaded`,
            ranges: v.ranges,
            bytes: v.bytes,
            durationMs,
            rssDeltaBytes: process.memoryUsage().rss - before,
          },
          `${this.what} loaded: ${v.ranges} ranges in ${durationMs} ms`,
        );
        this.onLoaded();
      })
      .catch((err: unknown) => {
        this.#error = (err as Error).message;
        this.log.warn(
          { event: `${this.event}-failed`, err: this.#error },
          `${this.what} could not be loaded: ${this.#error}`,
        );
      })
      .finally(() => {
        this.#loading = null;
      });
  }

  /** Null while nothing asked for it. */
  status(): LazyDataStatus | null {
    if (!this.#value && !this.#loading && !this.#error) return null;
    return {
      loaded: this.#value !== null,
      ranges: this.#value?.ranges ?? 0,
      bytes: this.#value?.bytes ?? 0,
      error: this.#error,
    };
  }
}
