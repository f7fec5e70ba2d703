import {
  ErrorCodes,
  GatehopError,
  Listeners,
  type Logger,
  detach,
  ignoreRejection,
  settleFirst,
} from '../common/index.js';
import { describeSkipped, parseVpnGateCsv, type ParsedList } from './csv.js';
import { defaultAddressPolicy, type AddressPolicy } from '../reach/index.js';
import { directDialer } from '../reach/index.js';
import type { DialVia, Dialer } from '../reach/index.js';
import { raceSources, type RaceOptions } from './list-race.js';
import type { VpnGateNode } from './node.js';
import { NodePool } from './pool.js';
import { SourceBook } from './source-book.js';
import type { ListMeta, ListStatus, ListVia, NodeListOptions, SourceOptions } from './node-list-types.js';

export type {
  ListMeta,
  ListStatus,
  ListVia,
  NodeListOptions,
  NodeListStore,
  SourceOptions,
  SourceState,
} from './node-list-types.js';
import { candidateSources, FORGET_MIRROR_MS, orderSources, type ListSource, type SourceRecord } from './sources.js';

const DAY_MS = 24 * 3600_000;
const DEFAULT_SOURCES: SourceOptions = { userSources: [], mirrors: true, throughTunnel: true, keepDays: 7 };

/**
 * The current nodes: the remembered pool at once, then refreshed in the background and every
 * refreshMs from every source there is (see core/vpngate/README.md for the order); when every
 * source fails, the pool keeps serving. An imported list joins the pool like a fetched one.
 */
export class NodeList {
  #nodes: readonly VpnGateNode[] = [];
  #meta: ListMeta | null = null;
  #pool = new NodePool();
  #sourceOpts: SourceOptions;
  #dialer: Dialer;
  #timer: NodeJS.Timeout | null = null;
  readonly #abort = new AbortController();
  #refreshing: Promise<void> | null = null;
  #lastRefresh: { at: number; ok: boolean } | null = null;
  #skipped: Record<string, number> = {};
  /** The list last taken came in clear, and no HTTPS list has vouched for its CAs since (#59). */
  #inClear = false;
  readonly #background = new Set<Promise<unknown>>();
  /** The sources as remembered, and the mirror directories (source-book.ts). */
  readonly #book: SourceBook;
  readonly #listeners: Listeners<readonly VpnGateNode[]>;
  readonly #log: Logger;
  readonly #now: () => number;

  constructor(private readonly opts: NodeListOptions) {
    this.#log = opts.logger.child({ component: 'node-list' });
    this.#listeners = new Listeners(this.#log, 'node list');
    this.#sourceOpts = { ...DEFAULT_SOURCES, ...opts.sources };
    this.#dialer = opts.dialer ?? directDialer();
    this.#now = opts.now ?? Date.now;
    this.#book = new SourceBook({
      store: opts.store,
      now: this.#now,
      log: this.#log,
      policy: this.#policy,
      options: () => ({
        mirrors: this.#sourceOpts.mirrors,
        timeoutMs: this.opts.fetch?.timeoutMs ?? this.#sourceOpts.timeoutMs ?? 15_000,
      }),
      signal: this.#abort.signal,
      track: (p) => {
        this.#background.add(p);
        ignoreRejection(p.finally(() => this.#background.delete(p)));
      },
    });
  }

  get nodes(): readonly VpnGateNode[] {
    return this.#nodes;
  }

  get fetchedAt(): number | null {
    return this.#meta?.fetchedAt ?? null;
  }

  /** Where the list came from, e.g. `mirror http://…/api/iphone/`; `none` before any. */
  get source(): string {
    return this.#meta
      ? `${this.#meta.via === 'cache' ? 'cache (' : ''}${this.#meta.source}${this.#meta.via === 'cache' ? ')' : ''}`
      : 'none';
  }

  /** How the last refresh ended; null before any. */
  get lastRefresh(): { at: number; ok: boolean } | null {
    return this.#lastRefresh;
  }

  get via(): ListVia {
    return this.#meta?.via ?? 'none';
  }

  /** Whether there is anywhere to fetch a list from (false with only --ovpn profiles). */
  get fetchable(): boolean {
    return this.opts.endpoints.length > 0 || this.#sourceOpts.userSources.length > 0;
  }

  onChange(fn: (nodes: readonly VpnGateNode[]) => void): () => void {
    return this.#listeners.add(fn);
  }

