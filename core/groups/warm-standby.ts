import type { Logger } from '../common/index.js';
import type { EgressManager } from '../egress/index.js';
import type { Selector } from '../selector/index.js';
import type { Held, NodeOpener, NodeTunnel } from './types.js';
import { detach } from '../common/index.js';

export interface WarmStandbyDeps {
  manager: EgressManager;
  selector: Selector;
  open: NodeOpener;
  /** Read on each use (a reload applies at once). */
  enabled: () => boolean;
  connectTimeoutMs: () => number;
  activeId: () => string | null;
  tunnelId: () => string;
  /** Found to tamper (core/honesty): never the standby. */
  flagged?: (nodeId: string) => boolean;
  signal: AbortSignal;
  logger: Logger;
}

/**
 * The warm standby (groups.warmStandby): the next-best node's tunnel kept up beside the active
 * one, so a switch to it needs no handshake. Refreshed after every switch; replaced when it
 * closes; never a node that still has a draining tunnel (some servers allow one session per client).
 */
export class WarmStandby {
  #held: Held | null = null;
  #opening: Promise<void> | null = null;
  #stopped = false;

  constructor(private readonly deps: WarmStandbyDeps) {}

  get held(): Held | null {
    return this.#held;
  }

  /** The standby's tunnel if it is for `nodeId` and alive; it stops being the standby. */
  take(nodeId: string): NodeTunnel | null {
    const s = this.#held;
    if (s?.node.id !== nodeId || s.egress.state === 'closed') return null;
    this.#held = null;
    for (const off of s.off) off();
    return s.egress;
  }

  async refresh(): Promise<void> {
    if (!this.deps.enabled() || this.#stopped || this.#opening) return;
    const activeId = this.deps.activeId();
    if (this.#held && this.#held.node.id !== activeId && this.#held.egress.state !== 'closed') return;
    const log = this.deps.logger;
    this.#opening = (async () => {
      const busy = new Set(this.deps.manager.draining.map((d) => (d.egress as NodeTunnel).nodeId));
      const flagged = this.deps.flagged ?? (() => false);
      const next = this.deps.selector.last?.ranked.find(
        (r) => r.node.id !== activeId && !busy.has(r.node.id) && !flagged(r.node.id),
      )?.node;
      if (!next) return;
      try {
        const egress = await this.deps.open(next, {
          signal: this.deps.signal,
          timeoutMs: this.deps.connectTimeoutMs(),
          id: this.deps.tunnelId(),
        });
        if (this.#stopped || this.deps.activeId() === next.id) {
          await egress.close();
          return;
        }
        const held: Held = { node: next, egress, since: Date.now(), off: [] };
        held.off.push(
          egress.onClose((why) => {
            if (this.#held !== held) return;
            this.#held = null;
            log.info({ event: 'standby-lost', nodeId: next.id, reason: why }, `warm standby ${next.id} closed`);
            detach(log, 'standby-refresh', this.refresh());
          }),
        );
        await this.drop('replaced');
        this.#held = held;
        log.info({ event: 'standby-ready', nodeId: next.id, egressId: egress.id }, `warm standby ${next.id} is up`);
      } catch (err) {
        if (!this.#stopped)
          log.info(
            { event: 'standby-failed', nodeId: next.id, err: (err as Error).message },
            `warm standby ${next.id} did not come up`,
          );
      }
    })().finally(() => (this.#opening = null));
    await this.#opening;
  }

  async drop(why: string): Promise<void> {
    const s = this.#held;
    if (!s) return;
    this.#held = null;
    for (const off of s.off) off();
    this.deps.logger.info(
      { event: 'standby-closed', nodeId: s.node.id, reason: why },
      `warm standby ${s.node.id} closed`,
    );
    await s.egress.close();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#opening;
    await this.drop('shutdown');
  }
}
