import { detach, writeFileAtomicAsync, type Logger } from '../common/index.js';
import type { DialVia, Dialer } from '../reach/index.js';
import { fetchVia } from './fetch-via.js';

export interface RemoteFileOptions<T> {
  /** What it is, for the names of its timers' work in the log ('rule-set', 'geosite'). */
  readonly kind: string;
  readonly url: string;
  /** Where the kept copy is written, atomically and only once the body parsed. */
  readonly path: string;
  readonly limits: { readonly timeoutMs: number; readonly maxBytes: number };
  /** How it is fetched, in order: straight (or through the upstream proxy), then a working tunnel. */
  readonly dialers: () => ReadonlyArray<Dialer | null>;
  readonly log: Logger;
  /** How often it is fetched again, and how soon after a failure. */
  readonly intervalMs: () => number;
  readonly retryMs: number;
  /** When the copy in use was fetched or read (null: none yet, fetched at once). */
  readonly updatedAt: () => number | null;
  /** The body made into what it holds; throws when it is not that (the next way out is tried). */
  readonly parse: (bytes: Buffer) => T | Promise<T>;
  /** A fetched copy was kept: use it from now on. */
  readonly fetched: (value: T, via: DialVia) => void;
  /** Every way out failed (the last good copy stays in use). */
  readonly failed: (error: string) => void;
  /** Closed or replaced by a reload: nothing is fetched, a fetch in flight writes nothing. */
  readonly stopped: () => boolean;
}

/**
 * A file Gatehop keeps a copy of and fetches again on its interval (rule sets, GEOSITE data): one
 * fetch at a time, through each way out in turn (fetch-via.ts), the kept copy replaced only by a
 * body that parsed, a failure retried after `retryMs` and the interval resumed after any fetch.
 * The owner reads the kept copy and keeps what is in use; this keeps the timers and the fetch.
 */
export class RemoteFile<T> {
  #timer: NodeJS.Timeout | null = null;
  #fetching: Promise<void> | null = null;
  /** When the next fetch is planned (null: none). */
  nextAt: number | null = null;

  constructor(private readonly o: RemoteFileOptions<T>) {}

  get fetching(): boolean {
    return this.#fetching !== null;
  }

  /** Plans the next fetch: at once without a copy or with one older than the interval, else when it will be. */
  schedule(): void {
    if (this.o.stopped() || this.#timer) return;
    const updatedAt = this.o.updatedAt();
    const age = updatedAt === null ? Infinity : Date.now() - updatedAt;
    const intervalMs = this.o.intervalMs();
    this.#fetchIn(age >= intervalMs ? 0 : intervalMs - age, `${this.o.kind}-refresh`);
  }

  /** Fetches now (or joins the fetch in flight); never rejects: a failure is told to `failed`. */
  fetch(): Promise<void> {
    this.#fetching ??= this.#fetchOnce().finally(() => {
      this.#fetching = null;
    });
    return this.#fetching;
  }

  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.nextAt = null;
  }

  async #fetchOnce(): Promise<void> {
    const { url, path } = this.o;
    const got = await fetchVia(
      this.o.dialers(),
      url,
      this.o.limits,
      async (res, via) => {
        const value = await this.o.parse(res.bytes);
        if (this.o.stopped()) return;
        // Written off the main loop: a large file holds no flow for its fsync (#45).
        await writeFileAtomicAsync(path, res.bytes, { mode: 0o644 });
        if (this.o.stopped()) return;
        this.o.fetched(value, via);
      },
      this.o.stopped,
    );
    if (got.ok || this.o.stopped()) return;
    this.o.failed(got.error);
    // Sooner than the interval (unless something sooner is planned); back on the interval once a
    // fetch succeeds (#45: a set that failed once and then came back was never refreshed again).
    if (this.nextAt === null || this.nextAt > Date.now() + this.o.retryMs)
      this.#fetchIn(this.o.retryMs, `${this.o.kind}-retry`);
  }

  /** A fetch in `ms`, back on the interval after it (whatever came of it: a failure plans its retry). */
  #fetchIn(ms: number, what: string): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.nextAt = Date.now() + ms;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.nextAt = null;
      detach(
        this.o.log,
        what,
        this.fetch().finally(() => this.schedule()),
      );
    }, ms);
    this.#timer.unref();
  }
}
