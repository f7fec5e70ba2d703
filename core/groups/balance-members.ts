import type { Logger } from '../common/index.js';
import { type EgressManager, egressDialer } from '../egress/index.js';
import { ProbeLoop, type FailFilter, type ProbeSpec, type Selector } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import type { NodeOpener, NodeTunnel } from './types.js';
import { detach } from '../common/index.js';

export interface BalanceMembersDeps {
  manager: EgressManager;
  selector: Selector;
  nodes: () => readonly VpnGateNode[];
  open: NodeOpener;
  failFilter: FailFilter;
  /** Read on each use, so a reload applies to the next member. */
  options: () => { connectTimeoutMs: number; maxAttempts: number; probes: readonly ProbeSpec[]; maxFails: number };
  /** Nodes the controller holds itself (active, standby): never members. */
  reserved: () => ReadonlySet<string>;
  /** Makes a tunnel id ("member-7"). */
  tunnelId: (kind: string) => string;
  /** A probe of a member measured its RTT. */
  onRtt: (nodeId: string, ms: number) => void;
  /** A member started taking sessions (an honesty check of it may start). */
  onUp?: (nodeId: string, egress: NodeTunnel) => void;
  /** Found to tamper (core/honesty): never a member. */
  flagged?: (nodeId: string) => boolean;
  signal: AbortSignal;
  logger: Logger;
}

/** A member as status views show it. */
export interface MemberInfo {
  node: VpnGateNode;
  egress: NodeTunnel;
  since: number;
  /** Probe failures and liveness losses since it joined. */
  failures: number;
  /** Failing (probes, liveness): being replaced; new sessions avoid it. */
  replacing: boolean;
}

interface Held extends MemberInfo {
  off: Array<() => void>;
}

/** First retry of a fill that found no node; doubles to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 5_000;
const MAX_RETRY_MS = 120_000;

/** The /16 a node's address is in: members on different networks fail independently more often. */
const networkOf = (ip: string): string => ip.split('.').slice(0, 2).join('.');

/**
 * The next member among `ranked` (best first, every one free to use), beside the nodes `inUse`:
 * a server address no member has, strictly first (VPN Gate lists one server under several
 * entries, UDP and TCP: two members on it are one exit and one point of failure), then a /16 no
 * member is on, then the best score.
 */
export function pickMemberCandidate<N extends { ip: string }>(
  ranked: readonly N[],
  inUse: readonly { ip: string }[],
): N | null {
  const ips = new Set(inUse.map((n) => n.ip));
  const nets = new Set(inUse.map((n) => networkOf(n.ip)));
  const elsewhere = ranked.filter((n) => !ips.has(n.ip));
  const pick = (from: readonly N[]) => from.find((n) => !nets.has(networkOf(n.ip))) ?? from[0];
  return pick(elsewhere) ?? pick(ranked) ?? null;
}

/**
 * The balance members beside the controller's active tunnel (`groups.balance.tunnels - 1` of
 * them, in auto mode). Keeps that many up on distinct nodes (distinct networks preferred), chosen by
 * the selector's ranking; probes each one; replaces one that fails make-before-break (it is marked
 * down at once, so new sessions avoid it, and drains once its replacement takes sessions); with no
 * node to spare it keeps searching, backing off from 5 s to 2 min.
 */
export class BalanceMembers {
  #target = 0;
  readonly #members: Held[] = [];
  #filling: Promise<void> | null = null;
  #retry: NodeJS.Timeout | null = null;
  #retryMs = FIRST_RETRY_MS;
  #stopped = false;
  readonly #log: Logger;

  constructor(private readonly deps: BalanceMembersDeps) {
    this.#log = deps.logger.child({ component: 'balance' });
  }

  get target(): number {
    return this.#target;
  }

  get list(): readonly MemberInfo[] {
    return this.#members.map(({ off: _off, ...m }) => m);
  }

  has(nodeId: string): boolean {
    return this.#members.some((m) => m.node.id === nodeId);
  }

