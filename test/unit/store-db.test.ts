import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCodes, GatehopError, silentLogger } from '../../core/common/index.js';
import { Db } from '../../core/store/db.js';
import { Sql } from '../../core/store/sql.js';
import { Store, sqliteFailure } from '../../core/store/index.js';

const log = silentLogger();
const file = (): string => join(mkdtempSync(join(tmpdir(), 'gh-db-')), 'g.db');

/** A query that fails once with SQLite's error `code`, then reads the settings table. */
function failingOnce(code: string): (q: Sql) => number {
  let failed = false;
  return (q) => {
    if (!failed) {
      failed = true;
      throw new Database.SqliteError(`simulated ${code}`, code);
    }
    return q.get<{ n: number }>('SELECT count(*) AS n FROM settings')!.n;
  };
}

describe('sqliteFailure: what a failure means, by the primary result code', () => {
  it.each([
    ['SQLITE_CORRUPT', 'corrupt'],
    ['SQLITE_CORRUPT_SEQUENCE', 'corrupt'],
    ['SQLITE_NOTADB', 'corrupt'],
    ['SQLITE_FULL', 'unwritable'],
    ['SQLITE_IOERR', 'unwritable'],
    ['SQLITE_IOERR_FSYNC', 'unwritable'],
    ['SQLITE_IOERR_SHORT_READ', 'unwritable'],
    ['SQLITE_IOERR_WRITE', 'unwritable'],
    ['SQLITE_READONLY_DBMOVED', 'unwritable'],
    ['SQLITE_CANTOPEN_ISDIR', 'unwritable'],
    ['SQLITE_BUSY_SNAPSHOT', 'transient'],
    ['SQLITE_LOCKED', 'transient'],
    ['SQLITE_ERROR', 'query'],
    ['SQLITE_CONSTRAINT_PRIMARYKEY', 'query'],
  ])('%s is %s', (code, kind) => {
    expect(sqliteFailure(new Database.SqliteError('x', code))).toBe(kind);
  });

  it('damage named only in the message is damage; file-system errors at open are the disk; bugs are none of these', () => {
    expect(sqliteFailure(new Database.SqliteError('database disk image is malformed', 'SQLITE_ERROR'))).toBe('corrupt');
    expect(sqliteFailure(new GatehopError(ErrorCodes.STORE_CORRUPT, 'quick_check'))).toBe('corrupt');
    expect(sqliteFailure(Object.assign(new Error('no space'), { code: 'ENOSPC' }))).toBe('unwritable');
    expect(sqliteFailure(new TypeError('SQLite3 can only bind numbers, strings, bigints, buffers, and null'))).toBe(
      null,
    );
    expect(sqliteFailure(new RangeError('Too many parameter values were provided'))).toBe(null);
    expect(sqliteFailure(new GatehopError(ErrorCodes.STORE_FAILED, 'x'))).toBe(null);
  });
});

describe('Db: the one guard every query takes (#47)', () => {
  it.each(['SQLITE_IOERR_FSYNC', 'SQLITE_IOERR_SHORT_READ', 'SQLITE_READONLY_DBMOVED', 'SQLITE_FULL'])(
    'an I/O failure of any kind (%s) moves to memory and runs the query there, where it was logged and dropped',
    (code) => {
      const db = new Db(file(), log);
      expect(db.read('count settings', failingOnce(code), -1)).toBe(0);
      expect(db.health).toBe('memory-only');
      expect(db.incident?.reason).toBe(`simulated ${code}`);
      db.close();
    },
  );

  it('damage of any kind (SQLITE_CORRUPT_SEQUENCE) replaces the file and answers from the fresh one', () => {
    const db = new Db(file(), log);
    expect(db.read('count settings', failingOnce('SQLITE_CORRUPT_SEQUENCE'), -1)).toBe(0);
    expect(db.health).toBe('recovered');
    db.close();
  });

  it('a busy file loses this query only: answered with the fallback, the file kept', () => {
    const db = new Db(file(), log);
    expect(db.read('count settings', failingOnce('SQLITE_BUSY_SNAPSHOT'), -1)).toBe(-1);
    expect(db.health).toBe('ok');
    db.close();
  });

  it('a programming error inside a query is thrown, not logged as a database failure and dropped', () => {
    const s = new Store({ path: file(), logger: log });
    const h = s.history('n1');
    // better-sqlite3 refuses to bind an object (a RangeError): a bug in the caller, not the disk's.
    expect(() => s.saveHistory({ ...h, successes: {} as unknown as number })).toThrow(RangeError);
    expect(s.health).toBe('ok');
    s.saveHistory({ ...h, successes: 3 });
    expect(s.history('n1').successes).toBe(3);
    s.close();
  });

  it('prepares each statement once per connection', () => {
    const conn = new Database(':memory:');
    const prepare = vi.spyOn(conn, 'prepare');
    const q = new Sql(conn);
    for (let i = 0; i < 5; i++) q.get('SELECT ? AS v', i);
    expect(prepare).toHaveBeenCalledTimes(1);
    conn.close();
  });
});
