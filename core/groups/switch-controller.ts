import { ErrorCodes, GatehopError, Listeners, type Logger } from '../common/index.js';
import type { Egress, EgressManager } from '../egress/index.js';
import { HealthMonitor, SwitchPolicy, type HealthOptions, type HealthSource } from '../health/index.js';
import { defaultExpectedStatus, FailFilter, ProbeLoop, urlTest, type RankedNode, type Ranking, type Selector } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import { BalanceMembers, type MemberInfo } from './balance-members.js';
import type { GroupOptions } from './options.js';
import type { SelectionState } from './selection.js';

/** A tunnel to one node, as the controller needs it (TunnelEgress is one). */
export interface NodeTunnel extends Egress, HealthSource {
  readonly nodeId: string;
  /** False while the server has been silent past the liveness limit. */
  readonly responsive: boolean;
  onClose(fn: (reason: string) => void): () => void;
  onLiveness(fn: (responsive: boolean, quietMs: number) => void): () => void;
}

export type OpenTunnel = (node: VpnGateNode, opts: { signal: AbortSignal; timeoutMs: number; id: string }) => Promise<NodeTunnel>;

export type SwitchState = 'idle' | 'selecting' | 'connecting' | 'promoting' | 'draining';

/**
 * user: an explicit request (API, tray); urgent: the active tunnel died or went quiet, or there is
 * none; auto: health or a better node (subject to the anti-flap policy).
 */
export type SwitchKind = 'user' | 'auto' | 'urgent';

export interface SwitchRecord {
  id: number;
  at: number;
  kind: SwitchKind;
  reason: string;
  from: string | null;
  to: string | null;
  outcome: 'switched' | 'failed' | 'no-candidate' | 'skipped';
  durationMs: number;
  error?: string;
}

export type ControllerEvent =
  | { type: 'state'; state: SwitchState; switchId: number; reason: string }
  | { type: 'switch'; record: SwitchRecord }
  | { type: 'pin-failed'; nodeId: string; reason: string }
  | { type: 'mode'; mode: 'auto' | 'manual'; pinned: string | null }
  | { type: 'url-test'; nodeId: string; ms: number | null };

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
}

interface Held {
  node: VpnGateNode;
  egress: NodeTunnel;
  since: number;
  off: Array<() => void>;
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
 */
export class SwitchController {
  #state: SwitchState = 'idle';
  #active: Held | null = null;
  #standby: Held | null = null;
  #standbyOpening: Promise<void> | null = null;
  #running: { id: number; done: Promise<SwitchRecord> } | null = null;
  #followUp: { reason: string } | null = null;
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
  #lastBusyAt = Date.now();
  #leasesSeen = 0;
  #pinFailed: string | null = null;
  readonly #abort = new AbortController();
  readonly #listeners: Listeners<ControllerEvent>;
  readonly #policy: SwitchPolicy;
  readonly #monitor: HealthMonitor;
  readonly #log: Logger;
  readonly history: SwitchRecord[] = [];
  readonly counts = { switched: 0, failed: 0, byReason: {} as Record<string, number> };
  /** Health windows of the active egress so far, and the latest one. */
  readonly health: {
    windows: number;
    badWindows: number;
    last: { egressId: string; score: number; reasons: string[]; consecutiveBad: number; dnsMs: number | null; at: number } | null;
  } = { windows: 0, badWindows: 0, last: null };
  /** The latest URL-test delay per node (ms; null = failed). */
  readonly urlDelays = new Map<string, { ms: number | null; at: number }>();
  /** Nodes the probes found dead or too slow are skipped by selection (also the URL-test group's). */
  readonly failFilter: FailFilter;
  #probes: ProbeLoop | null = null;
  /** The latest RTT per node from its probes or URL tests (ms), for the lowest-latency strategy. */
  readonly #rtt = new Map<string, number>();
  /** With groups.balance.tunnels > 1 in auto mode: the member tunnels beside the active one. */
  readonly #members: BalanceMembers;

