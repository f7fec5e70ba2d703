import type { Logger } from '../common/index.js';
import type { EgressManager } from '../egress/index.js';
import type { SwitchPolicy } from '../health/index.js';
import type { FailFilter, Selector } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import type { UrlTests } from './url-tests.js';

/** A switch a round asks for: why, and to which node. */
export interface NextNode {
  reason: string;
  nodeId: string;
}

export interface ReevaluationDeps {
  selector: Pick<Selector, 'rank'>;
  nodes: () => readonly VpnGateNode[];
  policy: SwitchPolicy;
  urlTests: Pick<UrlTests, 'better'>;
  failFilter: Pick<FailFilter, 'allows'>;
  /** Found to tamper (core/honesty): never a better node. */
  flagged: (nodeId: string) => boolean;
  logger: Logger;
}

/**
 * The periodic round's decisions (switch-controller.ts runs the round): in manual mode, the pin
 * once it answers again; in auto mode, a clearly better node than the one in use (UrlTests'
 * margin), when the anti-flap policy allows a switch. The controller begins what they return, if
 * no switch began meanwhile.
 */
export class Reevaluation {
  #lastBusyAt = Date.now();
  #leasesSeen = 0;

  constructor(private readonly deps: ReevaluationDeps) {}

  /** How long no session has used the proxy (URL tests pause after urlTest.idleTimeoutMs of it). */
  idleMs(manager: Pick<EgressManager, 'activeSessions' | 'stats'>, now = Date.now()): number {
    const leases = manager.stats.leases;
    if (manager.activeSessions > 0 || leases !== this.#leasesSeen) this.#lastBusyAt = now;
    this.#leasesSeen = leases;
    return now - this.#lastBusyAt;
  }

  /** Manual mode: back to `pinned` once it is ranked again. */
  async returnToPin(pinned: string | null, activeId: string | null): Promise<NextNode | null> {
    if (!pinned || activeId === pinned) return null;
    if (!this.deps.nodes().some((n) => n.id === pinned)) return null;
    const ranking = await this.deps.selector.rank(this.deps.nodes());
    if (!ranking.ranked.some((r) => r.node.id === pinned)) return null;
    if (!this.deps.policy.mayAutoSwitch().ok) return null;
    return { reason: `pinned node ${pinned} answers again`, nodeId: pinned };
  }

  /** Auto mode: a node clearly better than `activeId`, usable and not found to tamper. */
  async betterNode(activeId: string): Promise<NextNode | null> {
    const { selector, nodes, failFilter, flagged, urlTests, policy } = this.deps;
    const ranking = await selector.rank(nodes());
    const current = ranking.ranked.find((r) => r.node.id === activeId);
    const best = ranking.ranked.find(
      (r) => r.node.id !== activeId && failFilter.allows(r.node.id) && !flagged(r.node.id),
    );
    if (!best || !current) return null;
    const why = urlTests.better(best, current, policy);
    if (!why) return null;
    const verdict = policy.mayAutoSwitch();
    if (!verdict.ok) {
      this.deps.logger.info(
        { event: 'switch-held', candidate: best.node.id, why: verdict.reason },
        `a better node waits: ${verdict.reason}`,
      );
      return null;
    }
    return { reason: why, nodeId: best.node.id };
  }
}
