import { detach, type Logger } from '../common/index.js';
import type { TunnelProtocol } from '../egress/index.js';
import type { HealthSource } from '../health/index.js';
import type { Ranking } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import { orderCandidates, PIN_TAMPERS } from './candidates.js';
import type { SwitchControllerDeps } from './controller-deps.js';
import type { ControllerParts } from './controller-parts.js';
import type { HealthTally, SwitchBook } from './switch-book.js';
import type { ControllerEvent, Held, NodeTunnel, SwitchKind, SwitchRecord, SwitchState } from './types.js';

/** What the engine reads of the controller that owns it. */
export interface EngineContext {
  /** The controller's current deps (a reload replaces them). */
  deps(): SwitchControllerDeps;
  parts: ControllerParts;
  book: SwitchBook;
  health: HealthTally;
  log: Logger;
  emit(ev: ControllerEvent): void;
  mode(): 'auto' | 'manual';
  pinned(): string | null;
  tunnelId(kind: string): string;
  /** Aborted when the controller stops. */
  signal: AbortSignal;
}

/**
 * The switch state machine (Idle → Selecting → Connecting → Promoting → Draining → Idle) and the
 * events that start a switch: a tunnel that dies or goes quiet, a node the health monitor finds
 * failing, a failed switch's retry. One switch runs at a time; what asks meanwhile is remembered
 * (an urgent follow-up, the user's pick) and run when it ends. SwitchController owns it and is
 * its only caller: the commands, the rounds and the views are there.
 */
export class SwitchEngine {
  state: SwitchState = 'idle';
  active: Held | null = null;
  running: { id: number; done: Promise<SwitchRecord> } | null = null;
  followUp: { reason: string } | null = null;
  /** The node the next switch leaves for failing, and how (said in its record). */
  leaving: { nodeId: string; leftFor: NonNullable<SwitchRecord['leftFor']> } | null = null;
  /** A pick made while a switch ran: switched to when that one ends. */
  pickAfter: string | null = null;
  seq = 0;
  retry: NodeJS.Timeout | null = null;
  stopped = false;
  /** The node whose active tunnel died last, and when: tried last for a minute. */
  lastDied: { nodeId: string; at: number } | null = null;
  pinFailed: string | null = null;
  readonly #c: EngineContext;

  constructor(c: EngineContext) {
    this.#c = c;
  }

  begin(reason: string, kind: SwitchKind, nodeId?: string): { switchId: number; done: Promise<SwitchRecord> } {
    if (this.running) {
      if (kind === 'urgent') this.followUp = { reason };
      return { switchId: this.running.id, done: this.running.done };
    }
    const id = ++this.seq;
    const done = this.run(id, reason, kind, nodeId).finally(() => {
      this.running = null;
      const next = this.followUp;
      this.followUp = null;
      const picked = this.pickAfter;
      this.pickAfter = null;
      const pinned = this.#c.pinned();
      if (next && !this.stopped && (!this.active || !this.active.egress.responsive))
        void this.begin(next.reason, 'urgent');
      else if (picked && !this.stopped && this.#c.mode() === 'manual' && pinned && this.active?.node.id !== pinned)
        void this.begin(picked, 'user', pinned);
    });
    this.running = { id, done };
    return { switchId: id, done };
  }

  set(state: SwitchState, id: number, reason: string, fields: Record<string, unknown> = {}): void {
    this.state = state;
    this.#c.log.info(
      { event: 'switch-state', switchId: id, state, reason, ...fields },
      `switch ${id}: ${state} (${reason})`,
    );
    this.#c.emit({ type: 'state', state, switchId: id, reason });
  }