  /** How many members to keep; extra ones drain (the worst-ranked, i.e. the newest, first). */
  setTarget(n: number, reason: string): void {
    if (this.#stopped) return;
    const before = this.#target;
    this.#target = Math.max(0, n);
    if (before !== this.#target)
      this.#log.info(
        { event: 'balance-target', members: this.#target, reason },
        `${this.#target} balance members (${reason})`,
      );
    while (this.#members.length > this.#target) this.#drop(this.#members.at(-1)!, reason);
    this.#fillSoon();
  }

  /**
   * Hands a member's tunnel to the controller (the user picked its node): it stops being watched
   * here and leaves the member list; the caller makes it active, which keeps its sessions.
   */
  release(nodeId: string): NodeTunnel | null {
    const m = this.#members.find((x) => x.node.id === nodeId && x.egress.state !== 'closed');
    if (!m) return null;
    this.#forget(m);
    return m.egress;
  }

  /** fill() from an event or a timer: nobody waits, a failure is logged with its code. */
  #fillSoon(): void {
    detach(this.#log, 'balance-fill', this.fill());
  }

  /** Opens members until the target is met; one fill at a time. */
  fill(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#filling ??= this.#fill().finally(() => (this.#filling = null));
    return this.#filling;
  }

  async #fill(): Promise<void> {
    const healthy = (): number => this.#members.filter((m) => !m.replacing).length;
    let failures = 0;
    while (!this.#stopped && healthy() < this.#target) {
      const node = this.#nextCandidate();
      if (!node || failures >= this.deps.options().maxAttempts) {
        this.#scheduleRetry(node ? 'candidates failed' : 'no node to spare');
        return;
      }
      const egress = await this.#open(node);
      if (this.#stopped) {
        await egress?.close();
        return;
      }
      if (!egress) {
        failures++;
        continue;
      }
      if (healthy() >= this.#target || this.deps.reserved().has(node.id) || this.has(node.id)) {
        await egress.close(); // the target fell, or the controller took that node meanwhile
        continue;
      }
      this.#add(node, egress);
      // Make-before-break: the member it replaces leaves only now.
      const failing = this.#members.find((m) => m.replacing);
      if (failing) this.#drop(failing, `replaced by ${node.id}`);
    }
    this.#retryMs = FIRST_RETRY_MS;
  }

  /** The best-ranked node not in use, on an address and then a network no member uses if there is one. */
  #nextCandidate(): VpnGateNode | null {
    const used = new Set([...this.deps.reserved(), ...this.#members.map((m) => m.node.id)]);
    for (const d of this.deps.manager.draining) {
      const id = (d.egress as Partial<NodeTunnel>).nodeId;
      if (id) used.add(id); // some servers allow one session per client
    }
    const pool = new Map(this.deps.nodes().map((n) => [n.id, n]));
    const inUse = [...used].map((id) => pool.get(id)).filter((n): n is VpnGateNode => !!n);
    const ranked = (this.deps.selector.last?.ranked ?? [])
      .map((r) => r.node)
      .filter(
        (n) =>
          pool.has(n.id) &&
          !used.has(n.id) &&
          this.deps.failFilter.allows(n.id) &&
          !this.deps.selector.backingOff(n.id) &&
          !(this.deps.flagged?.(n.id) ?? false),
      );
    return pickMemberCandidate(ranked, inUse);
  }

  async #open(node: VpnGateNode): Promise<NodeTunnel | null> {
    const started = Date.now();
    try {
      const egress = await this.deps.open(node, {
        signal: this.deps.signal,
        timeoutMs: this.deps.options().connectTimeoutMs,
        id: this.deps.tunnelId('member'),
      });
      this.deps.selector.recordSuccess(node.id, { connectMs: Date.now() - started });
      return egress;
    } catch (err) {
      if (this.#stopped) return null;
      this.deps.selector.recordFailure(node.id);
      this.#log.info(
        { event: 'member-failed', nodeId: node.id, err: (err as Error).message },
        `balance member ${node.id} did not come up: ${(err as Error).message}`,
      );
      return null;
    }
  }

  #add(node: VpnGateNode, egress: NodeTunnel): void {
    const m: Held = { node, egress, since: Date.now(), failures: 0, replacing: false, off: [] };
    m.off.push(
      egress.onClose((why) => this.#lost(m, why)),
      egress.onLiveness((responsive, quietMs) => {
        if (responsive) return this.#recovered(m, 'it answers again');
        m.failures++;
        this.deps.selector.recordFailure(node.id);
        this.#failing(m, `silent for ${Math.round(quietMs / 1000)} s`);
      }),
    );
    this.#members.push(m);
    this.#startProbes(m);
    this.deps.manager.addMember(egress, `balance member ${node.id}`);
    this.#log.info(
      { event: 'member-up', nodeId: node.id, egressId: egress.id, members: this.#members.length },
      `balance member ${node.id} takes sessions`,
    );
    this.deps.onUp?.(node.id, egress);
  }

  /** The node was found to tamper: its member takes no new sessions and is replaced (its sessions drain). */
  avoid(nodeId: string, why: string): void {
    const m = this.#members.find((x) => x.node.id === nodeId);
    if (!m) return;
    this.#drop(m, why);
    this.#fillSoon();
  }

  #startProbes(m: Held): void {
    const { probes, maxFails } = this.deps.options();
    if (probes.length === 0) return;
    const loop = new ProbeLoop(
      m.node.id,
      probes,
      egressDialer(m.egress),
      this.deps.failFilter,
      (r) => {
        if (r.ok) {
          if (r.ms !== null) this.deps.onRtt(r.nodeId, r.ms);
          if (r.changed) this.#recovered(m, `its ${r.spec.type} probe passes`);
          return;
        }
        m.failures++;
        this.#log.info(
          { event: 'probe-failed', nodeId: r.nodeId, probe: r.spec.type, err: r.error, dead: r.dead },
          `${r.spec.type} probe of member ${r.nodeId} failed${r.dead ? ': node marked dead' : ''}`,
        );
        if (r.dead && r.changed) this.#failing(m, `failed ${maxFails} probes`);
      },
      this.#log,
    );
    m.off.push(() => loop.close());
    loop.start();
  }

