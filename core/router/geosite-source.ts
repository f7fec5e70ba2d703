import { readFile, stat } from 'node:fs/promises';
import { detach, type Logger } from '../common/index.js';
import { GeoSite, MAX_GEOSITE_BYTES } from '../rules/index.js';
import type { Dialer } from '../reach/index.js';
import { RemoteFile } from './remote-file.js';

/**
 * v2fly's domain lists as MetaCubeX publishes them daily (meta-rules-dat, the data mihomo's own
 * default points at), served by jsDelivr's CDN: the host the routing presets' lists come from,
 * reached from China and Iran where raw GitHub is not. Users can point `geosite.url` elsewhere.
 */
export const DEFAULT_GEOSITE_URL = 'https://cdn.jsdelivr.net/gh/MetaCubeX/meta-rules-dat@release/geosite.dat';
const FETCH_TIMEOUT_MS = 120_000;
/** A failed fetch is tried again after this long. */
const RETRY_MS = 10 * 60_000;

export interface GeoSiteStatus {
  loaded: boolean;
  lists: number;
  bytes: number;
  url: string;
  updatedAt: number | null;
  error: string | null;
  fetching: boolean;
}

export interface GeoSiteSourceOptions {
  readonly url: string;
  readonly updateIntervalMs: number;
  /** Where the kept copy is (the data dir's geosite.dat). */
  readonly path: string;
  /** How it is fetched, in order: straight (or through the upstream proxy), then a working tunnel. */
  readonly dialers: () => ReadonlyArray<Dialer | null>;
  readonly log: Logger;
  /** A copy was read or fetched: the table should be built again with it. */
  readonly onLoaded: () => void;
}

/**
 * The geosite.dat a GEOSITE rule reads, kept on disk like a rule set: read from the kept copy at
 * start (a restart needs no network), fetched when there is none or it is older than the interval
 * (directly, then through the tunnel), written atomically only once it parsed, refreshed on its
 * interval; the last good copy stays in use on any failure. Started only when a rule names GEOSITE.
 */
export class GeoSiteSource {
  #site: GeoSite | null = null;
  #updatedAt: number | null = null;
  #error: string | null = null;
  #started = false;
  #closed = false;
  readonly #remote: RemoteFile<GeoSite>;

  constructor(private readonly o: GeoSiteSourceOptions) {
    this.#remote = new RemoteFile<GeoSite>({
      kind: 'geosite',
      url: o.url,
      path: o.path,
      limits: { timeoutMs: FETCH_TIMEOUT_MS, maxBytes: MAX_GEOSITE_BYTES },
      dialers: o.dialers,
      log: o.log,
      intervalMs: () => o.updateIntervalMs,
      retryMs: RETRY_MS,
      updatedAt: () => this.#updatedAt,
      parse: (bytes) => GeoSite.parse(bytes),
      fetched: (site, via) => {
        this.#updatedAt = Date.now();
        this.#use(site, `${o.url} (${via})`);
      },
      failed: (error) => {
        this.#error = error;
        o.log.warn(
          { event: 'geosite-fetch-failed', url: o.url, err: error, keeping: this.#site !== null },
          `GEOSITE data could not be fetched from ${o.url} (${error}); ${this.#site ? 'keeping the last good copy' : 'GEOSITE rules match nothing until it is'}`,
        );
      },
      stopped: () => this.#closed,
    });
  }

  get site(): GeoSite | null {
    return this.#site;
  }

  get url(): string {
    return this.o.url;
  }

  /** Reads the kept copy, then fetches when it is missing or stale; idempotent. */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    detach(
      this.o.log,
      'geosite-start',
      this.#readKept().then(() => this.#remote.schedule()),
    );
  }

  /** Fetches now (the Refresh button). */
  refresh(): Promise<void> {
    return this.#remote.fetch();
  }

  status(): GeoSiteStatus {
    return {
      loaded: this.#site !== null,
      lists: this.#site?.lists.length ?? 0,
      bytes: this.#site?.bytes ?? 0,
      url: this.o.url,
      updatedAt: this.#updatedAt,
      error: this.#error,
      fetching: this.#remote.fetching,
    };
  }

  close(): void {
    this.#closed = true;
    this.#remote.close();
  }

  async #readKept(): Promise<void> {
    let bytes: Buffer;
    try {
      const st = await stat(this.o.path);
      if (st.size > MAX_GEOSITE_BYTES) throw new Error(`larger than ${MAX_GEOSITE_BYTES} bytes`);
      bytes = await readFile(this.o.path);
      this.#updatedAt = st.mtimeMs;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.#error = `${this.o.path}: ${(err as Error).message}`;
      return;
    }
    try {
      this.#use(GeoSite.parse(bytes), 'kept copy');
    } catch (err) {
      // A damaged copy is fetched again; it is replaced only by one that parses.
      this.#updatedAt = null;
      this.#error = `${this.o.path}: ${(err as Error).message}`;
      this.o.log.warn(
        { event: 'geosite-invalid', path: this.o.path, err: this.#error },
        `GEOSITE data: ${this.#error}`,
      );
    }
  }

  #use(site: GeoSite, from: string): void {
    this.#site = site;
    this.#error = null;
    this.o.log.info(
      { event: 'geosite-loaded', from, lists: site.lists.length, bytes: site.bytes },
      `GEOSITE data: ${site.lists.length} lists (${from})`,
    );
    this.o.onLoaded();
  }
}
