import type { DbAccess } from './sql.js';
import type { LeftShape, NodeHistory } from './types.js';

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
  left_shape: string | null;
  left_at: number | null;
  left_until: number | null;
}

const LEFT_SHAPES: ReadonlySet<string> = new Set<LeftShape>([
  'link',
  'dns',
  'connects',
  'stall',
  'slow',
  'other',
  'flapping',
]);

/** What each node's tunnels did: successes, failures, back-off, throughput. */
export class HistoryRepo {
  constructor(private readonly db: DbAccess) {}

  history(nodeId: string): NodeHistory {
    const r = this.db.read(
      'read node history',
      (q) => q.get<HistoryRow>('SELECT * FROM node_history WHERE node_id = ?', nodeId),
      undefined,
    );
    return r ? rowToHistory(r) : emptyHistory(nodeId);
  }

  allHistory(): Map<string, NodeHistory> {
    const rows = this.db.read('read all history', (q) => q.all<HistoryRow>('SELECT * FROM node_history'), []);
    return new Map(rows.map((r) => [r.node_id, rowToHistory(r)]));
  }

  saveHistory(h: NodeHistory): void {
    this.db.write('save history', (q) =>
      q.run(
        `INSERT OR REPLACE INTO node_history (node_id, successes, failures, consecutive_failures, last_success_at,
           last_failure_at, backoff_until, avg_throughput_bps, avg_connect_ms, left_shape, left_at, left_until)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        h.nodeId,
        h.successes,
        h.failures,
        h.consecutiveFailures,
        h.lastSuccessAt,
        h.lastFailureAt,
        h.backoffUntil,
        h.avgThroughputBps,
        h.avgConnectMs,
        h.left?.shape ?? null,
        h.left?.at ?? null,
        h.left?.until ?? null,
      ),
    );
  }
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
    left: null,
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
    // A shape this version does not know (a newer one wrote it) is "other"; a row before v6 has none.
    left:
      r.left_at !== null && r.left_until !== null
        ? {
            shape: LEFT_SHAPES.has(r.left_shape ?? '') ? (r.left_shape as LeftShape) : 'other',
            at: r.left_at,
            until: r.left_until,
          }
        : null,
  };
}