  constructor(private deps: SwitchControllerDeps) {
    this.#log = deps.logger.child({ component: 'switch' });
    this.#listeners = new Listeners(this.#log, 'switch event');
    this.failFilter = new FailFilter(deps.options.failFilter);
    this.#members = new BalanceMembers({
      manager: deps.manager,
      selector: deps.selector,
      nodes: deps.nodes,
      open: deps.open,
      failFilter: this.failFilter,
      options: () => ({ ...this.deps.options, maxFails: this.deps.options.failFilter.maxFails }),
      reserved: () => new Set([this.#active?.node.id, this.#standby?.node.id].filter((id): id is string => !!id)),
      tunnelId: (kind) => `${kind}-${++this.#tunnelSeq}`,
      onRtt: (nodeId, ms) => this.#rtt.set(nodeId, ms),
      signal: this.#abort.signal,
      logger: deps.logger,
    });
    this.#policy = new SwitchPolicy(deps.health);
    this.#monitor = new HealthMonitor(
      deps.health,
      {
        onUnhealthy: (source, reason) => this.#onUnhealthy(source, reason),
        onWindow: (source, w) => {
          const h = this.health;
          h.windows++;
          if (w.bad) h.badWindows++;
          h.last = { egressId: source.id, score: w.score, reasons: w.reasons, consecutiveBad: w.consecutiveBad, dnsMs: w.dnsMs, at: Date.now() };
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
    return this.#standby && { node: this.#standby.node, egress: this.#standby.egress, since: this.#standby.since };
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

  /** The node's latest RTT from its probes or URL tests (ms), null if none yet. */
  rttOf(nodeId: string): number | null {
    return this.#rtt.get(nodeId) ?? null;
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
  reconfigure(options: GroupOptions, health: HealthOptions): void {
    const before = this.deps.options;
    this.deps = { ...this.deps, options, health };
    this.failFilter.updateOptions(options.failFilter);
    this.#policy.updateOptions(health);
    this.#monitor.updateOptions(health);
    this.deps.manager.updateOptions({ strategy: options.balance.strategy });
    if (this.#tick && options.urlTest.intervalMs !== before.urlTest.intervalMs) {
      clearInterval(this.#tick);
      this.#tick = setInterval(() => void this.evaluate(), options.urlTest.intervalMs);
      this.#tick.unref();
    }
    if (this.#active && JSON.stringify(options.probes) !== JSON.stringify(before.probes)) this.#startProbes(this.#active);
    this.#balance('settings reloaded');
    this.#log.info({ event: 'controller-reconfigured', tunnels: options.balance.tunnels, strategy: options.balance.strategy }, 'switching settings reloaded');
  }

  /** Brings the first tunnel up and starts the periodic URL test. */
  start(): void {
    void this.#begin('startup', 'urgent');
    this.#tick = setInterval(() => void this.evaluate(), this.deps.options.urlTest.intervalMs);
    this.#tick.unref();
  }

  /**
   * An explicit switch: with `nodeId`, pin it (manual mode) and switch to it; without, to the best
   * candidate now. Throws GH_ERR_SWITCH_IN_PROGRESS while one runs, GH_ERR_NODE_UNKNOWN for a node
   * not in the pool.
   */
  switchNow(opts: { nodeId?: string; reason?: string } = {}): { switchId: number; done: Promise<SwitchRecord> } {
    if (this.#running) throw new GatehopError(ErrorCodes.SWITCH_IN_PROGRESS, `switch ${this.#running.id} is in progress`);
    if (opts.nodeId !== undefined) {
      if (!this.deps.nodes().some((n) => n.id === opts.nodeId)) throw new GatehopError(ErrorCodes.NODE_UNKNOWN, `no node ${opts.nodeId} in the pool`);
      this.deps.selection.pin(opts.nodeId);
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
    if (!this.deps.nodes().some((n) => n.id === nodeId)) throw new GatehopError(ErrorCodes.NODE_UNKNOWN, `no node ${nodeId} in the pool`);
    this.deps.selection.pin(nodeId);
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
    if (!auto && pinned && this.#active?.node.id !== pinned && !this.#running) void this.#begin(`manual mode: pinned ${pinned}`, 'user', pinned);
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
      if (next && !this.#stopped && (!this.#active || !this.#active.egress.responsive)) void this.#begin(next.reason, 'urgent');
      else if (picked && !this.#stopped && this.mode === 'manual' && this.pinned && this.#active?.node.id !== this.pinned) void this.#begin(picked, 'user', this.pinned);
    });
    this.#running = { id, done };
    return { switchId: id, done };
  }

  #set(state: SwitchState, id: number, reason: string, fields: Record<string, unknown> = {}): void {
    this.#state = state;
    this.#log.info({ event: 'switch-state', switchId: id, state, reason, ...fields }, `switch ${id}: ${state} (${reason})`);
    this.#emit({ type: 'state', state, switchId: id, reason });
  }

  async #run(id: number, reason: string, kind: SwitchKind, nodeId?: string): Promise<SwitchRecord> {
    const started = Date.now();
    const from = this.#active?.node.id ?? null;
    const finish = (outcome: SwitchRecord['outcome'], to: string | null, error?: string): SwitchRecord => {
      const record: SwitchRecord = { id, at: started, kind, reason, from, to, outcome, durationMs: Date.now() - started, ...(error ? { error } : {}) };
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
        const egress = await this.#connect(node, id);
        if (this.#stopped) {
          await egress?.close();
          return finish('skipped', null, 'stopped');
        }
        if (!egress) {
          if (node.id === this.pinned && node.id !== from) this.#pinnedFailed(node.id, 'its tunnel did not come up');
          continue;
        }
        this.#set('promoting', id, `${node.id} is up`, { nodeId: node.id, egressId: egress.id });
        const old = this.#promote(node, egress, reason);
        this.#policy.recordSwitch();
        if (node.id === this.pinned) this.#pinFailed = null;
        const draining = this.deps.manager.draining.find((d) => d.egress === old?.egress);
        this.#set('draining', id, old ? `${old.node.id} keeps ${draining?.sessions ?? 0} sessions until they end` : 'nothing to drain', { previous: old?.node.id ?? null, sessions: draining?.sessions ?? 0 });
        void this.#refreshStandby();
        return finish('switched', node.id);
      }
      this.#afterFailure(kind, id, 'every candidate failed');
      return finish('failed', null, 'every candidate failed');
    } catch (err) {
      this.#log.error({ event: 'switch-error', switchId: id, err: (err as Error).message }, 'switch failed unexpectedly');
      this.#afterFailure(kind, id, (err as Error).message);
      return finish('failed', null, (err as Error).message);
    }
  }

  /** The nodes to try, best first, never the active one. */
  async #candidates(kind: SwitchKind, nodeId?: string): Promise<VpnGateNode[]> {
    const pool = this.deps.nodes();
    const activeId = this.#active?.node.id;
    if (nodeId) return pool.filter((n) => n.id === nodeId && n.id !== activeId);
    const ranking = await this.#ranking(kind);
    // Balance members' nodes last: a member taken over leaves a gap; but one beats no tunnel at all.
    const usable = ranking.ranked.map((r) => r.node).filter((n) => n.id !== activeId && this.failFilter.allows(n.id));
    // The node whose tunnel just died goes after everyone else: it is often up again at once (a
    // crashed tunnel worker, a transport blip), but a server that killed its tunnel may do it again.
    const died = this.#lastDied && Date.now() - this.#lastDied.at < 60_000 ? this.#lastDied.nodeId : null;
    const tier = (n: VpnGateNode): number => (n.id === died ? 2 : this.#members.has(n.id) ? 1 : 0);
    const ranked = [0, 1, 2].flatMap((t) => usable.filter((n) => tier(n) === t));
    const pinned = this.pinned;
    if (this.mode === 'manual' && pinned && pinned !== activeId) {
      const pin = pool.find((n) => n.id === pinned);
      const pinUsable = pin && !ranking.excluded.some((e) => e.nodeId === pinned && e.reason === 'backoff');
      const rest = this.deps.options.fallbackWhenPinnedFails ? ranked.filter((n) => n.id !== pinned) : [];
      if (pin && pinUsable) return [pin, ...rest];
      if (pin) this.#pinnedFailed(pinned, 'it is backing off after failures');
      else this.#pinnedFailed(pinned, 'it is not in the node list');
      return rest;
    }
    return ranked;
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

  async #connect(node: VpnGateNode, switchId: number): Promise<NodeTunnel | null> {
    const member = this.#members.release(node.id);
    if (member) {
      this.#log.info({ event: 'member-promoted', switchId, nodeId: node.id, egressId: member.id }, `balance member ${node.id} becomes the active tunnel`);
      return member;
    }
    const standby = this.#standby;
    if (standby?.node.id === node.id && standby.egress.state !== 'closed') {
      this.#standby = null;
      for (const off of standby.off) off();
      this.#log.info({ event: 'standby-used', switchId, nodeId: node.id }, `warm standby ${node.id} takes over without a handshake`);
      return standby.egress;
    }
    // A tunnel to this node that is still draining is taken back instead of opening a second one.
    const draining = this.deps.manager.draining.map((d) => d.egress as NodeTunnel).find((e) => e.nodeId === node.id && e.state !== 'closed' && e.responsive);
    if (draining) {
      this.#log.info({ event: 'draining-reused', switchId, nodeId: node.id, egressId: draining.id }, `${node.id}'s draining tunnel takes new sessions again`);
      return draining;
    }
    const started = Date.now();
    try {
      const egress = await this.deps.open(node, { signal: this.#abort.signal, timeoutMs: this.deps.options.connectTimeoutMs, id: `tunnel-${++this.#tunnelSeq}` });
      this.deps.selector.recordSuccess(node.id, { connectMs: Date.now() - started });
      return egress;
    } catch (err) {
      if (this.#stopped) return null;
      const h = this.deps.selector.recordFailure(node.id);
      this.#log.info(
        { event: 'switch-candidate-failed', switchId, nodeId: node.id, err: (err as Error).message, durationMs: Date.now() - started, backoffUntil: h.backoffUntil },
        `${node.id} did not come up: ${(err as Error).message}`,
      );
      return null;
    }
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
        this.deps.selector.recordFailure(node.id);
        if (node.id === this.pinned) this.#pinnedFailed(node.id, `silent for ${Math.round(quietMs / 1000)} s`);
        void this.#begin(`active node ${node.id} silent for ${Math.round(quietMs / 1000)} s`, 'urgent');
      }),
    );
    this.#active = held;
    this.#startProbes(held);
    this.deps.manager.setActive(egress, `${reason} → ${node.id}`);
    this.#log.info({ event: 'tunnel-active', nodeId: node.id, egressId: egress.id, previous: old?.node.id ?? null }, `new sessions leave through ${node.id}`);
    this.#monitor.watch(egress);
    return old;
  }

  #onActiveClosed(held: Held, why: string): void {
    if (this.#active !== held || this.#stopped) return;
    for (const off of held.off) off();
    this.#active = null;
    this.#monitor.watch(null);
    this.deps.manager.clearActive(held.egress, why);
    this.deps.selector.recordFailure(held.node.id);
    this.#lastDied = { nodeId: held.node.id, at: Date.now() };
    if (held.node.id === this.pinned) this.#pinnedFailed(held.node.id, why);
    void this.#begin(`active node ${held.node.id} died: ${why}`, 'urgent');
  }

  #onUnhealthy(source: HealthSource, reason: string): void {
    if (this.#active?.egress !== source || this.#running || this.#stopped) return;
    const verdict = this.#policy.mayAutoSwitch();
    if (!verdict.ok) {
      this.#log.info({ event: 'switch-held', reason, why: verdict.reason }, `not switching yet: ${verdict.reason}`);
      return;
    }
    const node = this.#active.node;
    this.deps.selector.recordFailure(node.id);
    if (node.id === this.pinned) this.#pinnedFailed(node.id, reason);
    void this.#begin(`active node ${node.id} unhealthy: ${reason}`, 'auto');
  }

  #pinnedFailed(nodeId: string, why: string): void {
    if (this.#pinFailed === nodeId) return;
    this.#pinFailed = nodeId;
    const fallback = this.deps.options.fallbackWhenPinnedFails;
    this.#log.warn(
      { event: 'pinned-node-failed', nodeId, reason: why, fallback },
      fallback ? `pinned node ${nodeId} failed (${why}); using the best node until it recovers` : `pinned node ${nodeId} failed (${why})`,
    );
    this.#emit({ type: 'pin-failed', nodeId, reason: why });
  }

  /** After a failed switch: automatic switching backs off; with no active tunnel, retry then. */
  #afterFailure(kind: SwitchKind, id: number, why: string): void {
    const ms = this.#policy.recordFailure();
    this.#log.info({ event: 'switch-backoff', switchId: id, kind, why, backoffMs: ms }, `switch ${id} failed (${why}); automatic switching waits ${Math.round(ms / 1000)} s`);
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
  async evaluate(): Promise<void> {
    if (this.#evaluating || this.#stopped) return;
    this.#evaluating = true;
    try {
      if (!this.#active) {
        if (!this.#running && !this.#retry) void this.#begin('no active tunnel', 'urgent');
        return;
      }
      const now = Date.now();
      const leases = this.deps.manager.stats.leases;
      if (this.deps.manager.activeSessions > 0 || leases !== this.#leasesSeen) this.#lastBusyAt = now;
      this.#leasesSeen = leases;
      if (now - this.#lastBusyAt > this.deps.options.urlTest.idleTimeoutMs) {
        this.#log.debug({ event: 'url-test-paused', idleS: Math.round((now - this.#lastBusyAt) / 1000) }, 'no sessions: URL testing paused');
        return;
      }
      const tested: Array<{ node: VpnGateNode; egress: NodeTunnel }> = [this.#active, this.#standby, ...this.#members.list].filter((h) => h !== null);
      await Promise.all(tested.map((h) => this.#urlTest(h)));
      if (this.#running) return;
      if (this.mode === 'manual') await this.#returnToPin();
      else await this.#lookForBetter();
    } finally {
      this.#evaluating = false;
    }
  }

  async #urlTest(h: { node: VpnGateNode; egress: NodeTunnel }): Promise<void> {
    const { url, timeoutMs } = this.deps.options.urlTest;
    let ms: number | null = null;
    try {
      ms = await urlTest(async (host, port, o) => (await h.egress.connectTcp(host, port, o)).stream, url, { timeoutMs, signal: this.#abort.signal, ...this.#expected(url) });
      this.deps.selector.recordSuccess(h.node.id, { urlMs: ms });
      this.#rtt.set(h.node.id, ms);
    } catch (err) {
      if (this.#stopped) return;
      this.deps.selector.recordFailure(h.node.id, 'url');
      this.#log.info({ event: 'url-test-failed', nodeId: h.node.id, err: (err as Error).message }, `URL test through ${h.node.id} failed`);
    }
    this.urlDelays.set(h.node.id, { ms, at: Date.now() });
    this.#emit({ type: 'url-test', nodeId: h.node.id, ms });
  }

  /**
   * A URL test through one node (Clash's /proxies/:name/delay): through its tunnel if one is up
   * (active, standby or draining), else through a tunnel opened for the test and closed after.
   */
  async delayTest(nodeId: string, url: string, timeoutMs: number): Promise<number> {
    const node = this.deps.nodes().find((n) => n.id === nodeId);
    if (!node) throw new GatehopError(ErrorCodes.NODE_UNKNOWN, `no node ${nodeId} in the pool`);
    const open = [this.#active?.egress, this.#standby?.egress, ...this.deps.manager.draining.map((d) => d.egress as NodeTunnel)].find(
      (e) => e && e.nodeId === nodeId && e.state !== 'closed',
    );
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([deadline, this.#abort.signal]);
    const egress = open ?? (await this.deps.open(node, { signal, timeoutMs, id: `delay-${++this.#tunnelSeq}` }));
    try {
      const ms = await urlTest(async (host, port, o) => (await egress.connectTcp(host, port, o)).stream, url, { timeoutMs, signal, ...this.#expected(url) });
      this.urlDelays.set(nodeId, { ms, at: Date.now() });
      this.#emit({ type: 'url-test', nodeId, ms });
      return ms;
    } finally {
      if (!open) await egress.close();
    }
  }

  async #returnToPin(): Promise<void> {
    const pinned = this.pinned;
    if (!pinned || this.#active?.node.id === pinned) return;
    if (!this.deps.nodes().some((n) => n.id === pinned)) return;
    const ranking = await this.deps.selector.rank(this.deps.nodes());
    if (!ranking.ranked.some((r) => r.node.id === pinned) || this.#running) return;
    const verdict = this.#policy.mayAutoSwitch();
    if (!verdict.ok) return;
    void this.#begin(`pinned node ${pinned} answers again`, 'auto', pinned);
  }

  /** The URL test checks the configured status, 204 for a generate_204 URL, else any 2xx. */
  #expected(url: string): { expectedStatus?: number } {
    const configured = this.deps.options.urlTest.expectedStatus;
    if (configured !== undefined) return { expectedStatus: configured };
    return /generate_204(\?|$)/.test(url) ? { expectedStatus: defaultExpectedStatus(url) } : {};
  }

  /** The active node's probes: results feed the fail filter; the active node found dead is left at once. */
  #startProbes(held: Held): void {
    this.#probes?.close();
    this.#probes = null;
    const specs = this.deps.options.probes;
    if (specs.length === 0) return;
    const loop = new ProbeLoop(held.node.id, specs, async (host, port, o) => (await held.egress.connectTcp(host, port, o)).stream, this.failFilter, (r) => {
      if (r.ok && r.ms !== null) this.#rtt.set(r.nodeId, r.ms);
      if (!r.ok) this.#log.info({ event: 'probe-failed', nodeId: r.nodeId, probe: r.spec.type, err: r.error, dead: r.dead }, `${r.spec.type} probe of ${r.nodeId} failed${r.dead ? ': node marked dead' : ''}`);
      else if (r.changed) this.#log.info({ event: 'probe-recovered', nodeId: r.nodeId, probe: r.spec.type, ms: r.ms }, `${r.nodeId} answers its probes again`);
      if (r.dead && r.changed && this.#active === held) void this.#begin(`active node ${r.nodeId} failed ${this.deps.options.failFilter.maxFails} probes`, 'urgent');
    }, this.#log);
    this.#probes = loop;
    held.off.push(() => {
      loop.close();
      if (this.#probes === loop) this.#probes = null;
    });
    loop.start();
  }

  async #lookForBetter(): Promise<void> {
    const active = this.#active!;
    const ranking = await this.deps.selector.rank(this.deps.nodes());
    if (this.#running || this.#active !== active) return;
    const current = ranking.ranked.find((r) => r.node.id === active.node.id);
    const best = ranking.ranked.find((r) => r.node.id !== active.node.id && this.failFilter.allows(r.node.id));
    if (!best || !current) return;
    const why = this.#better(best, current);
    if (!why) return;
    const verdict = this.#policy.mayAutoSwitch();
    if (!verdict.ok) {
      this.#log.info({ event: 'switch-held', candidate: best.node.id, why: verdict.reason }, `a better node waits: ${verdict.reason}`);
      return;
    }
    void this.#begin(why, 'auto', best.node.id);
  }

  /**
   * The URL-test group's rule: the candidate scores clearly better (anti-flap margin) AND is faster
   * by more than the tolerance: by URL test when both tunnels were tested, else by probe RTT.
   */
  #better(candidate: RankedNode, current: RankedNode): string | null {
    if (!this.#policy.isClearlyBetter(candidate.terms.total, current.terms.total)) return null;
    const tol = this.deps.options.urlTest.toleranceMs;
    const urlC = this.urlDelays.get(candidate.node.id)?.ms;
    const urlA = this.urlDelays.get(current.node.id)?.ms;
    const [c, a, how] = urlC != null && urlA != null ? [urlC, urlA, 'URL test'] : [candidate.terms.rttMs, current.terms.rttMs, 'probe'];
    if (c === null || a === null || a - c <= tol) return null;
    return `better node ${candidate.node.id}: score ${candidate.terms.total.toFixed(1)} vs ${current.terms.total.toFixed(1)}, ${how} ${Math.round(c)} vs ${Math.round(a)} ms`;
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

  // ---- warm standby ----

  async #refreshStandby(): Promise<void> {
    if (!this.deps.options.warmStandby || this.#stopped || this.#standbyOpening) return;
    const activeId = this.#active?.node.id;
    if (this.#standby && this.#standby.node.id !== activeId && this.#standby.egress.state !== 'closed') return;
    this.#standbyOpening = (async () => {
      // Not a node that still has a draining tunnel: some servers allow one session per client.
      const busy = new Set(this.deps.manager.draining.map((d) => (d.egress as NodeTunnel).nodeId));
      const next = this.deps.selector.last?.ranked.find((r) => r.node.id !== activeId && !busy.has(r.node.id))?.node;
      if (!next) return;
      try {
        const egress = await this.deps.open(next, { signal: this.#abort.signal, timeoutMs: this.deps.options.connectTimeoutMs, id: `standby-${++this.#tunnelSeq}` });
        if (this.#stopped || this.#active?.node.id === next.id) {
          await egress.close();
          return;
        }
        const held: Held = { node: next, egress, since: Date.now(), off: [] };
        held.off.push(
          egress.onClose((why) => {
            if (this.#standby !== held) return;
            this.#standby = null;
            this.#log.info({ event: 'standby-lost', nodeId: next.id, reason: why }, `warm standby ${next.id} closed`);
            void this.#refreshStandby();
          }),
        );
        await this.#dropStandby('replaced');
        this.#standby = held;
        this.#log.info({ event: 'standby-ready', nodeId: next.id, egressId: egress.id }, `warm standby ${next.id} is up`);
      } catch (err) {
        if (!this.#stopped) this.#log.info({ event: 'standby-failed', nodeId: next.id, err: (err as Error).message }, `warm standby ${next.id} did not come up`);
      }
    })().finally(() => (this.#standbyOpening = null));
    await this.#standbyOpening;
  }

  async #dropStandby(why: string): Promise<void> {
    const s = this.#standby;
    if (!s) return;
    this.#standby = null;
    for (const off of s.off) off();
    this.#log.info({ event: 'standby-closed', nodeId: s.node.id, reason: why }, `warm standby ${s.node.id} closed`);
    await s.egress.close();
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
    this.#tick = this.#retry = null;
    this.#monitor.stop();
    for (const off of this.#active?.off ?? []) off();
    await this.#members.stop();
    await this.#running?.done.catch(() => {});
    await this.#standbyOpening;
    await this.#dropStandby('shutdown');
  }
}
