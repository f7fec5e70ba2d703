import type { NodeHistory } from '../store/index.js';
import type { SelectorOptions } from './options.js';
import type { PriorTerms } from './priors.js';

export interface ScoreTerms {
  rttMs: number | null;
  latency: number;
  prior: number;
  history: number;
  recentFailures: number;
  total: number;
}

/**
 * score = α·(1/rttMs) + β·prior + γ·historySuccessRate − δ·recentFailurePenalty.
 * Pure: the same inputs give the same score; every term is kept for display.
 */
export function scoreNode(prior: PriorTerms, rttMs: number | null, h: NodeHistory, opts: SelectorOptions): ScoreTerms {
  const latency = rttMs === null || rttMs <= 0 ? 0 : opts.alpha / Math.max(rttMs, 1);
  const priorTerm = opts.beta * prior.prior;
  const tries = h.successes + h.failures;
  const successRate = tries === 0 ? 0.5 : h.successes / tries;
  const history = opts.gamma * successRate;
  const recentFailures = opts.delta * Math.min(h.consecutiveFailures, 5);
  return {
    rttMs,
    latency,
    prior: priorTerm,
    history,
    recentFailures,
    total: latency + priorTerm + history - recentFailures,
  };
}
