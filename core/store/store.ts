import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import { MIGRATIONS } from './migrations.js';
import type {
  LatencySample,
  NodeHistory,
  Selection,
  StoredListMeta,
  StoredListSource,
  StoredNodeList,
  StoredPoolEntry,
  StoreHealth,
} from './types.js';

type Db = Database.Database;

/**
 * The native addon to load, when not the one next to better-sqlite3: `npm start` under a real
 * Electron builds one for Electron's ABI (scripts/electron-native.mjs) and names it here, so the
 * Node build that the CLI and tests use stays in place.
 */
export const SQLITE_BINDING_ENV = 'GATEHOP_SQLITE_BINDING';

function openDatabase(path: string, options: Database.Options = {}): Db {
  const binding = process.env[SQLITE_BINDING_ENV];
  return new Database(path, binding ? { ...options, nativeBinding: binding } : options);
}

export interface StoreOptions {
  /** File path, or ':memory:'. */
  path: string;
  logger: Logger;
  /** Latency samples older than this are deleted (default 24 h). */
  latencyWindowMs?: number;
  /** Batched writes are flushed after this long (default 1 s) or at 200 queued. */
  flushMs?: number;
}

const DISK_FULL = new Set([
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_IOERR_WRITE',
  'SQLITE_READONLY',
  'SQLITE_CANTOPEN',
  'ENOSPC',
]);
const CORRUPT = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB']);

interface HistoryRow {
  node_id: string;
  successes: number;
  failures: number;
  consecutive_failures: number;
  last_success_at: number | null;
  last_failure_at: number | null;
  backoff_until: number | null;
  avg_throughput_bps: number | null;
  avg_connect_ms: number | null;
}

/**
 * What Gatehop remembers, in SQLite (WAL). A corrupt or unreadable file is moved aside and
 * recreated; a full disk or failed write degrades to an in-memory database with a warning. Neither
 * ever stops the app. Frequent writes (latency samples) are batched off the hot path.
 */
