import { ErrorCodes, GatehopError, Listeners, type Logger, detach } from '../common/index.js';
import { TUNNEL_PROTOCOLS, type EgressManager, type TunnelProtocol } from '../egress/index.js';
import { HealthMonitor, SwitchPolicy, type HealthOptions, type HealthSource, type Symptom } from '../health/index.js';
import { FailFilter, type Ranking, type Selector } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import { ActiveProbes } from './active-probes.js';
import { BalanceMembers, type MemberInfo } from './balance-members.js';
import { orderCandidates, PIN_TAMPERS } from './candidates.js';
import { LeaveRules } from './leave-rules.js';
import { Reevaluation } from './reevaluation.js';
import { NodeConnector } from './node-connector.js';
import type { GroupOptions } from './options.js';
import {
  ProtocolChoice,
  type NodeProtocolRecord,
  type ProtocolChoiceOptions,
  type ProtocolMemory,
} from './protocol-choice.js';
import type { SelectionState } from './selection.js';
import type { ControllerEvent, Held, NodeTunnel, OpenTunnel, SwitchKind, SwitchRecord, SwitchState } from './types.js';
import { UrlTests } from './url-tests.js';
import { WarmStandby } from './warm-standby.js';

export type { ControllerEvent, NodeTunnel, OpenTunnel, SwitchKind, SwitchRecord, SwitchState } from './types.js';

export interface SwitchControllerDeps {
  manager: EgressManager;
  selector: Selector;
  /** The current node pool. */
  nodes: () => readonly VpnGateNode[];
  open: OpenTunnel;
  selection: SelectionState;
  options: GroupOptions;
  health: HealthOptions;
  logger: Logger;
  /** The protocols a node can be reached with, in no order (default: OpenVPN only). */
  offered?: (node: VpnGateNode) => readonly TunnelProtocol[];
  /** The protocol order and learning (config tunnel.protocols, tunnel.learnProtocol). */
  protocols?: ProtocolChoiceOptions;
  /** Where what a network taught about protocols is kept. */
  protocolMemory?: ProtocolMemory;
  /**
   * The ladder itself, made before the controller (the app makes it with the node pipeline, so the
   * first probes already know what this network blocks); given, `protocols` and `protocolMemory`
   * are not used.
   */
  ladder?: ProtocolChoice;
  /**
   * The honesty verdicts (core/honesty): a flagged node is never chosen automatically (ranked,
   * member, standby, better node); a pin goes to one only when the user accepted it.
   */
  honesty?: NodeVerdicts;
}

/** What the controller asks of the honesty checks. */
export interface NodeVerdicts {
  /** Found to tamper. */
  flagged(nodeId: string): unknown;
  /** Found to tamper and not accepted by the user. */
  blocked(nodeId: string): unknown;
}

const HISTORY = 50;

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
 * The parts it drives, each in its own file: NodeConnector (a tunnel to a node: reused, or new
 * with the node's protocols in ProtocolChoice's order), UrlTests (measurements and the
 * better-node rule), ActiveProbes, WarmStandby and BalanceMembers.
 */
