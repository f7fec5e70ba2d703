import { ErrorCodes, GatehopError, Listeners, type Logger, detach } from '../common/index.js';
import type { TunnelProtocol } from '../egress/index.js';
import type { HealthMonitor, HealthOptions, SwitchPolicy } from '../health/index.js';
import type { FailFilter } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import type { ActiveProbes } from './active-probes.js';
import type { BalanceMembers, MemberInfo } from './balance-members.js';
import type { LeaveRules } from './leave-rules.js';
import type { Reevaluation } from './reevaluation.js';
import type { NodeConnector } from './node-connector.js';
import type { GroupOptions } from './options.js';
import type { NodeProtocolRecord, ProtocolChoice, ProtocolChoiceOptions } from './protocol-choice.js';
import type { ControllerEvent, NodeTunnel, SwitchRecord, SwitchState } from './types.js';
import type { UrlTests } from './url-tests.js';
import type { WarmStandby } from './warm-standby.js';
import { makeControllerParts } from './controller-parts.js';
import { SwitchEngine } from './switch-engine.js';
import type { SwitchControllerDeps } from './controller-deps.js';
import { HealthTally, SwitchBook } from './switch-book.js';

export type { ControllerEvent, NodeTunnel, OpenTunnel, SwitchKind, SwitchRecord, SwitchState } from './types.js';
export type { NodeVerdicts, SwitchControllerDeps } from './controller-deps.js';

/**
 * Make-before-break switching: Idle → Selecting → Connecting → Promoting → Draining → Idle. The old
 * egress keeps serving until Promoting; a candidate that fails in Connecting keeps the old one,
 * is penalised in history, and automatic switching backs off (30 s doubling to 480 s). Every
 * transition is logged at info with its reason.
 *
 * Triggers: the active tunnel dying or going quiet (urgent), the health monitor (auto), the
 * periodic URL test / re-rank (auto: the selector group's pin returning, or the URL-test group's
 * clearly better node), and the user (switchNow, setMode).
 *
 * This class is the surface: the commands (switchNow, pick, setMode, retryNow), the periodic round,
 * the honesty hooks and what the views read. The state machine itself is SwitchEngine
 * (switch-engine.ts); the parts it drives, each in its own file and made in controller-parts.ts:
 * NodeConnector (a tunnel to a node: reused, or new with the node's protocols in ProtocolChoice's
 * order), UrlTests (measurements and the better-node rule), ActiveProbes, WarmStandby,
 * BalanceMembers, Reevaluation, LeaveRules and the HealthMonitor.
 */
export class SwitchController {
  #tunnelSeq = 0;
  #tick: NodeJS.Timeout | null = null;
  #evaluating = false;
  readonly #abort = new AbortController();
  /** The state machine: the switch running, the active tunnel, what waits for the switch to end. */
  readonly #engine: SwitchEngine;
  readonly #listeners: Listeners<ControllerEvent>;
  readonly #policy: SwitchPolicy;
  /** When the node in use is left for failing, and what is remembered of it (#60). */
  readonly #leave: LeaveRules;
  readonly #monitor: HealthMonitor;
  readonly #log: Logger;
  readonly #book = new SwitchBook();
  /** Health windows of the active egress so far, and the latest one. */
  readonly health = new HealthTally();
  /** Nodes the probes found dead or too slow are skipped by selection (also the URL-test group's). */
  readonly failFilter: FailFilter;
  /** Which protocol a node is tried with first, learnt per network. */
  readonly protocols: ProtocolChoice;
  readonly #urlTests: UrlTests;
  readonly #probes: ActiveProbes;
  readonly #standby: WarmStandby;
  readonly #connector: NodeConnector;
  /** With groups.balance.tunnels > 1 in auto mode: the member tunnels beside the active one. */
  readonly #members: BalanceMembers;
  /** The periodic round's decisions: back to the pin, or to a better node. */
  readonly #rounds: Reevaluation;

