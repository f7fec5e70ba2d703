import type { DbAccess } from './sql.js';
import type { StoredHonesty } from './types.js';

interface HonestyRow {
  node_id: string;
  verdict: string;
  evidence_json: string;
  inconclusive_json: string;
  checked_at: number;
  duration_ms: number;
  bytes: number;
  accepted: number;
  clean_checks: number;
}

/** Each node's honesty verdict (core/honesty owns what the fields mean; this keeps them). */
export class HonestyRepo {
  constructor(private readonly db: DbAccess) {}

  /** Every node's verdict; a row that does not parse is skipped. */
  honestyRecords(): StoredHonesty[] {
    const rows = this.db.read('read honesty verdicts', (q) => q.all<HonestyRow>('SELECT * FROM node_honesty'), []);
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
            cleanChecks: r.clean_checks ?? 0,
          },
        ];
      } catch {
        return [];
      }
    });
  }

  /** Forgets these nodes' verdicts (and the user's consent with them). */
  forgetHonesty(nodeIds: readonly string[]): void {
    this.db.write('forget honesty verdicts', (q) =>
      q.transaction(() => {
        for (const id of nodeIds) q.run('DELETE FROM node_honesty WHERE node_id = ?', id);
      }),
    );
  }

  saveHonesty(h: StoredHonesty): void {
    this.db.write('save honesty verdict', (q) =>
      q.run(
        `INSERT OR REPLACE INTO node_honesty (node_id, verdict, evidence_json, inconclusive_json, checked_at, duration_ms, bytes, accepted, clean_checks)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        h.nodeId,
        h.verdict,
        JSON.stringify(h.evidence),
        JSON.stringify(h.inconclusive),
        h.checkedAt,
        h.durationMs,
        h.bytes,
        h.accepted ? 1 : 0,
        h.cleanChecks,
      ),
    );
  }
}
