import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import { MIGRATIONS } from './migrations.js';
import type {
  StoreIncident,
  LatencySample,
  NodeHistory,
  Selection,
  StoredListMeta,
  StoredListSource,
  StoredNodeList,
  StoredPoolEntry,
  StoreHealth,
  StoredHonesty,
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
const CORRUPT = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_INDEX', 'SQLITE_CORRUPT_VTAB']);

/**
 * Files up to this size get a full `PRAGMA quick_check` at open: it reads every page (~5 ms per
 * MiB measured here, 17 MiB in 83 ms; ~320 ms at the cap, once per start). A larger file (latency
 * samples are pruned to 24 h, so it should never be one) is opened without it; damage met later
 * is handled on the running path all the same.
 */
const QUICK_CHECK_MAX_BYTES = 64 * 1024 * 1024;

/** The tables whose rows a fresh file takes over from a damaged one, each as far as it reads. */
const CARRIED_TABLES = [
  'node_honesty',
  'selection',
  'settings',
  'system_proxy_snapshot',
  'list_sources',
  'node_list',
  'nodes',
] as const;

function isCorrupt(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return (
    CORRUPT.has(code) ||
    (err instanceof GatehopError && err.code === ErrorCodes.STORE_CORRUPT) ||
    /not a database|malformed|database disk image/i.test((err as Error).message ?? '')
  );
}

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
 * What Gatehop remembers, in SQLite (WAL). Every read and write goes through one guarded path
 * (#guard): a damaged file, found at open by `quick_check` or met later by any query, is moved
 * aside (kept, named with the time) and a fresh one made, carrying over what still reads of the
 * pinned node, settings, the system proxy snapshot, list sources and the pool (history starts
 * again); a full disk or failed write degrades to an in-memory database. Neither ever stops the
 * app; `incident` says once what happened. A file written by a newer Gatehop is refused
 * (GH_ERR_STORE_TOO_NEW) and left untouched. Frequent writes (latency samples) are batched.
 */
/**
 * How long a node's refusal of modern TLS is remembered: its next tunnels start on legacy TLS and
 * its row says so. Past this, modern TLS is tried first again (a volunteer may have upgraded).
 */
export const WEAK_TLS_REMEMBER_MS = 30 * 24 * 3600_000;

export class Store {
  #db: Db;
  #health: StoreHealth = 'ok';
  readonly #log: Logger;
  readonly #path: string;
  readonly #latencyWindowMs: number;
  readonly #flushMs: number;
  #pending: LatencySample[] = [];
  #incident: StoreIncident | null = null;
  /** A recovery in progress: a query it runs that fails again goes to memory, not round again. */
  #recovering = false;
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

  /** The last thing that happened to the file (moved aside, memory only), or null. */
  get incident(): StoreIncident | null {
    return this.#incident;
  }

  get schemaVersion(): number {
    return this.#guard('read the schema version', () => this.#db.pragma('user_version', { simple: true }) as number, 0);
  }

  #open(): Db {
    if (this.#path === ':memory:') return this.#init(openDatabase(':memory:'));
    let db: Db | null = null;
    try {
      mkdirSync(dirname(this.#path), { recursive: true });
      db = openDatabase(this.#path);
      this.#refuseNewer(db);
      this.#check(db);
      return this.#init(db);
    } catch (err) {
      if (err instanceof GatehopError && err.code === ErrorCodes.STORE_TOO_NEW) {
        db?.close();
        throw err;
      }
      if (isCorrupt(err)) return this.#replaceDamaged(db, err, 'open');
      closeQuietly(db);
      return this.#memoryOnly(err, 'open');
    }
  }

  /** A schema newer than this build knows: never migrate down, never touch it. */
  #refuseNewer(db: Db): void {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version <= MIGRATIONS.length) return;
    throw new GatehopError(
      ErrorCodes.STORE_TOO_NEW,
      `${this.#path} was written by a newer Gatehop (schema ${version}; this version knows up to ${MIGRATIONS.length}). ` +
        'Update Gatehop, or start it with another --data-dir. The file is left as it is.',
    );
  }

  /** Every page read once (quick_check), on files up to QUICK_CHECK_MAX_BYTES. */
  #check(db: Db): void {
    let size: number;
    try {
      size = statSync(this.#path).size;
    } catch {
      return; // a new file
    }
    if (size > QUICK_CHECK_MAX_BYTES) {
      this.#log.info({ event: 'store-check-skipped', bytes: size }, 'database too large to check at start');
      return;
    }
    const t0 = performance.now();
    const rows = db.pragma('quick_check(8)') as Array<{ quick_check: string }>;
    const ms = Math.round(performance.now() - t0);
    const verdict = rows.map((r) => r.quick_check);
    if (verdict.length === 1 && verdict[0] === 'ok') {
      this.#log.debug({ event: 'store-checked', bytes: size, durationMs: ms }, 'database checked');
      return;
    }
    throw new GatehopError(ErrorCodes.STORE_CORRUPT, `quick_check: ${verdict.join('; ').slice(0, 500)}`);
  }

  /**
   * The file is damaged: read what still reads of the tables worth keeping, move the file (and its
   * WAL) aside, make a fresh one and write the carried rows into it. Memory only if that fails too.
   */
  #replaceDamaged(damaged: Db | null, err: unknown, found: StoreIncident['found']): Db {
    const reason = (err as Error).message;
    const carried = damaged ? carryOut(damaged) : new Map<string, CarriedTable>();
    closeQuietly(damaged);
    const aside = `${this.#path}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    try {
      for (const suffix of ['', '-wal', '-shm']) {
        if (existsSync(this.#path + suffix)) renameSync(this.#path + suffix, aside + suffix);
      }
    } catch (moveErr) {
      return this.#memoryOnly(moveErr, found);
    }
    let fresh: Db;
    try {
      fresh = this.#init(openDatabase(this.#path));
    } catch (again) {
      return this.#memoryOnly(again, found);
    }
    const kept = carryIn(fresh, carried);
    this.#health = 'recovered';
    this.#incident = { health: 'recovered', at: Date.now(), movedTo: aside, found, reason, carried: kept };
    this.#log.error(
      {
        event: 'store-corrupt',
        errCode: ErrorCodes.STORE_CORRUPT,
        path: this.#path,
        movedTo: aside,
        found,
        err: reason,
        carried: kept,
      },
      `the database was damaged (${reason}); it is kept at ${aside} and a fresh one started (carried over: ${kept.join(', ') || 'nothing'})`,
    );
    return fresh;
  }

  #memoryOnly(err: unknown, found: StoreIncident['found']): Db {
    this.#health = 'memory-only';
    const reason = (err as Error).message;
    this.#incident = {
      health: 'memory-only',
      at: Date.now(),
      movedTo: this.#incident?.movedTo ?? null,
      found,
      reason,
      carried: [],
    };
    this.#log.warn(
      { event: 'store-memory-only', errCode: ErrorCodes.STORE_FAILED, path: this.#path, err: reason },
      'cannot use the database file: history is kept in memory only until restart',
    );
    return this.#init(openDatabase(':memory:'));
  }

  #init(db: Db): Db {
    if (this.#path !== ':memory:' && db.name !== ':memory:') db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 2000');
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

  /**
   * The one path every query takes. Damage (SQLITE_CORRUPT, NOTADB) replaces the file and runs the
   * query once more on the fresh one; a full disk or failed write moves to memory and runs it
   * there; any other failure is logged with its code and answered with `fallback` (a read) or
   * dropped (a write): a timer's query never takes the process down.
   */
  #guard<T>(what: string, fn: (db: Db) => T, fallback: T): T {
    if (this.#closed) {
      this.#log.debug({ event: 'store-closed', what }, `store closed: ${what} skipped`);
      return fallback;
    }
    try {
      return fn(this.#db);
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (!this.#recovering && (isCorrupt(err) || DISK_FULL.has(code))) {
        this.#recovering = true;
        try {
          this.#db =
            isCorrupt(err) && this.#db.name !== ':memory:'
              ? this.#replaceDamaged(this.#db, err, 'running')
              : this.#toMemory(err);
          return fn(this.#db);
        } catch (again) {
          this.#reportFailure(what, again);
          return fallback;
        } finally {
          this.#recovering = false;
        }
      }
      this.#reportFailure(what, err);
      return fallback;
    }
  }

  #toMemory(err: unknown): Db {
    closeQuietly(this.#db);
    return this.#memoryOnly(err, 'running');
  }

  #reportFailure(what: string, err: unknown): void {
    const code = (err as { code?: string }).code ?? ErrorCodes.STORE_FAILED;
    this.#log.error(
      {
        event: 'store-query-failed',
        errCode: ErrorCodes.STORE_FAILED,
        sqliteCode: code,
        what,
        err: (err as Error).message,
      },
      `store: ${what} failed: ${(err as Error).message}`,
    );
  }

  /** A write through the guard (nothing to answer). */
  #write(what: string, fn: (db: Db) => unknown): void {
    this.#guard(what, fn, undefined);
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
    const r = this.#guard(
      'read list metadata',
      (db) =>
        db.prepare('SELECT fetched_at, source, via, node_count FROM node_list WHERE id = 1').get() as
          { fetched_at: number; source: string; via: string; node_count: number } | undefined,
      undefined,
    );
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
    const rows = this.#guard(
      'read the node pool',
      (db) =>
        db
          .prepare(
            'SELECT node_json, first_seen, last_seen FROM nodes WHERE node_json IS NOT NULL AND last_seen >= ? ORDER BY last_seen DESC, id',
          )
          .all(sinceMs) as Array<{ node_json: string; first_seen: number; last_seen: number }>,
      [],
    );
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
        for (const table of [
          'nodes WHERE id',
          'node_history WHERE node_id',
          'latency_samples WHERE node_id',
          'node_honesty WHERE node_id',
        ]) {
          const del = db.prepare(`DELETE FROM ${table} = ?`);
          for (const id of ids) del.run(id);
        }
        const weak = db.prepare('DELETE FROM settings WHERE key = ?');
        for (const id of ids) weak.run(`weak-tls ${id}`);
      })(),
    );
  }

  firstSeen(nodeId: string): { firstSeen: number; lastSeen: number } | null {
    const r = this.#guard(
      'read when a node was first seen',
      (db) =>
        db.prepare('SELECT first_seen, last_seen FROM nodes WHERE id = ?').get(nodeId) as
          { first_seen: number; last_seen: number } | undefined,
      undefined,
    );
    return r ? { firstSeen: r.first_seen, lastSeen: r.last_seen } : null;
  }

  listSources(): StoredListSource[] {
    return this.#guard(
      'read list sources',
      (db) => (db.prepare('SELECT * FROM list_sources ORDER BY found_at, url').all() as SourceRow[]).map(rowToSource),
      [],
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
    const r = this.#guard(
      'read node history',
      (db) => db.prepare('SELECT * FROM node_history WHERE node_id = ?').get(nodeId) as HistoryRow | undefined,
      undefined,
    );
    return r ? rowToHistory(r) : emptyHistory(nodeId);
  }

  allHistory(): Map<string, NodeHistory> {
    const rows = this.#guard(
      'read all history',
      (db) => db.prepare('SELECT * FROM node_history').all() as HistoryRow[],
      [],
    );
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
    type Row = { node_id: string; at: number; kind: LatencySample['kind']; ms: number | null; success: number };
    const rows = this.#guard(
      'read latency samples',
      (db) =>
        (nodeId
          ? db
              .prepare(
                'SELECT node_id, at, kind, ms, success FROM latency_samples WHERE node_id = ? AND at >= ? ORDER BY at',
              )
              .all(nodeId, sinceMs)
          : db
              .prepare('SELECT node_id, at, kind, ms, success FROM latency_samples WHERE at >= ? ORDER BY at')
              .all(sinceMs)) as Row[],
      [],
    );
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
    const r = this.#guard(
      'read the selection',
      (db) =>
        db.prepare('SELECT grp, node_id, mode FROM selection WHERE grp = ?').get(group) as
          { grp: string; node_id: string | null; mode: 'auto' | 'manual' } | undefined,
      undefined,
    );
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
    const r = this.#guard(
      'read a setting',
      (db) => db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined,
      undefined,
    );
    return r?.value ?? null;
  }

  /** Nodes that refused modern TLS at or after `sinceMs` (settings `weak-tls <node>`: when it was last seen). */
  weakTlsNodes(sinceMs: number): Set<string> {
    const rows = this.#guard(
      'read weak-TLS nodes',
      (db) =>
        db.prepare("SELECT key, value FROM settings WHERE key LIKE 'weak-tls %'").all() as Array<{
          key: string;
          value: string;
        }>,
      [],
    );
    return new Set(rows.filter((r) => Number(r.value) >= sinceMs).map((r) => r.key.slice('weak-tls '.length)));
  }

  /** Every node's honesty verdict; a row that does not parse is skipped. */
  honestyRecords(): StoredHonesty[] {
    type Row = {
      node_id: string;
      verdict: string;
      evidence_json: string;
      inconclusive_json: string;
      checked_at: number;
      duration_ms: number;
      bytes: number;
      accepted: number;
    };
    const rows = this.#guard(
      'read honesty verdicts',
      (db) => db.prepare('SELECT * FROM node_honesty').all() as Row[],
      [],
    );
    return rows.flatMap((r) => {
      try {
        return [
          {
            nodeId: r.node_id,
            verdict: r.verdict,
            evidence: JSON.parse(r.evidence_json) as unknown[],
            inconclusive: JSON.parse(r.inconclusive_json) as string[],
            checkedAt: r.checked_at,
            durationMs: r.duration_ms,
            bytes: r.bytes,
            accepted: r.accepted === 1,
          },
        ];
      } catch {
        return [];
      }
    });
  }

  saveHonesty(h: StoredHonesty): void {
    this.#write('save honesty verdict', (db) =>
      db
        .prepare(
          `INSERT OR REPLACE INTO node_honesty (node_id, verdict, evidence_json, inconclusive_json, checked_at, duration_ms, bytes, accepted)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          h.nodeId,
          h.verdict,
          JSON.stringify(h.evidence),
          JSON.stringify(h.inconclusive),
          h.checkedAt,
          h.durationMs,
          h.bytes,
          h.accepted ? 1 : 0,
        ),
    );
  }

  rememberWeakTls(nodeId: string, at: number): void {
    this.setSetting(`weak-tls ${nodeId}`, String(at));
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
    const r = this.#guard(
      'read the system proxy snapshot',
      (db) =>
        db.prepare('SELECT data_json FROM system_proxy_snapshot WHERE id = 1').get() as
          { data_json: string } | undefined,
      undefined,
    );
    if (!r) return null;
    try {
      return JSON.parse(r.data_json) as T;
    } catch (err) {
      this.#reportFailure('parse the system proxy snapshot', err);
      return null;
    }
  }

  close(): void {
    if (this.#closed) return;
    try {
      this.flush();
    } finally {
      this.#closed = true;
      closeQuietly(this.#db);
    }
  }
}

type CarriedTable = { columns: string[]; rows: unknown[][] };

/** What still reads of the tables worth keeping; a table that does not read is left behind. */
function carryOut(db: Db): Map<string, CarriedTable> {
  const out = new Map<string, CarriedTable>();
  for (const table of CARRIED_TABLES) {
    try {
      const stmt = db.prepare(`SELECT * FROM ${table}`).raw(true);
      const columns = stmt.columns().map((c) => c.name);
      out.set(table, { columns, rows: stmt.all() as unknown[][] });
    } catch {
      // Damaged where this table lives (or no such table in an old schema): it starts empty.
    }
  }
  return out;
}

/** The carried rows into the fresh file, table by table; the names of the tables that took. */
function carryIn(db: Db, carried: Map<string, CarriedTable>): string[] {
  const kept: string[] = [];
  for (const [table, { columns, rows }] of carried) {
    if (rows.length === 0) continue;
    try {
      const known = new Set(
        (db.prepare(`SELECT * FROM ${table} LIMIT 0`).columns() as Array<{ name: string }>).map((c) => c.name),
      );
      const idx = columns.map((c, i) => [c, i] as const).filter(([c]) => known.has(c));
      const ins = db.prepare(
        `INSERT OR REPLACE INTO ${table} (${idx.map(([c]) => c).join(', ')}) VALUES (${idx.map(() => '?').join(', ')})`,
      );
      db.transaction(() => {
        for (const r of rows) ins.run(...idx.map(([, i]) => r[i]));
      })();
      kept.push(table);
    } catch {
      // A row the fresh schema refuses: this table starts empty.
    }
  }
  return kept;
}

function closeQuietly(db: Db | null): void {
  try {
    db?.close();
  } catch {
    // Already closed, or too damaged to close cleanly: nothing more can be done with it.
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

/** A node nothing is known of yet. */
export function emptyHistory(nodeId: string): NodeHistory {
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