export class Store {
  #db: Db;
  #health: StoreHealth = 'ok';
  readonly #log: Logger;
  readonly #path: string;
  readonly #latencyWindowMs: number;
  readonly #flushMs: number;
  #pending: LatencySample[] = [];
  #flushTimer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(opts: StoreOptions) {
    this.#log = opts.logger.child({ component: 'store' });
    this.#path = opts.path;
    this.#latencyWindowMs = opts.latencyWindowMs ?? 24 * 3600_000;
    this.#flushMs = opts.flushMs ?? 1000;
    this.#db = this.#open();
  }

  /**
   * The cached node list of a database file, read-only and without migrating or repairing
   * anything (`gatehop check`). null when there is no file or no list; throws GH_ERR_STORE_FAILED
   * when the file cannot be read as a Gatehop database.
   */
  static readCachedList<T>(path: string): StoredNodeList<T> | null {
    if (!existsSync(path)) return null;
    let db: Db | null = null;
    try {
      db = openDatabase(path, { readonly: true, fileMustExist: true });
      const version = db.pragma('user_version', { simple: true }) as number;
      const row = db.prepare('SELECT fetched_at, source, nodes_json FROM node_list WHERE id = 1').get() as
        { fetched_at: number; source: string; nodes_json: string } | undefined;
      // Before v3 the latest list held its nodes; from v3 they are in the pool.
      const nodes =
        version < 3
          ? row
            ? (JSON.parse(row.nodes_json) as T[])
            : []
          : (
              db.prepare('SELECT node_json FROM nodes WHERE node_json IS NOT NULL').all() as Array<{
                node_json: string;
              }>
            ).map((r) => JSON.parse(r.node_json) as T);
      return row || nodes.length > 0 ? { fetchedAt: row?.fetched_at ?? 0, source: row?.source ?? 'pool', nodes } : null;
    } catch (err) {
      throw new GatehopError(ErrorCodes.STORE_FAILED, `${path}: ${(err as Error).message}`, { cause: err });
    } finally {
      db?.close();
    }
  }

  /** The list sources a database remembers, read-only (`gatehop check`); [] when there are none. */
  static readListSources(path: string): StoredListSource[] {
    if (!existsSync(path)) return [];
    let db: Db | null = null;
    try {
      db = openDatabase(path, { readonly: true, fileMustExist: true });
      if ((db.pragma('user_version', { simple: true }) as number) < 3) return [];
      const rows = db.prepare('SELECT * FROM list_sources ORDER BY found_at, url').all() as SourceRow[];
      return rows.map(rowToSource);
    } catch (err) {
      throw new GatehopError(ErrorCodes.STORE_FAILED, `${path}: ${(err as Error).message}`, { cause: err });
    } finally {
      db?.close();
    }
  }

  /** 'recovered' after a corrupt file was replaced; 'memory-only' when nothing persists any more. */
  get health(): StoreHealth {
    return this.#health;
  }

  get schemaVersion(): number {
    return this.#db.pragma('user_version', { simple: true }) as number;
  }

  #open(): Db {
    if (this.#path === ':memory:') return this.#init(openDatabase(':memory:'));
    try {
      mkdirSync(dirname(this.#path), { recursive: true });
      return this.#init(openDatabase(this.#path));
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (CORRUPT.has(code) || /not a database|malformed/i.test((err as Error).message)) {
        const aside = `${this.#path}.corrupt-${Date.now()}`;
        this.#log.warn(
          { event: 'store-corrupt', path: this.#path, movedTo: aside, err: (err as Error).message },
          'database is corrupt: moved aside, starting with an empty history',
        );
        for (const suffix of ['', '-wal', '-shm']) {
          if (existsSync(this.#path + suffix)) renameSync(this.#path + suffix, aside + suffix);
        }
        this.#health = 'recovered';
        try {
          return this.#init(openDatabase(this.#path));
        } catch (again) {
          return this.#memoryOnly(again);
        }
      }
      return this.#memoryOnly(err);
    }
  }

  #memoryOnly(err: unknown): Db {
    this.#health = 'memory-only';
    this.#log.warn(
      { event: 'store-memory-only', path: this.#path, err: (err as Error).message },
      'cannot use the database file: history is kept in memory only until restart',
    );
    return this.#init(openDatabase(':memory:'));
  }

  #init(db: Db): Db {
    if (this.#path !== ':memory:' && db.name !== ':memory:') db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 2000');
    // Reading the schema touches every page header: a damaged file fails here, not later.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    const version = db.pragma('user_version', { simple: true }) as number;
    for (let v = version; v < MIGRATIONS.length; v++) {
      db.transaction(() => {
        db.exec(MIGRATIONS[v]!);
        db.pragma(`user_version = ${v + 1}`);
      })();
      this.#log.info({ event: 'store-migrated', from: v, to: v + 1 }, 'database schema migrated');
    }
    return db;
  }

  /** Runs a write; on a disk failure switches to memory and retries there once. */
  #write<T>(what: string, fn: (db: Db) => T): T {
    if (this.#closed) throw new GatehopError(ErrorCodes.STORE_FAILED, `store closed: cannot ${what}`);
    try {
      return fn(this.#db);
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (!DISK_FULL.has(code) && !CORRUPT.has(code))
        throw new GatehopError(ErrorCodes.STORE_FAILED, `store: ${what} failed: ${(err as Error).message}`, {
          cause: err,
        });
      try {
        this.#db.close();
      } catch {
        /* already broken */
      }
      this.#db = this.#memoryOnly(err);
      return fn(this.#db);
    }
  }

  // ---- node list: the pool, the latest list's metadata, the sources ----

  /** The latest list: its metadata, and its nodes added to the pool (as listed at fetchedAt). */
  saveNodeList<T extends { id: string }>(list: StoredNodeList<T>): void {
    this.#write('save node list', (db) =>
      db.transaction(() => {
        this.#saveMeta(db, {
          fetchedAt: list.fetchedAt,
          source: list.source,
          via: list.via ?? 'direct',
          nodes: list.nodes.length,
        });
        this.#upsertPool(db, list.nodes, list.fetchedAt);
      })(),
    );
  }

  /** The latest list's metadata with every node of the pool; null when there is none. */
  loadNodeList<T>(): StoredNodeList<T> | null {
    const meta = this.loadListMeta();
    const pool = this.loadPool<T>(0);
    if (!meta && pool.length === 0) return null;
    return {
      fetchedAt: meta?.fetchedAt ?? 0,
      source: meta?.source ?? 'pool',
      via: meta?.via ?? 'direct',
      nodes: pool.map((e) => e.node),
    };
  }

  saveListMeta(meta: StoredListMeta): void {
    this.#write('save list metadata', (db) => this.#saveMeta(db, meta));
  }

  loadListMeta(): StoredListMeta | null {
    const r = this.#db.prepare('SELECT fetched_at, source, via, node_count FROM node_list WHERE id = 1').get() as
      { fetched_at: number; source: string; via: string; node_count: number } | undefined;
    return r ? { fetchedAt: r.fetched_at, source: r.source, via: r.via, nodes: r.node_count } : null;
  }

  #saveMeta(db: Db, m: StoredListMeta): void {
    db.prepare(
      "INSERT OR REPLACE INTO node_list (id, fetched_at, source, nodes_json, via, node_count) VALUES (1, ?, ?, '[]', ?, ?)",
    ).run(m.fetchedAt, m.source, m.via, m.nodes);
  }

  /** Adds or refreshes pool nodes listed at `at` (first seen kept, last seen moved forward only). */
  savePoolNodes<T extends { id: string }>(nodes: readonly T[], at: number): void {
    this.#write('save node pool', (db) => db.transaction(() => this.#upsertPool(db, nodes, at))());
  }

  #upsertPool<T extends { id: string }>(db: Db, nodes: readonly T[], at: number): void {
    const up = db.prepare(
      `INSERT INTO nodes (id, first_seen, last_seen, node_json) VALUES (?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen), first_seen = min(first_seen, excluded.first_seen), node_json = excluded.node_json`,
    );
    for (const n of nodes) up.run(n.id, at, at, JSON.stringify(n));
  }

  /** The pool: nodes with a profile last listed at or after `sinceMs`, most recent first. A row that does not parse is skipped. */
  loadPool<T>(sinceMs: number): Array<StoredPoolEntry<T>> {
    const rows = this.#db
      .prepare(
        'SELECT node_json, first_seen, last_seen FROM nodes WHERE node_json IS NOT NULL AND last_seen >= ? ORDER BY last_seen DESC, id',
      )
      .all(sinceMs) as Array<{ node_json: string; first_seen: number; last_seen: number }>;
    const out: Array<StoredPoolEntry<T>> = [];
    let bad = 0;
    for (const r of rows) {
      try {
        out.push({ node: JSON.parse(r.node_json) as T, firstSeen: r.first_seen, lastListed: r.last_seen });
      } catch {
        bad++;
      }
    }
    if (bad > 0)
      this.#log.warn({ event: 'store-bad-pool-rows', bad }, `${bad} remembered nodes are unreadable; ignoring them`);
    return out;
  }

  /** Forgets nodes and what was learnt about them (history, latency samples). */
  forgetNodes(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.#write('forget nodes', (db) =>
      db.transaction(() => {
        for (const table of ['nodes WHERE id', 'node_history WHERE node_id', 'latency_samples WHERE node_id']) {
          const del = db.prepare(`DELETE FROM ${table} = ?`);
          for (const id of ids) del.run(id);
        }
      })(),
    );
  }

  firstSeen(nodeId: string): { firstSeen: number; lastSeen: number } | null {
    const r = this.#db.prepare('SELECT first_seen, last_seen FROM nodes WHERE id = ?').get(nodeId) as
      { first_seen: number; last_seen: number } | undefined;
    return r ? { firstSeen: r.first_seen, lastSeen: r.last_seen } : null;
  }

  listSources(): StoredListSource[] {
    return (this.#db.prepare('SELECT * FROM list_sources ORDER BY found_at, url').all() as SourceRow[]).map(
      rowToSource,
    );
  }

  saveListSource(r: StoredListSource): void {
    this.#write('save list source', (db) =>
      db
        .prepare(
          'INSERT OR REPLACE INTO list_sources (url, kind, found_at, found_from, last_ok_at, last_fail_at, last_error, last_via, last_nodes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          r.url,
          r.kind,
          r.foundAt,
          r.foundFrom,
          r.lastOkAt,
          r.lastFailAt,
          r.lastError?.slice(0, 500) ?? null,
          r.lastVia,
          r.lastNodes,
        ),
    );
  }

  forgetListSource(url: string): void {
    this.#write('forget list source', (db) => db.prepare('DELETE FROM list_sources WHERE url = ?').run(url));
  }

  // ---- history ----

  history(nodeId: string): NodeHistory {
    const r = this.#db.prepare('SELECT * FROM node_history WHERE node_id = ?').get(nodeId) as HistoryRow | undefined;
    return r ? rowToHistory(r) : emptyHistory(nodeId);
  }

  allHistory(): Map<string, NodeHistory> {
    const rows = this.#db.prepare('SELECT * FROM node_history').all() as HistoryRow[];
    return new Map(rows.map((r) => [r.node_id, rowToHistory(r)]));
  }

  saveHistory(h: NodeHistory): void {
    this.#write('save history', (db) =>
      db
        .prepare(
          `INSERT OR REPLACE INTO node_history (node_id, successes, failures, consecutive_failures, last_success_at,
             last_failure_at, backoff_until, avg_throughput_bps, avg_connect_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          h.nodeId,
          h.successes,
          h.failures,
          h.consecutiveFailures,
          h.lastSuccessAt,
          h.lastFailureAt,
          h.backoffUntil,
          h.avgThroughputBps,
          h.avgConnectMs,
        ),
    );
  }

  // ---- latency samples (batched) ----

  addLatency(sample: LatencySample): void {
    if (this.#closed) return;
    this.#pending.push(sample);
    if (this.#pending.length >= 200) this.flush();
    else if (!this.#flushTimer) {
      this.#flushTimer = setTimeout(() => this.flush(), this.#flushMs);
      this.#flushTimer.unref();
    }
  }

  latency(nodeId: string | null, sinceMs: number): LatencySample[] {
    this.flush();
    const rows = (
      nodeId
        ? this.#db
            .prepare(
              'SELECT node_id, at, kind, ms, success FROM latency_samples WHERE node_id = ? AND at >= ? ORDER BY at',
            )
            .all(nodeId, sinceMs)
        : this.#db
            .prepare('SELECT node_id, at, kind, ms, success FROM latency_samples WHERE at >= ? ORDER BY at')
            .all(sinceMs)
    ) as Array<{ node_id: string; at: number; kind: LatencySample['kind']; ms: number | null; success: number }>;
    return rows.map((r) => ({ nodeId: r.node_id, at: r.at, kind: r.kind, ms: r.ms, success: r.success === 1 }));
  }

  /** Writes queued samples in one transaction and drops those older than the window. */
  flush(): void {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    if (this.#pending.length === 0 || this.#closed) return;
    const batch = this.#pending.splice(0);
    this.#write('write latency samples', (db) =>
      db.transaction(() => {
        const ins = db.prepare('INSERT INTO latency_samples (node_id, at, kind, ms, success) VALUES (?, ?, ?, ?, ?)');
        for (const s of batch) ins.run(s.nodeId, s.at, s.kind, s.ms, s.success ? 1 : 0);
        db.prepare('DELETE FROM latency_samples WHERE at < ?').run(Date.now() - this.#latencyWindowMs);
      })(),
    );
  }

  // ---- selection, settings, system proxy ----

  selection(group: string): Selection | null {
    const r = this.#db.prepare('SELECT grp, node_id, mode FROM selection WHERE grp = ?').get(group) as
      { grp: string; node_id: string | null; mode: 'auto' | 'manual' } | undefined;
    return r ? { group: r.grp, nodeId: r.node_id, mode: r.mode } : null;
  }

  setSelection(s: Selection): void {
    this.#write('save selection', (db) =>
      db
        .prepare('INSERT OR REPLACE INTO selection (grp, node_id, mode) VALUES (?, ?, ?)')
        .run(s.group, s.nodeId, s.mode),
    );
  }

  setting(key: string): string | null {
    const r = this.#db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined;
    return r?.value ?? null;
  }

  setSetting(key: string, value: string): void {
    this.#write('save setting', (db) =>
      db.prepare('INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)').run(key, value),
    );
  }

  saveProxySnapshot(data: unknown): void {
    this.#write('save system proxy snapshot', (db) =>
      db
        .prepare('INSERT OR REPLACE INTO system_proxy_snapshot (id, saved_at, data_json) VALUES (1, ?, ?)')
        .run(Date.now(), JSON.stringify(data)),
    );
  }

  clearProxySnapshot(): void {
    this.#write('clear system proxy snapshot', (db) =>
      db.prepare('DELETE FROM system_proxy_snapshot WHERE id = 1').run(),
    );
  }

  loadProxySnapshot<T>(): T | null {
    const r = this.#db.prepare('SELECT data_json FROM system_proxy_snapshot WHERE id = 1').get() as
      { data_json: string } | undefined;
    return r ? (JSON.parse(r.data_json) as T) : null;
  }

  close(): void {
    if (this.#closed) return;
    try {
      this.flush();
    } finally {
      this.#closed = true;
      this.#db.close();
    }
  }
}

interface SourceRow {
  url: string;
  kind: StoredListSource['kind'];
  found_at: number;
  found_from: string | null;
  last_ok_at: number | null;
  last_fail_at: number | null;
  last_error: string | null;
  last_via: StoredListSource['lastVia'];
  last_nodes: number | null;
}

function rowToSource(r: SourceRow): StoredListSource {
  return {
    url: r.url,
    kind: r.kind,
    foundAt: r.found_at,
    foundFrom: r.found_from,
    lastOkAt: r.last_ok_at,
    lastFailAt: r.last_fail_at,
    lastError: r.last_error,
    lastVia: r.last_via,
    lastNodes: r.last_nodes,
  };
}

function emptyHistory(nodeId: string): NodeHistory {
  return {
    nodeId,
    successes: 0,
    failures: 0,
    consecutiveFailures: 0,
    lastSuccessAt: null,
    lastFailureAt: null,
    backoffUntil: null,
    avgThroughputBps: null,
    avgConnectMs: null,
  };
}

function rowToHistory(r: HistoryRow): NodeHistory {
  return {
    nodeId: r.node_id,
    successes: r.successes,
    failures: r.failures,
    consecutiveFailures: r.consecutive_failures,
    lastSuccessAt: r.last_success_at,
    lastFailureAt: r.last_failure_at,
    backoffUntil: r.backoff_until,
    avgThroughputBps: r.avg_throughput_bps,
    avgConnectMs: r.avg_connect_ms,
  };
}
