import type { Logger } from '../common/index.js';
import {
  failureShapeOf,
  type FailureShape,
  type HealthOptions,
  type SwitchPolicy,
  type Symptom,
} from '../health/index.js';
import type { Selector } from '../selector/index.js';
import type { Held } from './types.js';

export interface LeaveRulesDeps {
  selector: Pick<Selector, 'recordLeft' | 'recordFailure' | 'fasterNodeKnown'>;
  /** Read at each use: a reload replaces it. */
  health: () => HealthOptions;
  /** The anti-flap minimum and the back-off, shared with every automatic switch. */
  policy: SwitchPolicy;
  logger: Logger;
}

/** What to do about a node the health monitor finds failing. */
export type LeaveVerdict = { leave: false } | { leave: true; urgent: boolean; shape: FailureShape };

/**
 * When the node in use is left for failing, and what is remembered of it (#60): a tunnel that drops
 * twice within health.flapWindowMs is flapping; every connect failing is left at once, but not twice
 * within the anti-flap minimum; a crawl counts only where a faster node is known, once per
 * health.leftHoldMs; a switch the anti-flap policy holds is looked at again when it allows one.
 * Each node left is held away from automatic selection for health.leftHoldMs (the selector's).
 */
export class LeaveRules {
  /** When each node's tunnel in use last dropped (died or went silent), within health.flapWindowMs. */
  readonly #drops = new Map<string, number[]>();
  /** When a node was last left at once for every connect failing (urgent health). */
  #lastUrgentLeave = Number.NEGATIVE_INFINITY;
  /** When a node was last left for a crawl. */
  #lastCrawlLeave = Number.NEGATIVE_INFINITY;
  /** A leave the anti-flap policy held: looked at again when the policy allows one. */
  #pending: NodeJS.Timeout | null = null;

  constructor(private readonly deps: LeaveRulesDeps) {}

  /**
   * The node's tunnel in use dropped now (died, or went silent): flapping if it dropped before
   * within health.flapWindowMs, and then held away as a node that failed in use (a tunnel that
   * comes up again notwithstanding); otherwise counted as one failure in its history. One tunnel
   * drops once: a silent one that then closes is the same drop.
   */
  tunnelDropped(held: Held): 'flapping' | 'dropped' {
    const { health, selector } = this.deps;
    const nodeId = held.node.id;
    let flapping = false;
    if (!held.dropCounted) {
      held.dropCounted = true;
      const now = Date.now();
      const recent = (this.#drops.get(nodeId) ?? []).filter((t) => now - t < health().flapWindowMs);
      this.#drops.set(nodeId, [...recent, now].slice(-2));
      if (this.#drops.size > 1_000) this.#drops.delete(this.#drops.keys().next().value!);
      flapping = recent.length > 0;
    }
    if (!flapping) {
      selector.recordFailure(nodeId);
      return 'dropped';
    }
    const { leftHoldMs, flapWindowMs } = health();
    selector.recordLeft(nodeId, 'flapping', leftHoldMs);
    this.deps.logger.info(
      { event: 'node-left', nodeId, shape: 'flapping', holdMs: leftHoldMs },
      `${nodeId}'s tunnel dropped twice within ${Math.round(flapWindowMs / 60_000)} min; automatic selection keeps away from it for ${Math.round(leftHoldMs / 60_000)} min`,
    );
    return 'flapping';
  }

  /**
   * Whether a crawl through `nodeId` counts (#60): only where leaving can help, another usable node
   * known to deliver `rateBps`; not after a crawl was left within health.leftHoldMs, for if the
   * next node is as slow, the cause is likelier the destination or this network (a slow site, the
   * user's own link) than a second volunteer.
   */
  crawlCounts(nodeId: string, rateBps: number): boolean {
    if (Date.now() - this.#lastCrawlLeave < this.deps.health().leftHoldMs) return false;
    return this.deps.selector.fasterNodeKnown(rateBps, nodeId) !== null;
  }

  /**
   * The health monitor finds `nodeId` failing: leave it now (and remember how), or hold while the
   * anti-flap policy forbids a switch, and call `again` once when it allows one (a held switch is a
   * pending one: it was dropped, and a node whose resolver had died held the user ten minutes).
   * Every connect failing, to many places (`urgent`), is left at once like a dead tunnel, but not
   * twice within the anti-flap minimum: if the next node fails the same way, the cause is likelier
   * the destinations or this network than two volunteers at once.
   */
  judge(
    nodeId: string,
    reason: string,
    urgent: boolean,
    symptoms: readonly Symptom[],
    again: () => void,
  ): LeaveVerdict {
    const { health, policy, selector, logger } = this.deps;
    const now = Date.now();
    const urgentNow = urgent && now - this.#lastUrgentLeave >= health().minSwitchIntervalMs;
    if (!urgentNow) {
      const verdict = policy.mayAutoSwitch();
      if (!verdict.ok) {
        this.#holdUntilAllowed(reason, verdict.reason, again);
        return { leave: false };
      }
    } else this.#lastUrgentLeave = now;
    // Remembered with how it failed, and held away from automatic selection for a while: a tunnel
    // to it coming up again says nothing about its resolver or its uplink.
    const shape = failureShapeOf(symptoms);
    if (shape === 'slow') this.#lastCrawlLeave = now;
    const { leftHoldMs } = health();
    selector.recordLeft(nodeId, shape, leftHoldMs);
    logger.info(
      { event: 'node-left', nodeId, shape, holdMs: leftHoldMs },
      `leaving ${nodeId} (${shape}); automatic selection keeps away from it for ${Math.round(leftHoldMs / 60_000)} min`,
    );
    return { leave: true, urgent: urgentNow, shape };
  }

  /** Said once per hold. */
  #holdUntilAllowed(reason: string, why: string, again: () => void): void {
    if (this.#pending) return;
    const at = this.deps.policy.allowedAt();
    this.deps.logger.info(
      { event: 'switch-held', reason, why, retryAt: at },
      `not switching yet: ${why}; leaving then if it still fails`,
    );
    this.#pending = setTimeout(
      () => {
        this.#pending = null;
        again();
      },
      Math.max(0, at - Date.now()),
    );
    this.#pending.unref();
  }

  stop(): void {
    if (this.#pending) clearTimeout(this.#pending);
    this.#pending = null;
  }
}
