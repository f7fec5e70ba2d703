import Database from 'better-sqlite3';
import { ErrorCodes, GatehopError } from '../common/index.js';

/**
 * What kind of database failure an error is, by SQLite's result code (the primary code is the
 * part before the second underscore: SQLITE_IOERR_FSYNC is an I/O error, SQLITE_CORRUPT_INDEX
 * damage):
 * - `corrupt`: the file is damaged or is not a database (replace it, carry over what reads);
 * - `unwritable`: the disk is full, an I/O call failed, the file is read-only or cannot be opened
 *   (go on in memory);
 * - `transient`: busy, locked, interrupted, out of memory (this query is lost, the file is fine);
 * - `query`: SQLite refused this one statement (a constraint, a table missing under it).
 * null: not a database failure at all (a TypeError from a bad binding, a bug): the guard rethrows it.
 */
export type SqliteFailure = 'corrupt' | 'unwritable' | 'transient' | 'query';

const BY_PRIMARY_CODE: Readonly<Record<string, SqliteFailure>> = {
  SQLITE_CORRUPT: 'corrupt',
  SQLITE_NOTADB: 'corrupt',
  SQLITE_FULL: 'unwritable',
  SQLITE_IOERR: 'unwritable',
  SQLITE_READONLY: 'unwritable',
  SQLITE_CANTOPEN: 'unwritable',
  SQLITE_PERM: 'unwritable',
  SQLITE_BUSY: 'transient',
  SQLITE_LOCKED: 'transient',
  SQLITE_NOMEM: 'transient',
  SQLITE_INTERRUPT: 'transient',
  SQLITE_PROTOCOL: 'transient',
};

/** File-system errors met while opening (making the folder, stat): the disk's, not the code's. */
const UNWRITABLE_ERRNO = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO', 'ENOTDIR', 'EISDIR']);

const DAMAGE_WORDS = /not a database|malformed|database disk image/i;

export function sqliteFailure(err: unknown): SqliteFailure | null {
  if (err instanceof GatehopError) return err.code === ErrorCodes.STORE_CORRUPT ? 'corrupt' : null;
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof Database.SqliteError || (typeof code === 'string' && code.startsWith('SQLITE_'))) {
    const primary = String(code).split('_', 2).join('_');
    if (DAMAGE_WORDS.test((err as Error).message ?? '')) return 'corrupt';
    return BY_PRIMARY_CODE[primary] ?? 'query';
  }
  if (typeof code === 'string' && UNWRITABLE_ERRNO.has(code)) return 'unwritable';
  return null;
}
