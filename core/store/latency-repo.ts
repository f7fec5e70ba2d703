import type { Db } from './db.js';
import type { LatencySample } from './types.js';

const INSERT = 'INSERT INTO latency_samples (node_id, at, kind, ms, success) VALUES (?, ?, ?, ?, ?)';
/** Samples queued beyond this are written at once rather than at the next flush. */
const BATCH = 200;

/**
 * Latency samples, the one frequent write: queued and written in one transaction after `flushMs`
 * or at BATCH queued; samples older than the window are dropped at each write.
 */
export class LatencyRepo {
  #pending: LatencySample[] = [];
  #flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly windowMs: number,
    private readonly flushMs: number,
  ) {}

  addLatency(sample: LatencySample): void {
    if (this.db.closed) return;
    this.#pending.push(sample);
    if (this.#pending.length >= BATCH) this.flush();
    else if (!this.#flushTimer) {
      this.#flushTimer = setTimeout(() => this.flush(), this.flushMs);
      this.#flushTimer.unref();
    }
  }

  latency(nodeId: string | null, sinceMs: number): LatencySample[] {
    this.flush();
    type Row = { node_id: string; at: number; kind: LatencySample['kind']; ms: number | null; success: number };
    const rows = this.db.read(
      'read latency samples',
      (q) =>
        nodeId
          ? q.all<Row>(
              'SELECT node_id, at, kind, ms, success FROM latency_samples WHERE node_id = ? AND at >= ? ORDER BY at',
              nodeId,
              sinceMs,
            )
          : q.all<Row>('SELECT node_id, at, kind, ms, success FROM latency_samples WHERE at >= ? ORDER BY at', sinceMs),
      [],
    );
    return rows.map((r) => ({ nodeId: r.node_id, at: r.at, kind: r.kind, ms: r.ms, success: r.success === 1 }));
  }

  /** Writes queued samples in one transaction and drops those older than the window. */
  flush(): void {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    if (this.#pending.length === 0 || this.db.closed) return;
    const batch = this.#pending.splice(0);
    this.db.write('write latency samples', (q) =>
      q.transaction(() => {
        for (const s of batch) q.run(INSERT, s.nodeId, s.at, s.kind, s.ms, s.success ? 1 : 0);
        q.run('DELETE FROM latency_samples WHERE at < ?', Date.now() - this.windowMs);
      }),
    );
  }
}
