import type { Egress } from '../contracts/index.js';

/** How a new session picks among the member tunnels (config `groups.balance.strategy`). */
export const BALANCE_STRATEGIES = ['failover', 'round-robin', 'least-sessions', 'lowest-latency'] as const;
export type BalanceStrategy = (typeof BALANCE_STRATEGIES)[number];

/** A member as a strategy sees it; members come best-ranked first. */
export interface BalanceCandidate {
  readonly egress: Egress;
  readonly sessions: number;
}

/**
 * Picks a member for each new session. Every strategy is given only usable members (never an empty
 * list: the manager falls back to the first member itself when none is usable).
 *   failover        the first (best-ranked) usable member; the others take over when it is down
 *   round-robin     each usable member in turn
 *   least-sessions  the member with the fewest open sessions (ties: the better-ranked)
 *   lowest-latency  the member with the lowest recent RTT (unmeasured members count as slowest)
 */
export class Balancer {
  #next = 0;

  constructor(
    public strategy: BalanceStrategy = 'round-robin',
    /** The member's recent RTT in ms, null when not measured yet. */
    private readonly latencyOf: (egress: Egress) => number | null = () => null,
  ) {}

  pick(candidates: readonly BalanceCandidate[]): number {
    if (candidates.length <= 1) return 0;
    switch (this.strategy) {
      case 'failover':
        return 0;
      case 'round-robin':
        return this.#next++ % candidates.length;
      case 'least-sessions':
        return argMin(candidates, (c) => c.sessions);
      case 'lowest-latency':
        return argMin(candidates, (c) => this.latencyOf(c.egress) ?? Number.POSITIVE_INFINITY);
    }
  }
}

/** The index of the smallest value; the first on a tie, so rank order breaks ties. */
function argMin<T>(items: readonly T[], value: (item: T) => number): number {
  let best = 0;
  for (let i = 1; i < items.length; i++) if (value(items[i]!) < value(items[best]!)) best = i;
  return best;
}
