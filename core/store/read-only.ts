import { existsSync } from 'node:fs';
import { ReadOnlyDb } from './db.js';
import { ListSourceRepo } from './list-source-repo.js';
import { NodeListRepo } from './node-list-repo.js';
import { silentLogger } from '../common/index.js';
import type { StoredListSource, StoredNodeList } from './types.js';

/** Schema 3 moved the latest list's nodes into the pool; before it they were the list's own column. */
const POOL_SCHEMA = 3;

/**
 * The cached node list of a database file, read-only and without migrating or repairing anything
 * (`gatehop check`): the same repository the running store uses, on a read-only file. null when
 * there is no file or no list; throws GH_ERR_STORE_FAILED when the file cannot be read as a
 * Gatehop database.
 */
export function readCachedList<T>(path: string): StoredNodeList<T> | null {
  if (!existsSync(path)) return null;
  return withReadOnly(path, (db) => {
    if (db.schemaVersion >= POOL_SCHEMA) return new NodeListRepo(db, silentLogger(), 'throw').loadNodeList<T>();
    type Row = { fetched_at: number; source: string; nodes_json: string };
    return db.read('read the list', (q) => {
      const row = q.get<Row>('SELECT fetched_at, source, nodes_json FROM node_list WHERE id = 1');
      return row ? { fetchedAt: row.fetched_at, source: row.source, nodes: JSON.parse(row.nodes_json) as T[] } : null;
    });
  });
}

/** The list sources a database remembers, read-only (`gatehop check`); [] when there are none. */
export function readListSources(path: string): StoredListSource[] {
  if (!existsSync(path)) return [];
  return withReadOnly(path, (db) => (db.schemaVersion < POOL_SCHEMA ? [] : new ListSourceRepo(db).listSources()));
}

function withReadOnly<T>(path: string, fn: (db: ReadOnlyDb) => T): T {
  const db = new ReadOnlyDb(path);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
