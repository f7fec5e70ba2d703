import type { Logger } from '../common/index.js';
import { fetchNodeList, type FetchOptions } from './fetcher.js';
import type { VpnGateNode } from './node.js';

/** Where the last good list lives between runs (the store, through the app). */
export interface ListCache {
  load(): { fetchedAt: number; source: string; nodes: VpnGateNode[] } | null;
  save(list: { fetchedAt: number; source: string; nodes: VpnGateNode[] }): void;
}

export interface NodeListOptions {
  endpoints: readonly string[];
  staticNodes: readonly VpnGateNode[];
  /** With only static nodes and no endpoints, nothing is fetched. */
  refreshMs?: number;
  cache: ListCache;
  logger: Logger;
  fetch?: Omit<FetchOptions, 'endpoints' | 'logger' | 'signal'>;
}

/**
 * The current nodes: the cached list at once, then refreshed in the background and every
 * refreshMs; when every endpoint fails, the last good list keeps serving.
 */
export class NodeList {
  #nodes: VpnGateNode[] = [];
  #fetchedAt: number | null = null;
  #source = 'none';
  #timer: NodeJS.Timeout | null = null;
  #abort = new AbortController();
  #refreshing: Promise<void> | null = null;
  readonly #listeners = new Set<(nodes: readonly VpnGateNode[]) => void>();
  readonly #log: Logger;

  constructor(private readonly opts: NodeListOptions) {
    this.#log = opts.logger.child({ component: 'node-list' });
  }

  get nodes(): readonly VpnGateNode[] {
    return this.#nodes;
  }

  get fetchedAt(): number | null {
    return this.#fetchedAt;
  }

  /** Whether there is a list to fetch (false with only --ovpn profiles). */
  get fetchable(): boolean {
    return this.opts.endpoints.length > 0;
  }

  get source(): string {
    return this.#source;
  }

  onChange(fn: (nodes: readonly VpnGateNode[]) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Serves the cache (if any) now; starts the refresh cycle. Resolves after the first refresh when there is no cache. */
  async start(): Promise<void> {
    const cached = this.opts.endpoints.length > 0 ? this.opts.cache.load() : null;
    if (cached && cached.nodes.length > 0) {
      this.#set(cached.nodes, cached.fetchedAt, `cache (${cached.source})`);
      this.#log.info({ event: 'list-from-cache', nodes: cached.nodes.length, ageS: Math.round((Date.now() - cached.fetchedAt) / 1000) }, 'serving the cached node list');
    } else {
      this.#set([], null, 'none');
    }
    if (this.opts.endpoints.length === 0) return;
    const first = this.refresh();
    this.#timer = setInterval(() => void this.refresh(), this.opts.refreshMs ?? 20 * 60_000);
    this.#timer.unref();
    if (!cached) await first;
  }

  /** One refresh (shared if one is running); never rejects: failures keep the current list. */
  refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        const list = await fetchNodeList({ ...this.opts.fetch, endpoints: this.opts.endpoints, logger: this.opts.logger, signal: this.#abort.signal });
        this.#set(list.nodes, list.fetchedAt, list.source);
        try {
          this.opts.cache.save({ fetchedAt: list.fetchedAt, source: list.source, nodes: list.nodes });
        } catch (err) {
          this.#log.warn({ event: 'list-cache-failed', err: (err as Error).message }, 'could not cache the node list');
        }
      } catch (err) {
        if (this.#abort.signal.aborted) return;
        this.#log.warn({ event: 'list-refresh-failed', keeping: this.#nodes.length, err: (err as Error).message }, 'node list refresh failed; keeping the current list');
      } finally {
        this.#refreshing = null;
      }
    })();
    return this.#refreshing;
  }

  #set(listNodes: VpnGateNode[], fetchedAt: number | null, source: string): void {
    this.#nodes = [...this.opts.staticNodes, ...listNodes];
    this.#fetchedAt = fetchedAt;
    this.#source = source;
    for (const fn of this.#listeners) fn(this.#nodes);
  }

  close(): void {
    this.#abort.abort();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#listeners.clear();
  }
}