  async run(id: number, reason: string, kind: SwitchKind, nodeId?: string): Promise<SwitchRecord> {
    const started = Date.now();
    // Why the node this switch leaves was left, if it was for failing (said with the record). A
    // node whose tunnel died is no longer active, but it is still the one this switch leaves.
    const leaving = this.leaving;
    this.leaving = null;
    const active = this.active?.node.id ?? null;
    const leftFor = leaving && (leaving.nodeId === active || active === null) ? leaving.leftFor : undefined;
    const from = active ?? (leftFor ? leaving!.nodeId : null);
    const finish = (
      outcome: SwitchRecord['outcome'],
      to: string | null,
      error?: string,
      protocol?: TunnelProtocol,
    ): SwitchRecord => {
      const record: SwitchRecord = {
        id,
        at: started,
        kind,
        reason,
        from,
        to,
        outcome,
        durationMs: Date.now() - started,
        ...(protocol ? { protocol } : {}),
        ...(error ? { error } : {}),
        ...(leftFor ? { leftFor } : {}),
      };
      this.#c.book.add(record);
      this.set('idle', id, `${outcome}${to ? ` to ${to}` : ''}`, { outcome, from, to, durationMs: record.durationMs });
      // After every switch, not only a good one: a pin that failed in manual mode still means one tunnel.
      if (!this.stopped) this.balance(outcome === 'switched' ? `${to} is active` : `switch ${outcome}`);
      this.#c.emit({ type: 'switch', record });
      return record;
    };
    try {
      this.set('selecting', id, reason, { kind, from });
      const candidates = await this.candidates(kind, nodeId);
      if (this.stopped) return finish('skipped', null, 'stopped');
      if (candidates.length === 0) {
        this.afterFailure(kind, id, 'no candidate node');
        return finish('no-candidate', null, 'no candidate node');
      }
      const attempts = nodeId ? 1 : this.#c.deps().options.maxAttempts;
      for (const node of candidates.slice(0, attempts)) {
        this.set('connecting', id, `trying ${node.id}`, { nodeId: node.id });
        const egress = await this.#c.parts.connector.connect(node, id, {
          signal: this.#c.signal,
          timeoutMs: this.#c.deps().options.connectTimeoutMs,
          id: this.#c.tunnelId('tunnel'),
        });
        if (this.stopped) {
          await egress?.close();
          return finish('skipped', null, 'stopped');
        }
        if (!egress) {
          if (node.id === this.#c.pinned() && node.id !== from)
            this.pinnedFailed(node.id, 'its tunnel did not come up');
          continue;
        }
        // A verdict can come while the tunnel connects (a check the user asked for): nodeFlagged
        // only leaves the active node, so a candidate found out meanwhile is refused here, by the
        // rule that chose it (the user's pick or pin by their consent, any other never).
        const chosenByUser = node.id === nodeId || (this.#c.mode() === 'manual' && node.id === this.#c.pinned());
        if (chosenByUser ? this.#c.deps().honesty?.blocked(node.id) : this.#c.deps().honesty?.flagged(node.id)) {
          this.#c.log.warn(
            { event: 'candidate-flagged', switchId: id, nodeId: node.id },
            `${node.id} was found to tamper while its tunnel came up: not used`,
          );
          await egress.close();
          if (chosenByUser) this.pinnedFailed(node.id, PIN_TAMPERS);
          continue;
        }
        this.set('promoting', id, `${node.id} is up`, { nodeId: node.id, egressId: egress.id });
        const old = this.promote(node, egress, reason);
        this.#c.parts.policy.recordSwitch();
        if (node.id === this.#c.pinned()) this.pinFailed = null;
        const draining = this.#c.deps().manager.draining.find((d) => d.egress === old?.egress);
        this.set(
          'draining',
          id,
          old ? `${old.node.id} keeps ${draining?.sessions ?? 0} sessions until they end` : 'nothing to drain',
          { previous: old?.node.id ?? null, sessions: draining?.sessions ?? 0 },
        );
        detach(this.#c.log, 'standby-refresh', this.#c.parts.standby.refresh());
        return finish('switched', node.id, undefined, egress.protocol ?? 'openvpn');
      }
      this.afterFailure(kind, id, 'every candidate failed');
      return finish('failed', null, 'every candidate failed');
    } catch (err) {
      this.#c.log.error(
        { event: 'switch-error', switchId: id, err: (err as Error).message },
        'switch failed unexpectedly',
      );
      this.afterFailure(kind, id, (err as Error).message);
      return finish('failed', null, (err as Error).message);
    }
  }