  /** New sessions avoid the member at once; a replacement is searched, then it drains. */
  #failing(m: Held, why: string): void {
    if (m.replacing || !this.#members.includes(m)) return;
    m.replacing = true;
    this.deps.manager.setDown(m.egress, true, why);
    this.#log.warn(
      { event: 'member-failing', nodeId: m.node.id, reason: why },
      `balance member ${m.node.id} ${why}: replacing it`,
    );
    this.#fillSoon();
  }

  #recovered(m: Held, why: string): void {
    if (!m.replacing || !this.#members.includes(m)) return;
    m.replacing = false;
    this.deps.manager.setDown(m.egress, false, why);
    this.#log.info(
      { event: 'member-recovered', nodeId: m.node.id, reason: why },
      `balance member ${m.node.id} recovered: ${why}`,
    );
    // Recovered before a replacement came: one too many when the replacement arrives.
    if (this.#members.length > this.#target) this.#drop(this.#members.at(-1)!, 'one member too many after a recovery');
  }

  /** The member's tunnel closed: it is gone (its sessions end with it); another is opened. */
  #lost(m: Held, why: string): void {
    if (!this.#members.includes(m) || this.#stopped) return;
    this.#forget(m);
    m.failures++;
    this.deps.manager.removeMember(m.egress, `died: ${why}`, true);
    this.deps.selector.recordFailure(m.node.id);
    this.#log.warn(
      { event: 'member-lost', nodeId: m.node.id, reason: why },
      `balance member ${m.node.id} died: ${why}`,
    );
    this.#fillSoon();
  }

  /** Takes a member out of selection; its sessions drain. */
  #drop(m: Held, why: string): void {
    this.#forget(m);
    this.deps.manager.removeMember(m.egress, why);
    this.#log.info(
      { event: 'member-removed', nodeId: m.node.id, reason: why },
      `balance member ${m.node.id} leaves (${why})`,
    );
  }

  #forget(m: Held): void {
    const i = this.#members.indexOf(m);
    if (i >= 0) this.#members.splice(i, 1);
    for (const off of m.off.splice(0)) off();
  }

  #scheduleRetry(why: string): void {
    if (this.#retry || this.#stopped) return;
    const ms = this.#retryMs;
    this.#retryMs = Math.min(MAX_RETRY_MS, ms * 2);
    this.#log.info(
      { event: 'balance-retry', reason: why, retryMs: ms, members: this.#members.length, target: this.#target },
      `balance: ${why}; looking again in ${Math.round(ms / 1000)} s`,
    );
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.#fillSoon();
    }, ms);
    this.#retry.unref();
  }

  /** A new ranking or node list: fill now instead of at the end of the back-off. */
  nudge(): void {
    if (this.#stopped || this.#members.filter((m) => !m.replacing).length >= this.#target) return;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = null;
    this.#fillSoon();
  }

  /** Stops watching and searching; the manager closes the tunnels. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = null;
    for (const m of this.#members) for (const off of m.off.splice(0)) off();
    await this.#filling;
  }
}
