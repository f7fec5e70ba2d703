import type { Logger } from '../common/index.js';
import type { FlowRecord } from '../contracts/index.js';
import type { TrafficAggregates, TrafficNetwork, TrafficRepo, TrafficRow } from '../store/index.js';
import { ClosedFlows } from './closed-flows.js';
import { trafficCsv } from './csv.js';
import { dayOf, daysBefore } from './day.js';
import { TrafficLedger, rowKey } from './ledger.js';
import {
  MAX_LEDGER_ROWS,
  TRAFFIC_OPTIONS_KEY,
  parseTrafficOptions,
  trafficOptionsSchema,
  type TrafficOptions,
} from './options.js';
import { aggregate, summarize, type TrafficRange, type TrafficSummary } from './summary.js';

/** How often counted rows are written (and the retention applied). */
const FLUSH_MS = 30_000;

export interface TrafficBookOptions {
  /** Where rows and kept connections go; null: memory only (a core without a database). */
  repo: TrafficRepo | null;
  /** Where the user's options are kept (the store's settings); null: memory only. */
  settings: { setting(key: string): string | null; setSetting(key: string, value: string): void } | null;
  /** The network this computer is on now: its key and the name shown for it. */
  network: () => { key: string; label: string };
  logger: Logger;
  flushMs?: number;
  now?: () => number;
}

/** Today's bytes, for the tray's tooltip and the status line. */
export interface TrafficToday {
  day: string;
  up: number;
  down: number;
  /** Of which through nodes. */
  tunnel: number;
}

/**
 * "Where did my bytes go" (#64): every proxy flow as it ends is counted in the ledger (by local
 * day, network, node, route, rule, program and device, written every 30 s) and listed among the
 * closed connections. Nothing leaves this computer; the retention and the Erase button are the
 * user's. One owner of its timer: close() writes what is pending and stops it.
 */
export class TrafficBook {
  readonly #ledger = new TrafficLedger();
  readonly #closed: ClosedFlows;
  readonly #networks = new Map<string, TrafficNetwork>();
  /** Networks seen since the last write (their label and last time). */
  readonly #networksSeen = new Set<string>();
  /** Rows of a core without a database: pruned by the retention like the table. */
  readonly #memory = new Map<string, TrafficRow>();
  readonly #opts: TrafficBookOptions;
  readonly #log: Logger;
  readonly #now: () => number;
  #options: TrafficOptions;
  /**
   * The written rows added up, as the window polls them: the days before today per range asked
   * (they change only when a flush writes a late row for them, a prune or an erase: a year's sum
   * is read once a day, not every 30 s), and today's (read again after every flush).
   */
  readonly #pastAggregates = new Map<string, TrafficAggregates>();
  readonly #todayAggregates = new Map<string, TrafficAggregates>();
  /** Today's written rows added up (null: read again; every flush and erase clears it). */
  #writtenToday: (TrafficToday & { day: string }) | null = null;
  #timer: NodeJS.Timeout | null;
  /** Bytes counted since start, by route (the metrics' counters). */
  readonly sinceStart = new Map<string, { up: number; down: number }>();

