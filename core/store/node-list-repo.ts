import type { Logger } from '../common/index.js';
import type { DbAccess, Sql } from './sql.js';
import type { StoredListMeta, StoredNodeList, StoredPoolEntry } from './types.js';

const SAVE_META =
  "INSERT OR REPLACE INTO node_list (id, fetched_at, source, nodes_json, via, node_count) VALUES (1, ?, ?, '[]', ?, ?)";
const UPSERT_NODE = `INSERT INTO nodes (id, first_seen, last_seen, node_json) VALUES (?, ?, ?, ?)
  ON CONFLICT(id) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen), first_seen = min(first_seen, excluded.first_seen), node_json = excluded.node_json`;

/**
 * The node list: the latest list's metadata and the pool of every node listed (with when it was
 * seen). A pool row that does not parse is skipped with a warning, or, for `gatehop check`
 * (`unreadable: 'throw'`), is the answer.
 */
export class NodeListRepo {
  constructor(
    private readonly db: DbAccess,
    private readonly log: Logger,
    private readonly unreadable: 'skip' | 'throw' = 'skip',
  ) {}

  /** The latest list: its metadata, and its nodes added to the pool (as listed at fetchedAt). */
  saveNodeList<T extends { id: string }>(list: StoredNodeList<T>): void {
    this.db.write('save node list', (q) =>
      q.transaction(() => {
        saveMeta(q, {
          fetchedAt: list.fetchedAt,
          source: list.source,
          via: list.via ?? 'direct',
          nodes: list.nodes.length,
        });
        upsertPool(q, list.nodes, list.fetchedAt);
      }),
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
    this.db.write('save list metadata', (q) => saveMeta(q, meta));
  }

  loadListMeta(): StoredListMeta | null {
    type Row = { fetched_at: number; source: string; via: string; node_count: number };
    const r = this.db.read(
      'read list metadata',
      (q) => q.get<Row>('SELECT fetched_at, source, via, node_count FROM node_list WHERE id = 1'),
      undefined,
    );
    return r ? { fetchedAt: r.fetched_at, source: r.source, via: r.via, nodes: r.node_count } : null;
  }

  /** Adds or refreshes pool nodes listed at `at` (first seen kept, last seen moved forward only). */
  savePoolNodes<T extends { id: string }>(nodes: readonly T[], at: number): void {
    this.db.write('save node pool', (q) => q.transaction(() => upsertPool(q, nodes, at)));
  }

  /** The pool: nodes with a profile last listed at or after `sinceMs`, most recent first. A row that does not parse is skipped. */
  loadPool<T>(sinceMs: number): Array<StoredPoolEntry<T>> {
    type Row = { node_json: string; first_seen: number; last_seen: number };
    const rows = this.db.read(
      'read the node pool',
      (q) =>
        q.all<Row>(
          'SELECT node_json, first_seen, last_seen FROM nodes WHERE node_json IS NOT NULL AND last_seen >= ? ORDER BY last_seen DESC, id',
          sinceMs,
        ),
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
    if (bad > 0 && this.unreadable === 'throw') throw new Error(`${bad} remembered nodes are unreadable`);
    if (bad > 0)
      this.log.warn({ event: 'store-bad-pool-rows', bad }, `${bad} remembered nodes are unreadable; ignoring them`);
    return out;
  }

  firstSeen(nodeId: string): { firstSeen: number; lastSeen: number } | null {
    const r = this.db.read(
      'read when a node was first seen',
      (q) =>
        q.get<{ first_seen: number; last_seen: number }>(
          'SELECT first_seen, last_seen FROM nodes WHERE id = ?',
          nodeId,
        ),
      undefined,
    );
    return r ? { firstSeen: r.first_seen, lastSeen: r.last_seen } : null;
  }
}

function saveMeta(q: Sql, m: StoredListMeta): void {
  q.run(SAVE_META, m.fetchedAt, m.source, m.via, m.nodes);
}

function upsertPool<T extends { id: string }>(q: Sql, nodes: readonly T[], at: number): void {
  for (const n of nodes) q.run(UPSERT_NODE, n.id, at, at, JSON.stringify(n));
}