  constructor(private deps: SwitchControllerDeps) {
    this.#log = deps.logger.child({ component: 'switch' });
    this.#listeners = new Listeners(this.#log, 'switch event');
    const parts = makeControllerParts(deps, this.#log, {
      deps: () => this.deps,
      active: () => this.#engine.active,
      tunnelId: (kind) => `${kind}-${++this.#tunnelSeq}`,
      emit: (ev) => this.#emit(ev),
      activeProbedDead: (held, why) => {
        if (this.#engine.active !== held) return;
        this.#engine.leaving = { nodeId: held.node.id, leftFor: 'link' };
        void this.#engine.begin(why, 'urgent');
      },
      health: {
        onUnhealthy: (source, reason, o) => this.#engine.onUnhealthy(source, reason, o?.urgent === true),
        fasterNodeKnown: (source, rateBps) => this.#engine.fasterNodeKnown(source, rateBps),
        onWindow: (source, w) => {
          // What the node in use delivers when asked for much: remembered, so a later crawl
          // elsewhere knows this node is faster (#60).
          const held = this.#engine.active;
          if (w.bulkRateBps !== null && held?.egress === source)
            this.deps.selector.recordThroughput(held.node.id, w.bulkRateBps);
          this.health.add(source.id, w);
        },
      },
      signal: this.#abort.signal,
    });
    ({ failFilter: this.failFilter, protocols: this.protocols, policy: this.#policy, leave: this.#leave } = parts);
    ({ urlTests: this.#urlTests, probes: this.#probes, standby: this.#standby } = parts);
    ({ connector: this.#connector, members: this.#members, rounds: this.#rounds, monitor: this.#monitor } = parts);
    this.#engine = new SwitchEngine({
      deps: () => this.deps,
      parts,
      book: this.#book,
      health: this.health,
      log: this.#log,
      emit: (ev) => this.#emit(ev),
      mode: () => this.mode,
      pinned: () => this.pinned,
      tunnelId: (kind) => `${kind}-${++this.#tunnelSeq}`,
      signal: this.#abort.signal,
    });
  }

  /** The last 50 switches, oldest first. */
  get history(): readonly SwitchRecord[] {
    return this.#book.history;
  }

  get counts(): SwitchBook['counts'] {
    return this.#book.counts;
  }

  get state(): SwitchState {
    return this.#engine.state;
  }

  get active(): { node: VpnGateNode; egress: NodeTunnel; since: number } | null {
    return (
      this.#engine.active && {
        node: this.#engine.active.node,
        egress: this.#engine.active.egress,
        since: this.#engine.active.since,
      }
    );
  }

  get standby(): { node: VpnGateNode; egress: NodeTunnel; since: number } | null {
    const s = this.#standby.held;
    return s && { node: s.node, egress: s.egress, since: s.since };
  }

  /** The latest URL-test delay per node (ms; null = failed). */
  get urlDelays(): ReadonlyMap<string, { ms: number | null; at: number }> {
    return this.#urlTests.delays;
  }

  get mode(): 'auto' | 'manual' {
    return this.deps.selection.mode;
  }

  /** The URL the automatic group tests nodes with. */
  get urlTestUrl(): string {
    return this.deps.options.urlTest.url;
  }

  get pinned(): string | null {
    return this.deps.selection.pinned;
  }

  /** The pinned node that failed and is being stood in for (manual mode with fallback), if any. */
  get pinFailed(): string | null {
    return this.#engine.pinFailed;
  }

  /** The balance members beside the active tunnel (none with tunnels: 1 or in manual mode). */
  get members(): readonly MemberInfo[] {
    return this.#members.list;
  }

  /** How many tunnels auto mode keeps and how sessions pick one. */
  get balance(): { strategy: GroupOptions['balance']['strategy']; tunnels: number } {
    return { strategy: this.deps.manager.strategy, tunnels: this.deps.options.balance.tunnels };
  }

  /** The protocols `node` can be reached with, in the order it would be tried now, and what each did. */
  protocolsFor(node: VpnGateNode): Array<{ protocol: TunnelProtocol; record: NodeProtocolRecord | null }> {
    const records = this.protocols.nodeRecord(node.id);
    return this.protocols
      .orderFor(node.id, (this.deps.offered ?? (() => ['openvpn' as const]))(node))
      .map((protocol) => ({ protocol, record: records[protocol] ?? null }));
  }

  /** The node's latest RTT from its probes or URL tests (ms), null if none yet. */
  rttOf(nodeId: string): number | null {
    return this.#urlTests.rtt.get(nodeId) ?? null;
  }

  get switching(): number | null {
    return this.#engine.running?.id ?? null;
  }

  get lastSwitch(): SwitchRecord | null {
    return this.history.at(-1) ?? null;
  }

  onEvent(fn: (ev: ControllerEvent) => void): () => void {
    return this.#listeners.add(fn);
  }

  /**
   * A reload: group, probe, fail-filter, balance and health parameters apply from now on. The URL
   * test timer restarts with a new interval; the active tunnel's probes restart with new specs;
   * members are added or drained to a new tunnel count; tunnels and sessions are not touched.
   */
  reconfigure(options: GroupOptions, health: HealthOptions, protocols?: ProtocolChoiceOptions): void {
    const before = this.deps.options;
    this.deps = { ...this.deps, options, health };
    if (protocols) this.protocols.updateOptions(protocols);
    this.failFilter.updateOptions(options.failFilter);
    this.#policy.updateOptions(health);
    this.#monitor.updateOptions(health);
    this.deps.manager.updateOptions({ strategy: options.balance.strategy });
    if (this.#tick && options.urlTest.intervalMs !== before.urlTest.intervalMs) {
      clearInterval(this.#tick);
      this.#tick = setInterval(() => this.#evaluateSoon(), options.urlTest.intervalMs);
      this.#tick.unref();
    }
    if (this.#engine.active && JSON.stringify(options.probes) !== JSON.stringify(before.probes))
      this.#probes.start(this.#engine.active);
    this.#engine.balance('settings reloaded');
    this.#log.info(
      { event: 'controller-reconfigured', tunnels: options.balance.tunnels, strategy: options.balance.strategy },
      'switching settings reloaded',
    );
  }

  /** Brings the first tunnel up and starts the periodic URL test. */
  start(): void {
    void this.#engine.begin('startup', 'urgent');
    this.#tick = setInterval(() => this.#evaluateSoon(), this.deps.options.urlTest.intervalMs);
    this.#tick.unref();
  }

  /**
   * An explicit switch: with `nodeId`, pin it (manual mode) and switch to it; without, to the best
   * candidate now. Throws GH_ERR_SWITCH_IN_PROGRESS while one runs, GH_ERR_NODE_UNKNOWN for a node
   * not in the pool.
   */
  switchNow(opts: { nodeId?: string; reason?: string } = {}): { switchId: number; done: Promise<SwitchRecord> } {
    if (this.#engine.running)
      throw new GatehopError(ErrorCodes.SWITCH_IN_PROGRESS, `switch ${this.#engine.running.id} is in progress`);
    if (opts.nodeId !== undefined) {
      if (!this.deps.nodes().some((n) => n.id === opts.nodeId))
        throw new GatehopError(ErrorCodes.NODE_UNKNOWN, `no node ${opts.nodeId} in the pool`);
      this.deps.selection.pin(opts.nodeId);
      // The user's pick overrules what automatic selection held against the node, as pick() does.
      this.deps.selector.clearLeft(opts.nodeId);
      this.#engine.pinFailed = null;
      this.#emit({ type: 'mode', mode: 'manual', pinned: opts.nodeId });
    }
    const reason = opts.reason ?? (opts.nodeId ? `user picked ${opts.nodeId}` : 'user asked for the best node');
    return this.#engine.begin(reason, 'user', opts.nodeId);
  }

  /**
   * The user's pick, as a Clash dashboard makes it: pinned at once (the group's `now` is the pick
   * from this moment), switched to make-before-break; with a switch running, right after it ends.
   * Throws GH_ERR_NODE_UNKNOWN for a node not in the pool.
   */
  pick(nodeId: string, reason = `user picked ${nodeId}`): void {
    if (!this.deps.nodes().some((n) => n.id === nodeId))
      throw new GatehopError(ErrorCodes.NODE_UNKNOWN, `no node ${nodeId} in the pool`);
    this.deps.selection.pin(nodeId);
    this.deps.selector.clearLeft(nodeId);
    this.#engine.pinFailed = null;
    this.#emit({ type: 'mode', mode: 'manual', pinned: nodeId });
    if (this.#engine.running) this.#engine.pickAfter = reason;
    else if (this.#engine.active?.node.id !== nodeId) void this.#engine.begin(reason, 'user', nodeId);
  }

  /**
   * With no active tunnel and no switch running, tries again now instead of at the end of the
   * back-off (the network came back, or a new list arrived). Returns whether a switch started.
   */
  retryNow(reason: string): boolean {
    if (this.#engine.stopped || this.#engine.active || this.#engine.running) return false;
    if (this.#engine.retry) clearTimeout(this.#engine.retry);
    this.#engine.retry = null;
    void this.#engine.begin(reason, 'urgent');
    return true;
  }

  /** Auto (URL-test group) or manual (selector group); persisted. Manual with a pin goes to it. */
  setMode(auto: boolean): void {
    this.deps.selection.setMode(auto ? 'auto' : 'manual');
    this.#emit({ type: 'mode', mode: this.mode, pinned: this.pinned });
    this.#log.info({ event: 'mode-changed', mode: this.mode, pinned: this.pinned }, `mode ${this.mode}`);
    this.#engine.balance(auto ? 'auto mode' : 'manual mode: one tunnel, the pin');
    const pinned = this.pinned;
    if (!auto && pinned && this.#engine.active?.node.id !== pinned && !this.#engine.running)
      void this.#engine.begin(`manual mode: pinned ${pinned}`, 'user', pinned);
  }

  // ---- the periodic URL test and re-evaluation ----

  /**
   * One round (the timer runs it every urlTest.intervalMs): URL-test the established tunnels, then
   * in manual mode return to a recovered pin, in auto mode move to a clearly better node. Paused
   * while no session has used the proxy for idleTimeoutMs.
   */
  /** A round from the timer: a failure (a store or probe error) is logged with its code and the next round runs. */
  #evaluateSoon(): void {
    detach(this.#log, 'evaluate', this.evaluate());
  }

  async evaluate(): Promise<void> {
    if (this.#evaluating || this.#engine.stopped) return;
    this.#evaluating = true;
    try {
      if (!this.#engine.active) {
        if (!this.#engine.running && !this.#engine.retry) void this.#engine.begin('no active tunnel', 'urgent');
        return;
      }
      const idleMs = this.#rounds.idleMs(this.deps.manager);
      if (idleMs > this.deps.options.urlTest.idleTimeoutMs) {
        this.#log.debug(
          { event: 'url-test-paused', idleS: Math.round(idleMs / 1000) },
          'no sessions: URL testing paused',
        );
        return;
      }
      const tested: Array<{ node: VpnGateNode; egress: NodeTunnel }> = [
        this.#engine.active,
        this.#standby.held,
        ...this.#members.list,
      ].filter((h) => h !== null);
      await Promise.all(tested.map((h) => this.#urlTests.test(h)));
      if (this.#engine.running) return;
      const active = this.#engine.active;
      const next =
        this.mode === 'manual'
          ? await this.#rounds.returnToPin(this.pinned, active.node.id)
          : await this.#rounds.betterNode(active.node.id);
      // A switch may have begun, or ended, while the round ranked: its decision is then moot.
      if (next && !this.#engine.running && this.#engine.active === active)
        void this.#engine.begin(next.reason, 'auto', next.nodeId);
    } finally {
      this.#evaluating = false;
    }
  }

  /**
   * A URL test through one node (Clash's /proxies/:name/delay): through its tunnel if one is up
   * (active, standby or draining), else through a tunnel opened for the test and closed after.
   */
  delayTest(nodeId: string, url: string, timeoutMs: number): Promise<number> {
    return this.#urlTests.delayTest(nodeId, url, timeoutMs);
  }

  // ---- honesty ----

  /**
   * A node was found to tamper (core/honesty): it leaves every automatic role at once. The standby
   * closes, a member drains while its replacement comes, and the active tunnel is replaced
   * make-before-break, unless the user pinned that very node and accepted the verdict.
   */
  nodeFlagged(nodeId: string, why: string): void {
    if (this.#engine.stopped) return;
    if (this.#standby.held?.node.id === nodeId) detach(this.#log, 'standby-drop', this.#standby.drop(why));
    this.#members.avoid(nodeId, why);
    if (this.#engine.active?.node.id !== nodeId) return;
    const accepted = this.mode === 'manual' && this.pinned === nodeId && !this.deps.honesty?.blocked(nodeId);
    if (accepted) return;
    if (this.pinned === nodeId) this.#engine.pinnedFailed(nodeId, why);
    void this.#engine.begin(`${why}: leaving it`, 'urgent');
  }

  /**
   * These nodes name another CA now (#59: another key, perhaps another machine). A pin to one of
   * them was the user's choice of the old one: it is let go (auto-select, said in the log and to
   * the window), and the user picks again if they still want it.
   */
  nodesRekeyed(ids: readonly string[]): void {
    const pinned = this.pinned;
    if (!pinned || !ids.includes(pinned)) return;
    this.deps.selection.unpin();
    this.#log.warn(
      { event: 'pin-reset', nodeId: pinned },
      `${pinned} names another certificate authority now: it may be another machine, so its pin is let go (auto-select); pick it again to keep using it`,
    );
    this.#emit({ type: 'mode', mode: this.mode, pinned: this.pinned });
    this.#engine.balance('auto mode');
  }

  /** A tunnel to `nodeId` for an honesty check alone: opened the usual way, closed by the caller, never made active. */
  openForCheck(nodeId: string, signal: AbortSignal): Promise<NodeTunnel> {
    const node = this.deps.nodes().find((n) => n.id === nodeId);
    if (!node) return Promise.reject(new GatehopError(ErrorCodes.NODE_UNKNOWN, `no node ${nodeId} in the pool`));
    return this.#connector.openFresh(node, {
      signal: AbortSignal.any([signal, this.#abort.signal]),
      timeoutMs: this.deps.options.connectTimeoutMs,
      id: `honesty-${++this.#tunnelSeq}`,
    });
  }

  // ---- balance members ----

  /** A new ranking or list arrived: members missing are looked for now. */
  nudgeMembers(): void {
    this.#members.nudge();
  }

  #emit(ev: ControllerEvent): void {
    this.#listeners.emit(ev);
  }

  /** Stops every timer and any switch in flight; the manager closes the egresses. */
  async stop(): Promise<void> {
    if (this.#engine.stopped) return;
    this.#engine.stopped = true;
    this.#abort.abort();
    if (this.#tick) clearInterval(this.#tick);
    if (this.#engine.retry) clearTimeout(this.#engine.retry);
    this.#leave.stop();
    this.#tick = this.#engine.retry = null;
    this.#monitor.stop();
    for (const off of this.#engine.active?.off ?? []) off();
    this.#probes.stop();
    await this.#members.stop();
    await this.#engine.running?.done.catch(() => {});
    await this.#standby.stop();
  }
}
