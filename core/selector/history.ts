import type { LeftShape, NodeHistory } from '../store/index.js';

/** Consecutive failures back a node off exponentially (initial, doubling, capped); a success resets it. */
export function backoffMs(consecutiveFailures: number, initialMs: number, maxMs: number): number {
  if (consecutiveFailures <= 0) return 0;
  return Math.min(maxMs, initialMs * 2 ** Math.min(30, consecutiveFailures - 1));
}

export function withFailure(h: NodeHistory, now: number, initialMs: number, maxMs: number): NodeHistory {
  const consecutiveFailures = h.consecutiveFailures + 1;
  return {
    ...h,
    failures: h.failures + 1,
    consecutiveFailures,
    lastFailureAt: now,
    backoffUntil: now + backoffMs(consecutiveFailures, initialMs, maxMs),
  };
}

const EWMA = 0.3;
const ewma = (old: number | null, sample: number | undefined): number | null =>
  sample === undefined ? old : old === null ? sample : old * (1 - EWMA) + sample * EWMA;

export function withSuccess(
  h: NodeHistory,
  now: number,
  sample: { connectMs?: number; throughputBps?: number } = {},
): NodeHistory {
  return {
    ...h,
    successes: h.successes + 1,
    consecutiveFailures: 0,
    lastSuccessAt: now,
    backoffUntil: null,
    avgConnectMs: ewma(h.avgConnectMs, sample.connectMs),
    avgThroughputBps: ewma(h.avgThroughputBps, sample.throughputBps),
  };
}

/** Bulk downloads through the node ran at `rateBps` (#60): folded into what it is known to deliver. */
export function withThroughput(h: NodeHistory, rateBps: number): NodeHistory {
  return { ...h, avgThroughputBps: ewma(h.avgThroughputBps, rateBps) };
}

export function inBackoff(h: NodeHistory, now: number): boolean {
  return h.backoffUntil !== null && h.backoffUntil > now;
}

/**
 * Automatic selection left the node in use for how it failed (#60): a failure (its back-off) and a
 * hold of `holdMs` that a tunnel coming up does not clear, since the tunnel is not what failed.
 */
export function withLeft(
  h: NodeHistory,
  now: number,
  shape: LeftShape,
  holdMs: number,
  initialMs: number,
  maxMs: number,
): NodeHistory {
  return { ...withFailure(h, now, initialMs, maxMs), left: { shape, at: now, until: now + holdMs } };
}

/** Still held away from automatic selection after being left. */
export function leftHolding(h: NodeHistory, now: number): boolean {
  return h.left !== null && h.left.until > now;
}
