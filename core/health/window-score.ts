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
}

export interface WindowScore {
  /** 0 (dead) .. 1 (fine). */
  score: number;
  bad: boolean;
  /** Why points were taken off, for the log. */
  reasons: string[];
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
 */
export function scoreWindow(w: WindowSample, o: HealthOptions): WindowScore {
  if (w.link !== 'up') return { score: 0, bad: true, reasons: [`link ${w.link}`] };
  let score = 1;
  const reasons: string[] = [];
  if (w.dnsMs === null) {
    score -= 0.5;
    reasons.push('dns failed');
  } else if (w.dnsMs > o.dnsSlowMs) {
    score -= 0.25;
    reasons.push(`dns ${Math.round(w.dnsMs)} ms`);
  }
  const { connects, failures, bytes, segmentsOut, retransmissions } = w.delta;
  if (connects >= o.minConnectAttempts && failures / connects > o.maxConnectFailureRate) {
    score -= 0.5;
    reasons.push(`${failures}/${connects} connects failed`);
  }
  if (w.sessionsActive > 0 && bytes === 0) {
    score -= 0.3;
    reasons.push(`stall: ${w.sessionsActive} sessions, no bytes`);
  }
  if (segmentsOut >= o.minSegments && retransmissions / segmentsOut > o.maxRetransmissionRate) {
    score -= 0.3;
    reasons.push(`retransmitting ${Math.round((100 * retransmissions) / segmentsOut)} %`);
  }
  score = Math.max(0, score);
  return { score, bad: score < o.threshold, reasons };
}
