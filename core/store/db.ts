import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import { carryIn, carryOut, closeQuietly, type CarriedRows } from './carry-over.js';
import { MIGRATIONS } from './migrations.js';
import { Sql, type Connection, type DbAccess } from './sql.js';
import { sqliteFailure } from './sqlite-failure.js';
import type { StoreHealth, StoreIncident } from './types.js';

/**
 * The native addon to load, when not the one next to better-sqlite3: `npm start` under a real
 * Electron builds one for Electron's ABI (scripts/electron-native.mjs) and names it here, so the
 * Node build that the CLI and tests use stays in place.
 */
export const SQLITE_BINDING_ENV = 'GATEHOP_SQLITE_BINDING';

export function openConnection(path: string, options: Database.Options = {}): Connection {
  const binding = process.env[SQLITE_BINDING_ENV];
  return new Database(path, binding ? { ...options, nativeBinding: binding } : options);
}

/**
 * Files up to this size get a full `PRAGMA quick_check` at open: it reads every page (~5 ms per
 * MiB measured here, 17 MiB in 83 ms; ~320 ms at the cap, once per start). A larger file (latency
 * samples are pruned to 24 h, so it should never be one) is opened without it; damage met later
 * is handled on the running path all the same.
 */
const QUICK_CHECK_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The database's life: open (a newer schema refused, every page checked, migrated), and the one
 * guard every query of every repository takes. A damaged file, found at open or met by any query,
 * is moved aside (kept, named with the time) and a fresh one made with what still reads of the
 * tables worth keeping; a full disk or failed I/O call goes on in memory. Neither stops the app;
 * `incident` says once what happened. What is not a database failure (a bug) is rethrown.
 */
export class Db implements DbAccess {
  #sql: Sql;
  #health: StoreHealth = 'ok';
  #incident: StoreIncident | null = null;
  /** A recovery in progress: a query it runs that fails again goes to memory, not round again. */
  #recovering = false;
  #closed = false;
  readonly #log: Logger;
  readonly #path: string;

  /** `path` is a file, or ':memory:'. Throws GH_ERR_STORE_TOO_NEW for a file a newer Gatehop wrote. */
  constructor(path: string, log: Logger) {
    this.#path = path;
    this.#log = log;
    this.#sql = new Sql(this.#open());
  }

  get health(): StoreHealth {
    return this.#health;
  }