export class SwitchController {
  #state: SwitchState = 'idle';
  #active: Held | null = null;
  #running: { id: number; done: Promise<SwitchRecord> } | null = null;
  #followUp: { reason: string } | null = null;
  /** The node the next switch leaves for failing, and how (said in its record). */
  #leaving: { nodeId: string; leftFor: NonNullable<SwitchRecord['leftFor']> } | null = null;
  /** A pick made while a switch ran: switched to when that one ends. */
  #pickAfter: string | null = null;
  #seq = 0;
  #tunnelSeq = 0;
  #tick: NodeJS.Timeout | null = null;
  #retry: NodeJS.Timeout | null = null;
  #evaluating = false;
  #stopped = false;
  /** The node whose active tunnel died last, and when: tried last for a minute. */
  #lastDied: { nodeId: string; at: number } | null = null;
  #pinFailed: string | null = null;
  readonly #abort = new AbortController();
  readonly #listeners: Listeners<ControllerEvent>;
  readonly #policy: SwitchPolicy;
  /** When the node in use is left for failing, and what is remembered of it (#60). */
  readonly #leave: LeaveRules;
  readonly #monitor: HealthMonitor;
  readonly #log: Logger;
  readonly history: SwitchRecord[] = [];
  readonly counts = { switched: 0, failed: 0, byReason: {} as Record<string, number> };
  /** Health windows of the active egress so far, and the latest one. */
  readonly health: {
    windows: number;
    badWindows: number;
    last: {
      egressId: string;
      score: number;
      reasons: string[];
      /** What the window saw go wrong, as ids (the window and tray say it in the user's language). */
      symptoms: Symptom[];
      consecutiveBad: number;
      dnsMs: number | null;
      at: number;
    } | null;
  } = { windows: 0, badWindows: 0, last: null };
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
    this.failFilter = new FailFilter(deps.options.failFilter);
    this.protocols =
      deps.ladder ??
      new ProtocolChoice(
        deps.protocols ?? { order: TUNNEL_PROTOCOLS, learn: true },
        deps.protocolMemory ?? null,
        deps.logger,
      );
    this.protocols.onLearned((e) => this.#emit({ type: 'protocol-learned', ...e }));
    const signal = this.#abort.signal;
    // A fresh tunnel to a node, protocol by protocol: the connector's, also for members, standby and delay tests.
    const openFresh = (node: VpnGateNode, o: { signal: AbortSignal; timeoutMs: number; id: string }) =>
      this.#connector.openFresh(node, o);
    this.#urlTests = new UrlTests({
      selector: deps.selector,
      manager: deps.manager,
      nodes: deps.nodes,
      open: openFresh,
      options: () => this.deps.options,
      held: () => [this.#active?.egress, this.#standby.held?.egress],
      tunnelId: () => `delay-${++this.#tunnelSeq}`,
      onResult: (nodeId, ms) => this.#emit({ type: 'url-test', nodeId, ms }),
      signal,
      logger: this.#log,
    });
    this.#probes = new ActiveProbes({
      failFilter: this.failFilter,
      probes: () => this.deps.options.probes,
      maxFails: () => this.deps.options.failFilter.maxFails,
      onRtt: (nodeId, ms) => this.#urlTests.rtt.set(nodeId, ms),
      onDead: (held, why) => {
        if (this.#active !== held) return;
        this.#leaving = { nodeId: held.node.id, leftFor: 'link' };
        void this.#begin(why, 'urgent');
      },
      logger: this.#log,
    });
    const flagged = (id: string): boolean => !!deps.honesty?.flagged(id);
    this.#standby = new WarmStandby({
      manager: deps.manager,
      flagged,
      selector: deps.selector,
      open: openFresh,
      enabled: () => this.deps.options.warmStandby,
      connectTimeoutMs: () => this.deps.options.connectTimeoutMs,
      activeId: () => this.#active?.node.id ?? null,
      tunnelId: () => `standby-${++this.#tunnelSeq}`,
      signal,
      logger: this.#log,
    });
    this.#members = new BalanceMembers({
      manager: deps.manager,
      selector: deps.selector,
      nodes: deps.nodes,
      open: openFresh,
      failFilter: this.failFilter,
      options: () => ({ ...this.deps.options, maxFails: this.deps.options.failFilter.maxFails }),
      reserved: () => new Set([this.#active?.node.id, this.#standby.held?.node.id].filter((id): id is string => !!id)),
      tunnelId: (kind) => `${kind}-${++this.#tunnelSeq}`,
      onRtt: (nodeId, ms) => this.#urlTests.rtt.set(nodeId, ms),
      onUp: (nodeId, egress) => this.#emit({ type: 'member-up', nodeId, egressId: egress.id }),
      flagged,
      signal,
      logger: deps.logger,
    });
    this.#connector = new NodeConnector({
      manager: deps.manager,
      selector: deps.selector,
      open: deps.open,
      protocols: this.protocols,
      offered: deps.offered ?? (() => ['openvpn']),
      members: this.#members,
      standby: this.#standby,
      logger: this.#log,
    });
    this.#policy = new SwitchPolicy(deps.health);
    this.#rounds = new Reevaluation({
      selector: deps.selector,
      nodes: deps.nodes,
      policy: this.#policy,
      urlTests: this.#urlTests,
      failFilter: this.failFilter,
      flagged,
      logger: this.#log,
    });
    this.#leave = new LeaveRules({
      selector: deps.selector,
      health: () => this.deps.health,
      policy: this.#policy,
      logger: this.#log,
    });
    this.#monitor = new HealthMonitor(
      deps.health,
      {
        onUnhealthy: (source, reason, o) => this.#onUnhealthy(source, reason, o?.urgent === true),
        fasterNodeKnown: (source, rateBps) => this.#fasterNodeKnown(source, rateBps),
        onWindow: (source, w) => {
          // What the node in use delivers when asked for much: remembered, so a later crawl
          // elsewhere knows this node is faster (#60).
          const held = this.#active;
          if (w.bulkRateBps !== null && held?.egress === source)
            this.deps.selector.recordThroughput(held.node.id, w.bulkRateBps);
          const h = this.health;
          h.windows++;
          if (w.bad) h.badWindows++;
          h.last = {
            egressId: source.id,
            score: w.score,
            reasons: w.reasons,
            symptoms: w.symptoms,
            consecutiveBad: w.consecutiveBad,
            dnsMs: w.dnsMs,
            at: Date.now(),
          };
        },
      },
      deps.logger,
    );
  }

  get state(): SwitchState {
    return this.#state;
  }

  get active(): { node: VpnGateNode; egress: NodeTunnel; since: number } | null {
    return this.#active && { node: this.#active.node, egress: this.#active.egress, since: this.#active.since };
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
    return this.#pinFailed;
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
    return this.#running?.id ?? null;
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
    if (this.#active && JSON.stringify(options.probes) !== JSON.stringify(before.probes))
      this.#probes.start(this.#active);
    this.#balance('settings reloaded');
    this.#log.info(
      { event: 'controller-reconfigured', tunnels: options.balance.tunnels, strategy: options.balance.strategy },
      'switching settings reloaded',
    );
  }

  /** Brings the first tunnel up and starts the periodic URL test. */
  start(): void {
    void this.#begin('startup', 'urgent');
    this.#tick = setInterval(() => this.#evaluateSoon(), this.deps.options.urlTest.intervalMs);
    this.#tick.unref();
  }

  /**
   * An explicit switch: with `nodeId`, pin it (manual mode) and switch to it; without, to the best
   * candidate now. Throws GH_ERR_SWITCH_IN_PROGRESS while one runs, GH_ERR_NODE_UNKNOWN for a node
   * not in the pool.
   */
  switchNow(opts: { nodeId?: string; reason?: string } = {}): { switchId: number; done: Promise<SwitchRecord> } {
    if (this.#running)
      throw new GatehopError(ErrorCodes.SWITCH_IN_PROGRESS, `switch ${this.#running.id} is in progress`);
    if (opts.nodeId !== undefined) {
      if (!this.deps.nodes().some((n) => n.id === opts.nodeId))
        throw new GatehopError(ErrorCodes.NODE_UNKNOWN, `no node ${opts.nodeId} in the pool`);
      this.deps.selection.pin(opts.nodeId);
      // The user's pick overrules what automatic selection held against the node, as pick() does.
      this.deps.selector.clearLeft(opts.nodeId);
      this.#pinFailed = null;
      this.#emit({ type: 'mode', mode: 'manual', pinned: opts.nodeId });
    }
    const reason = opts.reason ?? (opts.nodeId ? `user picked ${opts.nodeId}` : 'user asked for the best node');
    return this.#begin(reason, 'user', opts.nodeId);
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
    this.#pinFailed = null;
    this.#emit({ type: 'mode', mode: 'manual', pinned: nodeId });
    if (this.#running) this.#pickAfter = reason;
    else if (this.#active?.node.id !== nodeId) void this.#begin(reason, 'user', nodeId);
  }

  /**
   * With no active tunnel and no switch running, tries again now instead of at the end of the
   * back-off (the network came back, or a new list arrived). Returns whether a switch started.
   */
  retryNow(reason: string): boolean {
    if (this.#stopped || this.#active || this.#running) return false;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = null;
    void this.#begin(reason, 'urgent');
    return true;
  }

  /** Auto (URL-test group) or manual (selector group); persisted. Manual with a pin goes to it. */
  setMode(auto: boolean): void {
    this.deps.selection.setMode(auto ? 'auto' : 'manual');
    this.#emit({ type: 'mode', mode: this.mode, pinned: this.pinned });
    this.#log.info({ event: 'mode-changed', mode: this.mode, pinned: this.pinned }, `mode ${this.mode}`);
    this.#balance(auto ? 'auto mode' : 'manual mode: one tunnel, the pin');
    const pinned = this.pinned;
    if (!auto && pinned && this.#active?.node.id !== pinned && !this.#running)
      void this.#begin(`manual mode: pinned ${pinned}`, 'user', pinned);
  }

  // ---- the state machine ----

  #begin(reason: string, kind: SwitchKind, nodeId?: string): { switchId: number; done: Promise<SwitchRecord> } {
    if (this.#running) {
      if (kind === 'urgent') this.#followUp = { reason };
      return { switchId: this.#running.id, done: this.#running.done };
    }
    const id = ++this.#seq;
    const done = this.#run(id, reason, kind, nodeId).finally(() => {
      this.#running = null;
      const next = this.#followUp;
      this.#followUp = null;
      const picked = this.#pickAfter;
      this.#pickAfter = null;
      if (next && !this.#stopped && (!this.#active || !this.#active.egress.responsive))
        void this.#begin(next.reason, 'urgent');
      else if (
        picked &&
        !this.#stopped &&
        this.mode === 'manual' &&
        this.pinned &&
        this.#active?.node.id !== this.pinned
      )
        void this.#begin(picked, 'user', this.pinned);
    });
    this.#running = { id, done };
    return { switchId: id, done };
  }

  #set(state: SwitchState, id: number, reason: string, fields: Record<string, unknown> = {}): void {
    this.#state = state;
    this.#log.info(
      { event: 'switch-state', switchId: id, state, reason, ...fields },
      `switch ${id}: ${state} (${reason})`,
    );
    this.#emit({ type: 'state', state, switchId: id, reason });
  }

  async #run(id: number, reason: string, kind: SwitchKind, nodeId?: string): Promise<SwitchRecord> {
    const started = Date.now();
    // Why the node this switch leaves was left, if it was for failing (said with the record). A
    // node whose tunnel died is no longer active, but it is still the one this switch leaves.
    const leaving = this.#leaving;
    this.#leaving = null;
    const active = this.#active?.node.id ?? null;
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
      this.history.push(record);
      if (this.history.length > HISTORY) this.history.shift();
      if (outcome === 'switched') {
        this.counts.switched++;
        this.counts.byReason[kind] = (this.counts.byReason[kind] ?? 0) + 1;
      } else if (outcome !== 'skipped') this.counts.failed++;
      this.#set('idle', id, `${outcome}${to ? ` to ${to}` : ''}`, { outcome, from, to, durationMs: record.durationMs });
      // After every switch, not only a good one: a pin that failed in manual mode still means one tunnel.
      if (!this.#stopped) this.#balance(outcome === 'switched' ? `${to} is active` : `switch ${outcome}`);
      this.#emit({ type: 'switch', record });
      return record;
    };
    try {
      this.#set('selecting', id, reason, { kind, from });
      const candidates = await this.#candidates(kind, nodeId);
      if (this.#stopped) return finish('skipped', null, 'stopped');
      if (candidates.length === 0) {
        this.#afterFailure(kind, id, 'no candidate node');
        return finish('no-candidate', null, 'no candidate node');
      }
      const attempts = nodeId ? 1 : this.deps.options.maxAttempts;
      for (const node of candidates.slice(0, attempts)) {
        this.#set('connecting', id, `trying ${node.id}`, { nodeId: node.id });
        const egress = await this.#connector.connect(node, id, {
          signal: this.#abort.signal,
          timeoutMs: this.deps.options.connectTimeoutMs,
          id: `tunnel-${++this.#tunnelSeq}`,
        });
        if (this.#stopped) {
          await egress?.close();
          return finish('skipped', null, 'stopped');
        }
        if (!egress) {
          if (node.id === this.pinned && node.id !== from) this.#pinnedFailed(node.id, 'its tunnel did not come up');
          continue;
        }
        // A verdict can come while the tunnel connects (a check the user asked for): nodeFlagged
        // only leaves the active node, so a candidate found out meanwhile is refused here, by the
        // rule that chose it (the user's pick or pin by their consent, any other never).
        const chosenByUser = node.id === nodeId || (this.mode === 'manual' && node.id === this.pinned);
        if (chosenByUser ? this.deps.honesty?.blocked(node.id) : this.deps.honesty?.flagged(node.id)) {
          this.#log.warn(
            { event: 'candidate-flagged', switchId: id, nodeId: node.id },
            `${node.id} was found to tamper while its tunnel came up: not used`,
          );
          await egress.close();
          if (chosenByUser) this.#pinnedFailed(node.id, PIN_TAMPERS);
          continue;
        }
        this.#set('promoting', id, `${node.id} is up`, { nodeId: node.id, egressId: egress.id });
        const old = this.#promote(node, egress, reason);
        this.#policy.recordSwitch();
        if (node.id === this.pinned) this.#pinFailed = null;
        const draining = this.deps.manager.draining.find((d) => d.egress === old?.egress);
        this.#set(
          'draining',
          id,
          old ? `${old.node.id} keeps ${draining?.sessions ?? 0} sessions until they end` : 'nothing to drain',
          { previous: old?.node.id ?? null, sessions: draining?.sessions ?? 0 },
        );
        detach(this.#log, 'standby-refresh', this.#standby.refresh());
        return finish('switched', node.id, undefined, egress.protocol ?? 'openvpn');
      }
      this.#afterFailure(kind, id, 'every candidate failed');
      return finish('failed', null, 'every candidate failed');
    } catch (err) {
      this.#log.error(
        { event: 'switch-error', switchId: id, err: (err as Error).message },
        'switch failed unexpectedly',
      );
      this.#afterFailure(kind, id, (err as Error).message);
      return finish('failed', null, (err as Error).message);
    }
  }

  /** The nodes to try, best first, never the active one (candidates.ts). */
  async #candidates(kind: SwitchKind, nodeId?: string): Promise<VpnGateNode[]> {
    const pool = this.deps.nodes();
    const activeId = this.#active?.node.id ?? null;
    if (nodeId) {
      // The user's pick of a node found to tamper goes through only once they accepted it (the API asks).
      if (this.deps.honesty?.blocked(nodeId)) {
        this.#pinnedFailed(nodeId, PIN_TAMPERS);
        return [];
      }
      return pool.filter((n) => n.id === nodeId && n.id !== activeId);
    }
    const { nodes, pinProblem } = orderCandidates({
      pool,
      ranking: await this.#ranking(kind),
      activeId,
      failFilter: this.failFilter,
      died: this.#lastDied && Date.now() - this.#lastDied.at < 60_000 ? this.#lastDied.nodeId : null,
      isMember: (id) => this.#members.has(id),
      mode: this.mode,
      pinned: this.pinned,
      fallbackWhenPinnedFails: this.deps.options.fallbackWhenPinnedFails,
      flagged: (id) => !!this.deps.honesty?.flagged(id),
      pinBlocked: (id) => !!this.deps.honesty?.blocked(id),
    });
    if (pinProblem) this.#pinnedFailed(this.pinned!, pinProblem);
    if (nodes.length > 0 || nodeId || this.mode === 'manual') return nodes;
    // Nothing else ranks: the nodes held away after failing in use are a preference, not a ban
    // (#60). Left longest ago first: it may have mended, and any beats staying on a node that fails.
    const held = (await this.#ranking(kind)).excluded.filter((x) => x.reason === 'left').map((x) => x.nodeId);
    const leftAt = (id: string): number => this.deps.selector.leftAt(id) ?? 0;
    return pool
      .filter((n) => held.includes(n.id) && n.id !== activeId && !this.deps.honesty?.flagged(n.id))
      .sort((a, b) => leftAt(a.id) - leftAt(b.id));
  }

  /** Urgent switches use the last ranking at once (and refresh it behind); others rank if it is stale. */
  async #ranking(kind: SwitchKind): Promise<Ranking> {
    const { selector } = this.deps;
    const last = selector.last;
    if (last && last.ranked.length > 0 && (kind === 'urgent' || Date.now() - last.at < 60_000)) {
      if (kind === 'urgent') void selector.rank(this.deps.nodes()).catch(() => {});
      return last;
    }
    return selector.rank(this.deps.nodes());
  }

  /** Makes `egress` active (the manager drains the old one) and watches it. Returns what was active. */
  #promote(node: VpnGateNode, egress: NodeTunnel, reason: string): Held | null {
    const old = this.#active;
    for (const off of old?.off ?? []) off();
    const held: Held = { node, egress, since: Date.now(), off: [] };
    held.off.push(
      egress.onClose((why) => this.#onActiveClosed(held, why)),
      egress.onLiveness((responsive, quietMs) => {
        if (responsive || this.#active !== held) return;
        // Counted against the node, so neither ranking nor the pin brings it straight back.
        const flapping = this.#leave.tunnelDropped(held) === 'flapping';
        if (node.id === this.pinned) this.#pinnedFailed(node.id, `silent for ${Math.round(quietMs / 1000)} s`);
        this.#leaving = { nodeId: node.id, leftFor: flapping ? 'flapping' : 'link' };
        void this.#begin(`active node ${node.id} silent for ${Math.round(quietMs / 1000)} s`, 'urgent');
      }),
    );
    this.#active = held;
    this.#probes.start(held);
    this.deps.manager.setActive(egress, `${reason} → ${node.id}`);
    const protocol = egress.protocol ?? 'openvpn';
    this.#log.info(
      { event: 'tunnel-active', nodeId: node.id, egressId: egress.id, protocol, previous: old?.node.id ?? null },
      `new sessions leave through ${node.id} (${protocol})`,
    );
    this.#monitor.watch(egress);
    return old;
  }

  #onActiveClosed(held: Held, why: string): void {
    if (this.#active !== held || this.#stopped) return;
    for (const off of held.off) off();
    this.#active = null;
    this.#monitor.watch(null);
    this.deps.manager.clearActive(held.egress, why);
    const flapping = this.#leave.tunnelDropped(held) === 'flapping';
    this.#lastDied = { nodeId: held.node.id, at: Date.now() };
    if (held.node.id === this.pinned) this.#pinnedFailed(held.node.id, why);
    this.#leaving = { nodeId: held.node.id, leftFor: flapping ? 'flapping' : 'died' };
    void this.#begin(`active node ${held.node.id} died: ${why}`, 'urgent');
  }

  /** A crawl through the node in use counts only where leaving can help (leave-rules.ts). */
  #fasterNodeKnown(source: HealthSource, rateBps: number): boolean {
    const held = this.#active;
    return held?.egress === source && this.#leave.crawlCounts(held.node.id, rateBps);
  }

  #onUnhealthy(source: HealthSource, reason: string, urgent = false): void {
    if (this.#active?.egress !== source || this.#running || this.#stopped) return;
    const node = this.#active.node;
    const verdict = this.#leave.judge(node.id, reason, urgent, this.health.last?.symptoms ?? [], () => {
      // The hold ended: a node the health monitor still finds failing is left now.
      const failing = this.#monitor.failing;
      if (failing && this.#active?.egress === source) this.#onUnhealthy(source, failing.reason);
    });
    if (!verdict.leave) return;
    if (node.id === this.pinned) this.#pinnedFailed(node.id, reason);
    this.#leaving = { nodeId: node.id, leftFor: verdict.shape };
    void this.#begin(`active node ${node.id} unhealthy: ${reason}`, verdict.urgent ? 'urgent' : 'auto');
  }

  #pinnedFailed(nodeId: string, why: string): void {
    if (this.#pinFailed === nodeId) return;
    this.#pinFailed = nodeId;
    const fallback = this.deps.options.fallbackWhenPinnedFails;
    this.#log.warn(
      { event: 'pinned-node-failed', nodeId, reason: why, fallback },
      fallback
        ? `pinned node ${nodeId} failed (${why}); using the best node until it recovers`
        : `pinned node ${nodeId} failed (${why})`,
    );
    this.#emit({ type: 'pin-failed', nodeId, reason: why });
  }

  /** After a failed switch: automatic switching backs off; with no active tunnel, retry then. */
  #afterFailure(kind: SwitchKind, id: number, why: string): void {
    const ms = this.#policy.recordFailure();
    this.#log.info(
      { event: 'switch-backoff', switchId: id, kind, why, backoffMs: ms },
      `switch ${id} failed (${why}); automatic switching waits ${Math.round(ms / 1000)} s`,
    );
    if (this.#active || this.#stopped) return;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      this.#retry = null;
      if (!this.#active && !this.#stopped) void this.#begin('no active tunnel: retrying', 'urgent');
    }, ms);
    this.#retry.unref();
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
    if (this.#evaluating || this.#stopped) return;
    this.#evaluating = true;
    try {
      if (!this.#active) {
        if (!this.#running && !this.#retry) void this.#begin('no active tunnel', 'urgent');
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
        this.#active,
        this.#standby.held,
        ...this.#members.list,
      ].filter((h) => h !== null);
      await Promise.all(tested.map((h) => this.#urlTests.test(h)));
      if (this.#running) return;
      const active = this.#active;
      const next =
        this.mode === 'manual'
          ? await this.#rounds.returnToPin(this.pinned, active.node.id)
          : await this.#rounds.betterNode(active.node.id);
      // A switch may have begun, or ended, while the round ranked: its decision is then moot.
      if (next && !this.#running && this.#active === active) void this.#begin(next.reason, 'auto', next.nodeId);
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
    if (this.#stopped) return;
    if (this.#standby.held?.node.id === nodeId) detach(this.#log, 'standby-drop', this.#standby.drop(why));
    this.#members.avoid(nodeId, why);
    if (this.#active?.node.id !== nodeId) return;
    const accepted = this.mode === 'manual' && this.pinned === nodeId && !this.deps.honesty?.blocked(nodeId);
    if (accepted) return;
    if (this.pinned === nodeId) this.#pinnedFailed(nodeId, why);
    void this.#begin(`${why}: leaving it`, 'urgent');
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
    this.#balance('auto mode');
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

  /** Members wanted now: tunnels - 1 in auto mode with an active tunnel, none in manual mode. */
  #balance(reason: string): void {
    const want = this.mode === 'auto' ? this.deps.options.balance.tunnels - 1 : 0;
    this.#members.setTarget(want, reason);
  }

  /** A new ranking or list arrived: members missing are looked for now. */
  nudgeMembers(): void {
    this.#members.nudge();
  }

  #emit(ev: ControllerEvent): void {
    this.#listeners.emit(ev);
  }

  /** Stops every timer and any switch in flight; the manager closes the egresses. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#abort.abort();
    if (this.#tick) clearInterval(this.#tick);
    if (this.#retry) clearTimeout(this.#retry);
    this.#leave.stop();
    this.#tick = this.#retry = null;
    this.#monitor.stop();
    for (const off of this.#active?.off ?? []) off();
    this.#probes.stop();
    await this.#members.stop();
    await this.#running?.done.catch(() => {});
    await this.#standby.stop();
  }
}
