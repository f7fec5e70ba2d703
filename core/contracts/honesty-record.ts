/**
 * A node's honesty verdict as checked and as kept: core/honesty says what the verdict and the
 * evidence are (`HonestyRecord` narrows them), core/store keeps the fields as they are.
 */
export interface HonestyRecordOf<Verdict = string, Evidence = unknown> {
  nodeId: string;
  verdict: Verdict;
  /** The findings behind a tampering verdict (empty when honest). */
  evidence: Evidence[];
  /** Checks that could not conclude, with why (shown with `unchecked`). */
  inconclusive: string[];
  checkedAt: number;
  durationMs: number;
  /** Bytes the check moved through the tunnel, both ways. */
  bytes: number;
  /** The user chose to use this node anyway (a manual pick confirmed): pins may go to it; automatic selection never does. */
  accepted: boolean;
  /**
   * Clean checks in a row since a tampering verdict (#59): one clean check does not clear it (a
   * node may tamper only now and then), CLEAN_CHECKS_TO_CLEAR do. 0 for any other verdict.
   */
  cleanChecks: number;
}