  status(): ListStatus {
    const records = new Map(this.opts.store.loadSources().map((r) => [r.url, r]));
    return {
      source: this.#meta?.source ?? null,
      via: this.via,
      fetchedAt: this.fetchedAt,
      nodes: this.#nodes.length,
      refreshing: this.#refreshing !== null,
      skipped: { ...this.#skipped },
      sources: this.#candidates(records).map((s) => {
        const r = records.get(s.url);
        const okAt = r?.lastOkAt ?? null;
        const failAt = r?.lastFailAt ?? null;
        const ok = okAt === null && failAt === null ? null : (okAt ?? -1) >= (failAt ?? -1);
        return {
          url: s.url,
          kind: s.kind,
          via: r?.lastVia ?? null,
          ok,
          error: ok === false ? (r?.lastError ?? null) : null,
          at: ok === null ? null : Math.max(okAt ?? 0, failAt ?? 0),
        };
      }),
    };
  }

  /** Serves the pool (if any) now; starts the refresh cycle. Resolves after the first refresh when there is no pool. */
  async start(): Promise<void> {
    const now = this.#now();
    const kept = this.fetchable ? this.opts.store.loadPool(now - this.#keepMs()) : [];
    this.#pool = new NodePool(kept);
    const meta = this.opts.store.loadListMeta();
    if (kept.length > 0) {
      this.#meta = {
        fetchedAt: meta?.fetchedAt ?? Math.max(...kept.map((e) => e.lastListed)),
        source: meta?.source ?? 'cache',
        via: 'cache',
        nodes: kept.length,
      };
      this.#log.info(
        { event: 'list-from-cache', nodes: kept.length, ageS: Math.round((now - this.#meta.fetchedAt) / 1000) },
        `serving ${kept.length} remembered nodes`,
      );
    }
    this.#publish();
    if (!this.fetchable) return;
    const first = this.refresh();
    this.#timer = setInterval(
      () => detach(this.#log, 'list-refresh', this.refresh()),
      this.opts.refreshMs ?? 20 * 60_000,
    );
    this.#timer.unref();
    if (kept.length === 0) await first;
  }

  /** One refresh (shared if one is running); never rejects: failures keep the current pool. */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#refresh().finally(() => {
      this.#refreshing = null;
    });
    return this.#refreshing;
  }

  /**
   * Takes a list the user has (a file passed around by e-mail or chat; it may be weeks old): its
   * nodes join the pool as listed now. Throws GH_ERR_LIST_INVALID, saying why, for anything that is
   * not a VPN Gate list; nothing is changed then.
   */
  importCsv(text: string, from = 'import'): ParsedList {
    const parsed = parseVpnGateCsv(text, { addressPolicy: this.#policy });
    if (parsed.nodes.length === 0)
      throw new GatehopError(
        ErrorCodes.LIST_INVALID,
        `no usable node in the file (skipped: ${describeSkipped(parsed.skipped)})`,
      );
    this.#skipped = parsed.skipped;
    // The user chose this file: it vouches for its rows' CAs as an HTTPS list would.
    this.#take(parsed.nodes, this.#now(), from, 'import', 'file');
    this.#log.info(
      { event: 'list-imported', from, nodes: parsed.nodes.length, skipped: parsed.skipped },
      `imported ${parsed.nodes.length} nodes from ${from}`,
    );
    return parsed;
  }

  /**
   * A tunnel came up: if the list in use came in clear, ask the https sources through it now
   * rather than at the next refresh (see #vouchThroughTunnel). Shares a running refresh; never
   * rejects.
   */
  vouch(): Promise<void> {
    if (!this.#inClear || !this.fetchable) return Promise.resolve();
    this.#refreshing ??= (async () => {
      const records = new Map(this.opts.store.loadSources().map((r) => [r.url, r]));
      await this.#vouchThroughTunnel(orderSources(this.#candidates(records), records, this.#now()), records);
    })()
      .catch((err: unknown) => {
        if (!this.#abort.signal.aborted)
          this.#log.info({ event: 'list-vouch-failed', err: (err as Error).message }, 'could not vouch for the list');
      })
      .finally(() => {
        this.#refreshing = null;
      });
    return this.#refreshing;
  }

  /** A reload: the next refresh uses these. */
  updateOptions(sources: Partial<SourceOptions>, dialer?: Dialer): void {
    this.#sourceOpts = { ...this.#sourceOpts, ...sources };
    if (dialer) this.#dialer = dialer;
    // The address policy may have changed with them (vpngate.allowPrivateNodes): the pool passes it again.
    this.#publish();
  }

  async close(): Promise<void> {
    this.#abort.abort();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await Promise.allSettled([this.#refreshing, ...this.#background]);
  }

  // ---- internals ----

  #keepMs(): number {
    return this.#sourceOpts.keepDays * DAY_MS;
  }

  #candidates(records: ReadonlyMap<string, SourceRecord>): ListSource[] {
    const now = this.#now();
    const mirrors = this.#sourceOpts.mirrors
      ? [...records.values()].filter((r) => r.kind === 'mirror' && now - (r.lastOkAt ?? r.foundAt) < FORGET_MIRROR_MS)
      : [];
    const endpoints = this.opts.endpoints.map((url) => ({
      url,
      kind: this.opts.endpointKind ?? ('official' as const),
    }));
    return candidateSources(endpoints, this.#sourceOpts.userSources, mirrors);
  }

  async #refresh(): Promise<void> {
    const f = this.opts.fetch ?? {};
    const signal = this.#abort.signal;
    const records = new Map(this.opts.store.loadSources().map((r) => [r.url, r]));
    this.#book.forgetOldMirrors(records);
    // One order for the whole refresh: this refresh's direct failures must not push a source
    // back for the pass through the tunnel, where it may well answer.
    const order = orderSources(this.#candidates(records), records, this.#now());
    const passes = f.attempts ?? 2;
    const failures: string[] = [];
    try {
      for (let pass = 0; pass < passes; pass++) {
        if (pass > 0) await sleep((f.backoffMs ?? 2_000) * 2 ** (pass - 1), signal);
        for (const dialer of this.#dialers()) {
          if (!dialer) continue;
          const { winner, attempts } = await raceSources({
            ...this.#raceOptions(order, dialer),
            onReached: (s) => this.#book.discover(s, dialer),
          });
          this.#book.record(attempts, records);
          failures.push(...attempts.filter((a) => !a.ok).map((a) => `${a.url} (${a.via}): ${a.error}`));
          if (winner) {
            this.#skipped = winner.skipped;
            if (Object.keys(winner.skipped).length > 0)
              this.#log.info(
                { event: 'list-rows-skipped', source: winner.source.url, skipped: winner.skipped },
                `${describeSkipped(winner.skipped)} rows of the list from ${winner.source.url} are not used`,
              );
            this.#take(
              winner.nodes,
              this.#now(),
              winner.source.url,
              viaOf(winner.source, dialer.via),
              winner.secure ? 'https' : null,
            );
            this.#lastRefresh = { at: this.#now(), ok: true };
            if (!winner.secure && dialer.via !== 'tunnel') await this.#vouchThroughTunnel(order, records);
            return;
          }
        }
      }
      this.#lastRefresh = { at: this.#now(), ok: false };
      this.#log.warn(
        {
          event: 'list-refresh-failed',
          keeping: this.#nodes.length,
          tried: failures.length,
          err: failures.slice(-6).join('; '),
        },
        `node list refresh failed; keeping ${this.#nodes.length} nodes (${failures.length ? failures.slice(-3).join('; ') : 'no source to try'})`,
      );
    } catch (err) {
      if (signal.aborted) return;
      this.#lastRefresh = { at: this.#now(), ok: false };
      this.#log.warn(
        { event: 'list-refresh-failed', keeping: this.#nodes.length, err: (err as Error).message },
        'node list refresh failed; keeping the current list',
      );
    }
  }

  /**
   * A list came in clear (a mirror, where vpngate.net is blocked): its private CAs vouch for
   * nothing (#59). With a tunnel up, the https sources are asked through it as well, so the nodes
   * they name (SoftEther's self-signed ones among them) are vouched for by a list the path could
   * not write. Quietly nothing when no tunnel is up or no source is https; a failure only logs.
   */
  async #vouchThroughTunnel(order: readonly ListSource[], records: Map<string, SourceRecord>): Promise<void> {
    const https = order.filter((s) => s.url.startsWith('https:'));
    const dialer = this.#sourceOpts.throughTunnel ? this.opts.tunnelDialer?.() : null;
    if (https.length === 0 || !dialer) return;
    const { winner, attempts } = await raceSources(this.#raceOptions(https, dialer));
    this.#book.record(attempts, records);
    if (winner?.secure) {
      this.#take(winner.nodes, this.#now(), winner.source.url, 'tunnel', 'https');
      this.#log.info(
        { event: 'list-vouched', source: winner.source.url, nodes: winner.nodes.length },
        `the list from ${winner.source.url} over HTTPS, through the tunnel, vouches for the CAs of ${winner.nodes.length} nodes`,
      );
    } else
      this.#log.info(
        { event: 'list-vouch-failed', tried: attempts.length },
        'no list over HTTPS through the tunnel this time: nodes with their own CA stay unused until one comes',
      );
  }

  /** One race over `sources` through `dialer`, with the configured deadlines, caps and pace. */
  #raceOptions(sources: readonly ListSource[], dialer: Dialer): RaceOptions {
    const f = this.opts.fetch ?? {};
    return {
      sources,
      dialer,
      timeoutMs: f.timeoutMs ?? this.#sourceOpts.timeoutMs ?? 15_000,
      maxBytes: f.maxBytes ?? 8 * 1024 * 1024,
      staggerMs: f.staggerMs ?? this.#sourceOpts.headStartMs ?? 1_500,
      concurrency: f.concurrency ?? 3,
      signal: this.#abort.signal,
      logger: this.opts.logger,
      addressPolicy: this.#policy,
    };
  }

  /** Direct (or the upstream proxy) first; through a working tunnel only when that found nothing. */
  *#dialers(): Generator<Dialer | null> {
    yield this.#dialer;
    if (this.#sourceOpts.throughTunnel && this.opts.tunnelDialer) yield this.opts.tunnelDialer();
  }

  /**
   * Takes a list's rows into the pool. `vouchedBy` says what vouches for the CAs its rows carry
   * (see VpnGateNode.caVouchedBy): null for a list that came in clear.
   */
  #take(
    listNodes: readonly VpnGateNode[],
    at: number,
    source: string,
    via: ListVia,
    vouchedBy: 'https' | 'file' | null,
  ): void {
    if (vouchedBy === 'https') this.#inClear = false;
    else if (vouchedBy === null) this.#inClear = true;
    const { kept, refused, rekeyed } = this.#pool.merge(
      listNodes.map((n) => ({ ...n, caVouchedBy: vouchedBy })),
      at,
    );
    if (refused.length > 0)
      this.#log.warn(
        { event: 'list-ca-change-refused', source, nodes: refused.length, first: refused.slice(0, 5) },
        `the list from ${source} came without HTTPS and gave ${refused.length} nodes (${refused.slice(0, 3).join(', ')}${refused.length > 3 ? ', …' : ''}) another CA than an HTTPS list or your file did: kept the one that was vouched for`,
      );
    if (rekeyed.length > 0) {
      this.#log.info(
        { event: 'nodes-rekeyed', source, nodes: rekeyed.length, first: rekeyed.slice(0, 5) },
        `${rekeyed.length} nodes (${rekeyed.slice(0, 3).join(', ')}${rekeyed.length > 3 ? ', …' : ''}) name another CA than before: their honesty verdicts start over`,
      );
      this.opts.onRekeyed?.(rekeyed);
    }
    const gone = this.#pool.prune(this.#now() - this.#keepMs());
    this.#meta = { fetchedAt: at, source, via, nodes: listNodes.length };
    try {
      this.opts.store.savePool(kept, at);
      if (gone.length > 0) this.opts.store.forgetNodes(gone);
      this.opts.store.saveListMeta(this.#meta);
    } catch (err) {
      this.#log.warn({ event: 'list-cache-failed', err: (err as Error).message }, 'could not save the node pool');
    }
    if (gone.length > 0)
      this.#log.info(
        { event: 'pool-pruned', dropped: gone.length, keepDays: this.#sourceOpts.keepDays },
        `forgot ${gone.length} nodes not listed for ${this.#sourceOpts.keepDays} days`,
      );
    this.#publish();
  }

  /** The policy as configured now (a reload changes it). */
  readonly #policy: AddressPolicy = (ip) => (this.opts.addressPolicy ?? defaultAddressPolicy)(ip);

  #publish(): void {
    // Remembered nodes pass today's policy too: a pool saved by an older version or under another
    // setting may hold addresses that are no longer dialled.
    const pool = this.#pool.nodes();
    const allowed = pool.filter((n) => this.#policy(n.ip) === null);
    if (allowed.length < pool.length)
      this.#log.info(
        { event: 'pool-nodes-refused', nodes: pool.length - allowed.length },
        `${pool.length - allowed.length} remembered nodes have addresses that are not dialled`,
      );
    this.#nodes = [...this.opts.staticNodes, ...allowed];
    this.#listeners.emit(this.#nodes);
  }
}

/** The `via` of a list fetched from `s` over a dialer (see ListVia). */
function viaOf(s: ListSource, dial: DialVia): ListVia {
  if (dial !== 'direct') return dial;
  return s.kind === 'mirror' ? 'mirror' : s.kind === 'user' ? 'user' : 'direct';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return settleFirst<void>({ signal, what: 'fetch the node list' }, (settle) => {
    const t = setTimeout(() => settle.resolve(), ms);
    return () => clearTimeout(t);
  });
}