  constructor(opts: TrafficBookOptions) {
    this.#opts = opts;
    this.#log = opts.logger.child({ component: 'traffic' });
    this.#now = opts.now ?? Date.now;
    this.#options = parseTrafficOptions(opts.settings?.setting(TRAFFIC_OPTIONS_KEY) ?? null);
    this.#closed = new ClosedFlows(this.#options.closedMax);
    this.#closed.collectNew = this.#options.keepClosed;
    for (const n of opts.repo?.trafficNetworks() ?? []) this.#networks.set(n.key, n);
    if (this.#options.keepClosed) this.#loadKeptClosed();
    this.#timer = setInterval(() => this.flush(), opts.flushMs ?? FLUSH_MS);
    this.#timer.unref();
  }

  get options(): TrafficOptions {
    return this.#options;
  }

  /** Counts one ended flow; `device` names the shared device it came from ('' for this computer). */
  record(r: FlowRecord, device: string): void {
    const net = this.#opts.network();
    const known = this.#networks.get(net.key);
    const at = this.#now();
    this.#networks.set(net.key, { key: net.key, label: net.label, firstSeen: known?.firstSeen ?? at, lastSeen: at });
    this.#networksSeen.add(net.key);
    this.#ledger.add(r, { network: net.key, device });
    this.#closed.add(r);
    const route = r.route ?? 'NONE';
    const t = this.sinceStart.get(route) ?? { up: 0, down: 0 };
    t.up += r.bytesUp;
    t.down += r.bytesDown;
    this.sinceStart.set(route, t);
  }

  /** The last `days` days (today included), optionally only what went through nodes. */
  summary(days: number, nodesOnly: boolean): TrafficSummary {
    const now = this.#now();
    const range = { from: daysBefore(now, days - 1), to: dayOf(now), nodesOnly };
    return summarize([...this.#writtenAggregates(range), aggregate(this.#ledger.pending, range)], range, (dim, key) =>
      dim === 'network' ? (this.#networks.get(key)?.label ?? key) : key,
    );
  }

  /** Today's totals (the status line asks every few seconds: the written part is read once per flush). */
  today(): TrafficToday {
    const day = dayOf(this.#now());
    if (this.#writtenToday?.day !== day) this.#writtenToday = { day, ...addUp(this.#written(day, day)) };
    const pending = addUp(this.#ledger.pending.filter((r) => r.day === day));
    const w = this.#writtenToday;
    return { day, up: w.up + pending.up, down: w.down + pending.down, tunnel: w.tunnel + pending.tunnel };
  }

  /** The newest closed connections matching `query`, newest first. */
  closed(query: string, limit: number): { connections: FlowRecord[]; held: number; max: number; kept: boolean } {
    return {
      connections: this.#closed.find(query, Math.min(limit, this.#options.closedMax)),
      held: Math.min(this.#closed.size, this.#options.closedMax),
      max: this.#options.closedMax,
      kept: this.#options.keepClosed,
    };
  }

  /** The last `days` days' rows as CSV, and a file name for them. */
  csv(days: number): { filename: string; csv: string } {
    const now = this.#now();
    const from = daysBefore(now, days - 1);
    const to = dayOf(now);
    return { filename: `gatehop-traffic-${from}-to-${to}.csv`, csv: trafficCsv(this.#rows(from, to), this.#networks) };
  }

  /** Changes what the user set; a shorter retention or list applies now. */
  setOptions(change: Partial<TrafficOptions>): TrafficOptions {
    const next = trafficOptionsSchema.parse({ ...this.#options, ...change });
    const wasKept = this.#options.keepClosed;
    this.#options = next;
    this.#opts.settings?.setSetting(TRAFFIC_OPTIONS_KEY, JSON.stringify(next));
    this.#closed.setMax(next.closedMax);
    this.#closed.collectNew = next.keepClosed;
    if (wasKept && !next.keepClosed) this.#opts.repo?.clearClosedFlows();
    this.flush();
    return next;
  }

  /** Forgets every count, network and closed connection, written or not. */
  erase(): void {
    this.#ledger.clear();
    this.#memory.clear();
    this.#writtenToday = null;
    this.#pastAggregates.clear();
    this.#todayAggregates.clear();
    this.#closed.clear();
    this.#networks.clear();
    this.#networksSeen.clear();
    this.#opts.repo?.eraseTraffic();
    this.#log.info({ event: 'traffic-erased' }, 'the traffic ledger and closed connections were erased');
  }

  /** Writes what was counted, applies the retention, and keeps the closed connections if the user said so. */
  flush(): void {
    const repo = this.#opts.repo;
    const now = this.#now();
    const cutoff = daysBefore(now, this.#options.retentionDays - 1);
    const networks = [...this.#networksSeen].map((k) => this.#networks.get(k)!).filter(Boolean);
    this.#networksSeen.clear();
    const rows = this.#ledger.take();
    const fresh = this.#closed.takeNew();
    this.#writtenToday = null;
    this.#todayAggregates.clear();
    if (rows.some((r) => r.day < dayOf(now))) this.#pastAggregates.clear(); // a flow that ended before midnight
    if (!repo) {
      for (const r of rows) this.#addToMemory(r);
      for (const [k, r] of this.#memory) if (r.day < cutoff) this.#memory.delete(k);
      this.#pastAggregates.clear(); // memory is cheap to add up again
      return;
    }
    repo.addTraffic(rows, networks);
    const pruned = repo.pruneTraffic(cutoff, MAX_LEDGER_ROWS);
    if (pruned > 0)
      this.#log.info({ event: 'traffic-pruned', rows: pruned, before: cutoff }, 'old traffic rows deleted');
    if (this.#options.keepClosed && fresh.length > 0)
      repo.addClosedFlows(
        fresh.map((r) => ({ endedAt: r.endedAt, json: JSON.stringify(r) })),
        this.#options.closedMax,
      );
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.flush();
  }

  /** Written and pending rows of days from..to. */
  #rows(from: string, to: string): TrafficRow[] {
    return [...this.#written(from, to), ...this.#ledger.pending.filter((r) => r.day >= from && r.day <= to)];
  }

  /** What the database (or memory) holds for `range`: the days before today, and today. */
  #writtenAggregates(range: TrafficRange): TrafficAggregates[] {
    const today = dayOf(this.#now());
    const past = { ...range, to: daysBefore(this.#now(), 1) };
    const sources: TrafficAggregates[] = [];
    if (past.to >= range.from) sources.push(this.#cached(this.#pastAggregates, past));
    if (range.to === today) sources.push(this.#cached(this.#todayAggregates, { ...range, from: today }));
    return sources;
  }

  #cached(cache: Map<string, TrafficAggregates>, range: TrafficRange): TrafficAggregates {
    const key = `${range.from} ${range.to} ${range.nodesOnly}`;
    let a = cache.get(key);
    if (!a) {
      const repo = this.#opts.repo;
      a = repo
        ? repo.trafficAggregates(range.from, range.to, range.nodesOnly)
        : aggregate([...this.#memory.values()], range);
      if (cache.size >= 8) cache.clear(); // a handful of ranges (the day changes the keys); the window asks one at a time
      cache.set(key, a);
    }
    return a;
  }

  #written(from: string, to: string): TrafficRow[] {
    if (this.#opts.repo) return this.#opts.repo.trafficRows(from, to);
    return [...this.#memory.values()].filter((r) => r.day >= from && r.day <= to);
  }

  #addToMemory(r: TrafficRow): void {
    const key = rowKey(r);
    const had = this.#memory.get(key);
    if (!had) return void this.#memory.set(key, { ...r });
    had.bytesUp += r.bytesUp;
    had.bytesDown += r.bytesDown;
    had.flows += r.flows;
  }

  #loadKeptClosed(): void {
    let bad = 0;
    for (const json of this.#opts.repo?.closedFlows() ?? []) {
      try {
        this.#closed.add(JSON.parse(json) as FlowRecord);
      } catch {
        bad++;
      }
    }
    this.#closed.takeNew(); // already written
    if (bad > 0)
      this.#log.warn({ event: 'closed-flows-unreadable', rows: bad }, 'some kept closed connections could not be read');
  }
}

function addUp(rows: readonly TrafficRow[]): { up: number; down: number; tunnel: number } {
  const t = { up: 0, down: 0, tunnel: 0 };
  for (const r of rows) {
    t.up += r.bytesUp;
    t.down += r.bytesDown;
    if (r.route === 'TUNNEL') t.tunnel += r.bytesUp + r.bytesDown;
  }
  return t;
}