  /** The nodes to try, best first, never the active one (candidates.ts). */
  async candidates(kind: SwitchKind, nodeId?: string): Promise<VpnGateNode[]> {
    const pool = this.#c.deps().nodes();
    const activeId = this.active?.node.id ?? null;
    if (nodeId) {
      // The user's pick of a node found to tamper goes through only once they accepted it (the API asks).
      if (this.#c.deps().honesty?.blocked(nodeId)) {
        this.pinnedFailed(nodeId, PIN_TAMPERS);
        return [];
      }
      return pool.filter((n) => n.id === nodeId && n.id !== activeId);
    }
    const { nodes, pinProblem } = orderCandidates({
      pool,
      ranking: await this.ranking(kind),
      activeId,
      failFilter: this.#c.parts.failFilter,
      died: this.lastDied && Date.now() - this.lastDied.at < 60_000 ? this.lastDied.nodeId : null,
      isMember: (id) => this.#c.parts.members.has(id),
      mode: this.#c.mode(),
      pinned: this.#c.pinned(),
      fallbackWhenPinnedFails: this.#c.deps().options.fallbackWhenPinnedFails,
      flagged: (id) => !!this.#c.deps().honesty?.flagged(id),
      pinBlocked: (id) => !!this.#c.deps().honesty?.blocked(id),
    });
    if (pinProblem) this.pinnedFailed(this.#c.pinned()!, pinProblem);
    if (nodes.length > 0 || nodeId || this.#c.mode() === 'manual') return nodes;
    // Nothing else ranks: the nodes held away after failing in use are a preference, not a ban
    // (#60). Left longest ago first: it may have mended, and any beats staying on a node that fails.
    const held = (await this.ranking(kind)).excluded.filter((x) => x.reason === 'left').map((x) => x.nodeId);
    const leftAt = (id: string): number => this.#c.deps().selector.leftAt(id) ?? 0;
    return pool
      .filter((n) => held.includes(n.id) && n.id !== activeId && !this.#c.deps().honesty?.flagged(n.id))
      .sort((a, b) => leftAt(a.id) - leftAt(b.id));
  }

  /** Urgent switches use the last ranking at once (and refresh it behind); others rank if it is stale. */
  async ranking(kind: SwitchKind): Promise<Ranking> {
    const { selector } = this.#c.deps();
    const last = selector.last;
    if (last && last.ranked.length > 0 && (kind === 'urgent' || Date.now() - last.at < 60_000)) {
      if (kind === 'urgent') void selector.rank(this.#c.deps().nodes()).catch(() => {});
      return last;
    }
    return selector.rank(this.#c.deps().nodes());
  }

  /** Makes `egress` active (the manager drains the old one) and watches it. Returns what was active. */
  promote(node: VpnGateNode, egress: NodeTunnel, reason: string): Held | null {
    const old = this.active;
    for (const off of old?.off ?? []) off();
    const held: Held = { node, egress, since: Date.now(), off: [] };
    held.off.push(
      egress.onClose((why) => this.onActiveClosed(held, why)),
      egress.onLiveness((responsive, quietMs) => {
        if (responsive || this.active !== held) return;
        // Counted against the node, so neither ranking nor the pin brings it straight back.
        const flapping = this.#c.parts.leave.tunnelDropped(held) === 'flapping';
        if (node.id === this.#c.pinned()) this.pinnedFailed(node.id, `silent for ${Math.round(quietMs / 1000)} s`);
        this.leaving = { nodeId: node.id, leftFor: flapping ? 'flapping' : 'link' };
        void this.begin(`active node ${node.id} silent for ${Math.round(quietMs / 1000)} s`, 'urgent');
      }),
    );
    this.active = held;
    this.#c.parts.probes.start(held);
    this.#c.deps().manager.setActive(egress, `${reason} → ${node.id}`);
    const protocol = egress.protocol ?? 'openvpn';
    this.#c.log.info(
      { event: 'tunnel-active', nodeId: node.id, egressId: egress.id, protocol, previous: old?.node.id ?? null },
      `new sessions leave through ${node.id} (${protocol})`,
    );
    this.#c.parts.monitor.watch(egress);
    return old;
  }

  onActiveClosed(held: Held, why: string): void {
    if (this.active !== held || this.stopped) return;
    for (const off of held.off) off();
    this.active = null;
    this.#c.parts.monitor.watch(null);
    this.#c.deps().manager.clearActive(held.egress, why);
    const flapping = this.#c.parts.leave.tunnelDropped(held) === 'flapping';
    this.lastDied = { nodeId: held.node.id, at: Date.now() };
    if (held.node.id === this.#c.pinned()) this.pinnedFailed(held.node.id, why);
    this.leaving = { nodeId: held.node.id, leftFor: flapping ? 'flapping' : 'died' };
    void this.begin(`active node ${held.node.id} died: ${why}`, 'urgent');
  }

  /** A crawl through the node in use counts only where leaving can help (leave-rules.ts). */
  fasterNodeKnown(source: HealthSource, rateBps: number): boolean {
    const held = this.active;
    return held?.egress === source && this.#c.parts.leave.crawlCounts(held.node.id, rateBps);
  }

  onUnhealthy(source: HealthSource, reason: string, urgent = false): void {
    if (this.active?.egress !== source || this.running || this.stopped) return;
    const node = this.active.node;
    const verdict = this.#c.parts.leave.judge(node.id, reason, urgent, this.#c.health.last?.symptoms ?? [], () => {
      // The hold ended: a node the health monitor still finds failing is left now.
      const failing = this.#c.parts.monitor.failing;
      if (failing && this.active?.egress === source) this.onUnhealthy(source, failing.reason);
    });
    if (!verdict.leave) return;
    if (node.id === this.#c.pinned()) this.pinnedFailed(node.id, reason);
    this.leaving = { nodeId: node.id, leftFor: verdict.shape };
    void this.begin(`active node ${node.id} unhealthy: ${reason}`, verdict.urgent ? 'urgent' : 'auto');
  }

  pinnedFailed(nodeId: string, why: string): void {
    if (this.pinFailed === nodeId) return;
    this.pinFailed = nodeId;
    const fallback = this.#c.deps().options.fallbackWhenPinnedFails;
    this.#c.log.warn(
      { event: 'pinned-node-failed', nodeId, reason: why, fallback },
      fallback
        ? `pinned node ${nodeId} failed (${why}); using the best node until it recovers`
        : `pinned node ${nodeId} failed (${why})`,
    );
    this.#c.emit({ type: 'pin-failed', nodeId, reason: why });
  }

  /** After a failed switch: automatic switching backs off; with no active tunnel, retry then. */
  afterFailure(kind: SwitchKind, id: number, why: string): void {
    const ms = this.#c.parts.policy.recordFailure();
    this.#c.log.info(
      { event: 'switch-backoff', switchId: id, kind, why, backoffMs: ms },
      `switch ${id} failed (${why}); automatic switching waits ${Math.round(ms / 1000)} s`,
    );
    if (this.active || this.stopped) return;
    if (this.retry) clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.retry = null;
      if (!this.active && !this.stopped) void this.begin('no active tunnel: retrying', 'urgent');
    }, ms);
    this.retry.unref();
  }

  /** Members wanted now: tunnels - 1 in auto mode with an active tunnel, none in manual mode. */
  balance(reason: string): void {
    const want = this.#c.mode() === 'auto' ? this.#c.deps().options.balance.tunnels - 1 : 0;
    this.#c.parts.members.setTarget(want, reason);
  }
}