  get incident(): StoreIncident | null {
    return this.#incident;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * The one path every query takes. Damage replaces the file and runs the query once more on the
   * fresh one; an unwritable file moves to memory and runs it there; a query SQLite refused or a
   * busy file is logged with its code and answered with `fallback` (a timer's query never takes the
   * process down). Anything that is not a database failure is a bug and is thrown.
   */
  read<T>(what: string, fn: (q: Sql) => T, fallback: T): T {
    if (this.#closed) {
      this.#log.debug({ event: 'store-closed', what }, `store closed: ${what} skipped`);
      return fallback;
    }
    try {
      return fn(this.#sql);
    } catch (err) {
      const kind = sqliteFailure(err);
      if (kind === null) throw err;
      if (this.#recovering || (kind !== 'corrupt' && kind !== 'unwritable')) {
        this.#reportFailure(what, err);
        return fallback;
      }
      this.#recovering = true;
      try {
        const old = this.#sql.connection;
        this.#sql = new Sql(
          kind === 'corrupt' && old.name !== ':memory:'
            ? this.#replaceDamaged(old, err, 'running')
            : (closeQuietly(old), this.#memoryOnly(err, 'running')),
        );
        return fn(this.#sql);
      } catch (again) {
        if (sqliteFailure(again) === null) throw again;
        this.#reportFailure(what, again);
        return fallback;
      } finally {
        this.#recovering = false;
      }
    }
  }

  write(what: string, fn: (q: Sql) => void): void {
    this.read(what, fn, undefined);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeQuietly(this.#sql.connection);
  }

  #open(): Connection {
    if (this.#path === ':memory:') return this.#init(openConnection(':memory:'));
    let conn: Connection | null = null;
    try {
      mkdirSync(dirname(this.#path), { recursive: true });
      conn = openConnection(this.#path);
      this.#refuseNewer(conn);
      this.#check(conn);
      return this.#init(conn);
    } catch (err) {
      if (err instanceof GatehopError && err.code === ErrorCodes.STORE_TOO_NEW) {
        conn?.close();
        throw err;
      }
      if (sqliteFailure(err) === 'corrupt') return this.#replaceDamaged(conn, err, 'open');
      closeQuietly(conn);
      return this.#memoryOnly(err, 'open');
    }
  }

  /** A schema newer than this build knows: never migrate down, never touch it. */
  #refuseNewer(conn: Connection): void {
    const version = conn.pragma('user_version', { simple: true }) as number;
    if (version <= MIGRATIONS.length) return;
    throw new GatehopError(
      ErrorCodes.STORE_TOO_NEW,
      `${this.#path} was written by a newer Gatehop (schema ${version}; this version knows up to ${MIGRATIONS.length}). ` +
        'Update Gatehop, or start it with another --data-dir. The file is left as it is.',
    );
  }

  /** Every page read once (quick_check), on files up to QUICK_CHECK_MAX_BYTES. */
  #check(conn: Connection): void {
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
    const rows = conn.pragma('quick_check(8)') as Array<{ quick_check: string }>;
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
  #replaceDamaged(damaged: Connection | null, err: unknown, found: StoreIncident['found']): Connection {
    const reason = (err as Error).message;
    const carried: CarriedRows = damaged ? carryOut(damaged) : new Map<string, never>();
    closeQuietly(damaged);
    const aside = `${this.#path}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    try {
      for (const suffix of ['', '-wal', '-shm']) {
        if (existsSync(this.#path + suffix)) renameSync(this.#path + suffix, aside + suffix);
      }
    } catch (moveErr) {
      return this.#memoryOnly(moveErr, found);
    }
    let fresh: Connection;
    try {
      fresh = this.#init(openConnection(this.#path));
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

  #memoryOnly(err: unknown, found: StoreIncident['found']): Connection {
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
    return this.#init(openConnection(':memory:'));
  }

  /** WAL for a file, then every migration this build knows, one transaction each. */
  #init(conn: Connection): Connection {
    if (this.#path !== ':memory:' && conn.name !== ':memory:') conn.pragma('journal_mode = WAL');
    conn.pragma('synchronous = NORMAL');
    conn.pragma('busy_timeout = 2000');
    conn.prepare('SELECT count(*) FROM sqlite_master').get();
    const version = conn.pragma('user_version', { simple: true }) as number;
    for (let v = version; v < MIGRATIONS.length; v++) {
      conn.transaction(() => {
        conn.exec(MIGRATIONS[v]!);
        conn.pragma(`user_version = ${v + 1}`);
      })();
      this.#log.info({ event: 'store-migrated', from: v, to: v + 1 }, 'database schema migrated');
    }
    return conn;
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
}

/**
 * A database file opened read-only for `gatehop check`: nothing migrated or repaired, and any
 * failure thrown as GH_ERR_STORE_FAILED naming the file (the repositories' own queries, no guard).
 */
export class ReadOnlyDb implements DbAccess {
  readonly #sql: Sql;
  readonly #path: string;

  constructor(path: string) {
    this.#path = path;
    try {
      this.#sql = new Sql(openConnection(path, { readonly: true, fileMustExist: true }));
    } catch (err) {
      throw this.#failed(err);
    }
  }

  get schemaVersion(): number {
    return this.read('read the schema version', (q) => q.userVersion());
  }

  read<T>(_what: string, fn: (q: Sql) => T): T {
    try {
      return fn(this.#sql);
    } catch (err) {
      throw this.#failed(err);
    }
  }

  write(what: string): void {
    throw new GatehopError(ErrorCodes.STORE_FAILED, `${this.#path}: opened read-only, cannot ${what}`);
  }

  close(): void {
    closeQuietly(this.#sql.connection);
  }

  #failed(err: unknown): GatehopError {
    return new GatehopError(ErrorCodes.STORE_FAILED, `${this.#path}: ${(err as Error).message}`, { cause: err });
  }
}
