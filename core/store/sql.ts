import type Database from 'better-sqlite3';

export type Connection = Database.Database;

/**
 * One connection's queries, each statement prepared once and kept (the SQL texts are the
 * repositories' constants, so the cache is as small as the code). A replaced connection gets a new
 * Sql, and with it a new cache.
 */
export class Sql {
  readonly #conn: Connection;
  readonly #statements = new Map<string, Database.Statement>();

  constructor(conn: Connection) {
    this.#conn = conn;
  }

  get connection(): Connection {
    return this.#conn;
  }

  get<T>(sql: string, ...params: unknown[]): T | undefined {
    return this.#statement(sql).get(...params) as T | undefined;
  }

  all<T>(sql: string, ...params: unknown[]): T[] {
    return this.#statement(sql).all(...params) as T[];
  }

  run(sql: string, ...params: unknown[]): void {
    this.#statement(sql).run(...params);
  }

  /** fn inside one transaction: all of its writes or none. */
  transaction(fn: () => void): void {
    this.#conn.transaction(fn)();
  }

  userVersion(): number {
    return this.#conn.pragma('user_version', { simple: true }) as number;
  }

  #statement(sql: string): Database.Statement {
    let s = this.#statements.get(sql);
    if (!s) {
      s = this.#conn.prepare(sql);
      this.#statements.set(sql, s);
    }
    return s;
  }
}

/** How a repository reaches the database: every query through a guard that decides what a failure means. */
export interface DbAccess {
  /** fn's answer, or `fallback` when the database failed (what that did to the file is the guard's). */
  read<T>(what: string, fn: (q: Sql) => T, fallback: T): T;
  /** fn's writes, or nothing when the database failed. */
  write(what: string, fn: (q: Sql) => void): void;
}
