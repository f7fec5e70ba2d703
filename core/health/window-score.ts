import type { HealthOptions } from './options.js';

/** What a health sample reads from the active egress (a TunnelEgress satisfies it). */
export interface HealthSource {
  readonly id: string;
  readonly stats: Readonly<{
    bytesUp: number;
    bytesDown: number;
    sessionsActive: number;
    sessionsTotal: number;
    failures: number;
  }>;
  linkState(): 'up' | 'reconnecting' | 'down';
  measureDns(): Promise<number>;
  tcpCounters(): { segmentsOut: number; retransmissions: number };
  /** Distinct destinations connects reached and failed to reach since the last call (absent: not counted). */
  takeConnectHosts?(): { ok: number; failed: number; failedNames: number };
  /** What bulk downloads took since the last call, and in what span (core/egress/bulk-meter.ts; absent: not metered). */
  takeBulk?(): { bytes: number; spanMs: number; streams: number } | null;
}

/** Cumulative counters at one instant; a window is the difference of two. */
export interface HealthCounters {
  bytes: number;
  connects: number;
  failures: number;
  segmentsOut: number;
  retransmissions: number;
}

export interface WindowSample {
  link: 'up' | 'reconnecting' | 'down';
  /** In-tunnel DNS round trip, or null when it failed. */
  dnsMs: number | null;
  sessionsActive: number;
  delta: HealthCounters;
  /** Distinct destinations connects reached and failed to reach in the window (absent: not counted). */
  hosts?: { ok: number; failed: number; failedNames: number };
  /**
   * Bulk downloads in the window: their rate, and whether another node in the pool is known to
   * deliver `crawlFasterBy` times that (absent: none ran, or the egress does not meter them).
   */
  bulk?: { rateBps: number; fasterKnown: boolean };
}

/** What a window saw go wrong: the link, names, connects, a stall, a crawl, retransmissions. */
export type Symptom = 'link' | 'dns' | 'dns-slow' | 'connects' | 'stall' | 'slow' | 'retransmit';

export interface WindowScore {
  /** 0 (dead) .. 1 (fine). */
  score: number;
  bad: boolean;
  /** Why points were taken off, for the log. */
  reasons: string[];
  symptoms: Symptom[];
  /**
   * Nothing went through the egress in the window (no connect, no byte): only the link and the
   * health probe's own DNS query were seen, so a symptom that shows only with traffic (connects
   * failing, a stall) could not have shown.
   */
  quiet: boolean;
  /**
   * Every connect in the window failed, to `urgentFailedHosts` or more places, none reached (#60):
   * the node's uplink or resolver is dead, not one site. Like a dead tunnel, this asks for a
   * switch at once instead of after `badWindows` windows.
   */
  urgent: boolean;
  /** Bulk downloads' rate in the window (bytes/s), null when none ran: what the node delivers when asked. */
  bulkRateBps: number | null;
}

export function countersOf(source: HealthSource): HealthCounters {
  const s = source.stats;
  const t = source.tcpCounters();
  return {
    bytes: s.bytesUp + s.bytesDown,
    connects: s.sessionsTotal + s.failures,
    failures: s.failures,
    segmentsOut: t.segmentsOut,
    retransmissions: t.retransmissions,
  };
}

export function diffCounters(now: HealthCounters, before: HealthCounters): HealthCounters {
  return {
    bytes: now.bytes - before.bytes,
    connects: now.connects - before.connects,
    failures: now.failures - before.failures,
    segmentsOut: now.segmentsOut - before.segmentsOut,
    retransmissions: now.retransmissions - before.retransmissions,
  };
}

/**
 * One window's composite score. A link that is down or reconnecting vetoes (score 0); otherwise
 * each symptom takes its share: DNS failing or slow, CONNECTs failing, sessions open but no byte
 * moving (a stall), and TCP retransmitting heavily.
 *
 * Names failing (the node's resolver silent, or answering SERVFAIL) and most connects failing (the
 * node's uplink dead while the tunnel answers) are each a bad window alone (#60): either one is
 * everything by name, or everything, failing for the user. A slow resolver, a stall or heavy
 * retransmission alone is not; together they are.
 */
