import type { Symptom, WindowScore } from '../health/index.js';
import type { SwitchRecord } from './types.js';

const HISTORY = 50;

/** The switches so far: the last 50 records and the totals `/status` shows. */
export class SwitchBook {
  readonly history: SwitchRecord[] = [];
  readonly counts = { switched: 0, failed: 0, byReason: {} as Record<string, number> };

  add(record: SwitchRecord): void {
    this.history.push(record);
    if (this.history.length > HISTORY) this.history.shift();
    if (record.outcome === 'switched') {
      this.counts.switched++;
      this.counts.byReason[record.kind] = (this.counts.byReason[record.kind] ?? 0) + 1;
    } else if (record.outcome !== 'skipped') this.counts.failed++;
  }
}

/** Health windows of the active egress so far, and the latest one (`/status`, the window). */
export class HealthTally {
  windows = 0;
  badWindows = 0;
  last: {
    egressId: string;
    score: number;
    reasons: string[];
    /** What the window saw go wrong, as ids (the window and tray say it in the user's language). */
    symptoms: Symptom[];
    consecutiveBad: number;
    dnsMs: number | null;
    at: number;
  } | null = null;

  add(egressId: string, w: WindowScore & { consecutiveBad: number; dnsMs: number | null }): void {
    this.windows++;
    if (w.bad) this.badWindows++;
    this.last = {
      egressId,
      score: w.score,
      reasons: w.reasons,
      symptoms: w.symptoms,
      consecutiveBad: w.consecutiveBad,
      dnsMs: w.dnsMs,
      at: Date.now(),
    };
  }
}
