/**
 * What an honesty check of a node finds (SECURITY.md "Honesty checks"): a verdict per node, with
 * the evidence behind it, kept across restarts and forgotten with the node.
 */
import type { HonestyRecordOf } from '../contracts/index.js';

/** The verdicts, from no finding to the worst; `unchecked` when nothing could be concluded yet. */
export const HONESTY_VERDICTS = ['honest', 'dns-tampering', 'http-tampering', 'tls-interception', 'unchecked'] as const;
export type HonestyVerdict = (typeof HONESTY_VERDICTS)[number];

/** A verdict that keeps the node from automatic selection. */
export type Tampering = Exclude<HonestyVerdict, 'honest' | 'unchecked'>;

export function isTampering(v: HonestyVerdict | null | undefined): v is Tampering {
  return v === 'dns-tampering' || v === 'http-tampering' || v === 'tls-interception';
}

/** Which kind of check saw something. */
export type CheckKind = 'dns' | 'nxdomain' | 'http' | 'tls';

/** One finding: which check, what was asked, what was expected, what came back (bounded text). */
export interface HonestyEvidence {
  check: CheckKind;
  /** The name, URL or host:port asked. */
  target: string;
  expected: string;
  got: string;
}

/** One check's outcome; `inconclusive` never counts against a node (it may simply be down or blocked). */
export interface CheckOutcome {
  check: CheckKind;
  target: string;
  result: 'pass' | 'finding' | 'inconclusive';
  /** For a finding: what it saw; for inconclusive: why (a timeout, a refusal). */
  evidence?: HonestyEvidence;
  note?: string;
}

/** A node's verdict as remembered (its fields: core/contracts' HonestyRecordOf). */
export type HonestyRecord = HonestyRecordOf<HonestyVerdict, HonestyEvidence>;

/** Clean checks in a row that clear a tampering verdict (one the user asks for clears it at once). */
export const CLEAN_CHECKS_TO_CLEAR = 3;

/** A verdict's order of gravity: a tunnel someone reads beats a changed page beats a changed name. */
export const VERDICT_GRAVITY: Readonly<Record<Tampering, number>> = {
  'tls-interception': 3,
  'http-tampering': 2,
  'dns-tampering': 1,
};