export function scoreWindow(w: WindowSample, o: HealthOptions): WindowScore {
  const { connects, failures, bytes, segmentsOut, retransmissions } = w.delta;
  const quiet = connects === 0 && bytes === 0 && w.sessionsActive === 0;
  if (w.link !== 'up')
    return {
      score: 0,
      bad: true,
      reasons: [`link ${w.link}`],
      symptoms: ['link'],
      quiet,
      urgent: false,
      bulkRateBps: w.bulk?.rateBps ?? null,
    };
  let score = 1;
  const reasons: string[] = [];
  const symptoms: Symptom[] = [];
  const take = (points: number, symptom: Symptom, why: string): void => {
    score -= points;
    symptoms.push(symptom);
    reasons.push(why);
  };
  // Users' names failing at the node's resolver count as the probe's own would: its one name may
  // be answered from a cache between Gatehop and the node (SecureNAT's relay) while theirs are not.
  const namesFailed = w.hosts ? w.hosts.failedNames : 0;
  if (w.dnsMs === null) take(0.6, 'dns', 'dns failed');
  else if (namesFailed >= 2 && namesFailed * 2 >= w.hosts!.failed)
    take(0.6, 'dns', `names failed for ${namesFailed} places`);
  else if (w.dnsMs > o.dnsSlowMs) take(0.25, 'dns-slow', `dns ${Math.round(w.dnsMs)} ms`);
  if (connects >= o.minConnectAttempts && failures / connects > o.maxConnectFailureRate)
    take(0.6, 'connects', `${failures}/${connects} connects failed`);
  if (w.sessionsActive > 0 && bytes === 0) take(0.3, 'stall', `stall: ${w.sessionsActive} sessions, no bytes`);
  // A crawl (#60) is a bad window alone, but only where leaving can help: another node is known
  // to deliver several times as much (a slow site, or the user's own slow link, is slow anywhere).
  if (w.bulk && w.bulk.rateBps < o.crawlBps && w.bulk.fasterKnown)
    take(0.6, 'slow', `downloads crawl at ${Math.round(w.bulk.rateBps / 1024)} KiB/s`);
  if (segmentsOut >= o.minSegments && retransmissions / segmentsOut > o.maxRetransmissionRate)
    take(0.3, 'retransmit', `retransmitting ${Math.round((100 * retransmissions) / segmentsOut)} %`);
  score = Math.max(0, score);
  const urgent =
    !!w.hosts &&
    connects >= o.minConnectAttempts &&
    failures >= connects &&
    w.hosts.ok === 0 &&
    w.hosts.failed >= o.urgentFailedHosts;
  if (urgent) reasons.push(`every connect failed, to ${w.hosts!.failed} places`);
  return {
    score,
    bad: score < o.threshold || urgent,
    reasons,
    symptoms,
    quiet,
    urgent,
    bulkRateBps: w.bulk?.rateBps ?? null,
  };
}

/** Symptoms only a window with traffic can see: a quiet window says nothing about them. */
export const TRAFFIC_SYMPTOMS: ReadonlySet<Symptom> = new Set(['connects', 'stall', 'slow', 'retransmit']);

/** How a window says a node fails, most telling first: the link, names, connects, a stall, a crawl, something else. */
export type FailureShape = 'link' | 'dns' | 'connects' | 'stall' | 'slow' | 'other';

export function failureShapeOf(symptoms: readonly Symptom[]): FailureShape {
  const seen = new Set(symptoms);
  for (const shape of ['link', 'dns', 'connects', 'stall', 'slow'] as const) if (seen.has(shape)) return shape;
  return 'other';
}
