import { Listeners, type Logger, detach } from '../common/index.js';
import { Balancer, type BalanceStrategy } from './balance.js';
import type { Egress, EgressLease, EgressSource, RetireReason } from '../contracts/index.js';

export interface EgressManagerOptions {
  /** How long a replaced egress may keep serving its sessions before they are force-closed. */
  drainGraceMs?: number;
  /** Draining egresses kept at most; a further switch force-closes the oldest. */
  maxDraining?: number;
  /** Close a replaced egress's sessions at once instead of letting them drain. */
  interruptExistingConnections?: boolean;
  /** How sessions pick among the active egress and the balance members (default round-robin). */
  strategy?: BalanceStrategy;
  /** A member's recent RTT (ms), for the lowest-latency strategy. */
  latencyOf?: (egress: Egress) => number | null;
}

export interface EgressManagerStats {
  switches: number;
  /** Leases handed out on a tunnel (sessions started); a cheap "was the proxy used" signal. */
  leases: number;
  /** Sessions closed by the manager itself: drain grace expired, too many draining, interrupt. */
  forceClosedSessions: number;
  /** Replaced egresses that closed because their last session ended (the good way). */
  drained: number;
}

export type EgressManagerEvent =
  | { type: 'active'; egress: Egress; previous: Egress | null; reason: string }
  | { type: 'member'; egress: Egress; change: 'added' | 'removed' | 'down' | 'up'; reason: string }
  | { type: 'lost'; egress: Egress; reason: string }
  | { type: 'draining'; egress: Egress; sessions: number; graceEndsAt: number }
  | { type: 'closed'; egress: Egress; sessions: number; reason: string };

/** An egress taking new sessions: the active one (primary) or a balance member. */
export interface ActiveMember {
  egress: Egress;
  primary: boolean;
  sessions: number;
  /** Marked down (probes, liveness): new sessions avoid it unless every member is down. */
  down: boolean;
  since: number;
}

export interface DrainingEgress {
  egress: Egress;
  sessions: number;
  since: number;
  graceEndsAt: number;
}

interface Lease {
  retire: Set<(why: RetireReason) => void>;
}

interface Entry {
  egress: Egress;
  leases: Set<Lease>;
  down: boolean;
  since: number;
  drainTimer: NodeJS.Timeout | null;
  drainingSince: number | null;
  graceEndsAt: number;
}

/**
 * One active egress, optional balance members beside it, and the draining ones (make-before-break).
 * Each session leases an egress when it starts (the active one, or with members one picked by the
 * balance strategy) and keeps it for life; a replaced egress closes when its last lease is released,
 * or when drainGraceMs runs out. At most maxDraining are kept; a further switch closes the oldest.
 */
export class EgressManager implements EgressSource {
  #active: Entry | null = null;
  /** Balance members besides the active egress, best-ranked first. */
  readonly #members: Entry[] = [];
  readonly #draining: Entry[] = [];
  readonly #balancer: Balancer;
  readonly #log: Logger;
  readonly #listeners: Listeners<EgressManagerEvent>;
  readonly stats: EgressManagerStats = { switches: 0, leases: 0, forceClosedSessions: 0, drained: 0 };

  constructor(
    private readonly fallback: Egress,
    logger: Logger,
    private opts: EgressManagerOptions = {},
  ) {
    this.#log = logger.child({ component: 'egress-manager' });
    this.#listeners = new Listeners(this.#log, 'egress event');
    this.#balancer = new Balancer(opts.strategy, opts.latencyOf);
  }

  /** A reload: drain grace, draining limit and interrupt apply to the next switch; the strategy to the next session. */
  updateOptions(opts: Omit<EgressManagerOptions, 'latencyOf'>): void {
    this.opts = { ...this.opts, ...opts };
    if (opts.strategy) this.#balancer.strategy = opts.strategy;
  }

  /** The balance strategy; applies to the next session. */
  get strategy(): BalanceStrategy {
    return this.#balancer.strategy;
  }

  set strategy(s: BalanceStrategy) {
    this.#balancer.strategy = s;
  }

  get active(): Egress | null {
    return this.#active?.egress ?? null;
  }

  /** Sessions holding the active egress or a member (not the draining ones). */
  get activeSessions(): number {
    return this.#taking().reduce((n, e) => n + e.leases.size, 0);
  }

  /** The egresses taking new sessions: the active one first, then the members. */
  get members(): readonly ActiveMember[] {
    return this.#taking().map((e) => ({
      egress: e.egress,
      primary: e === this.#active,
      sessions: e.leases.size,
      down: e.down,
      since: e.since,
    }));
  }

  #taking(): Entry[] {
    return [...(this.#active ? [this.#active] : []), ...this.#members];
  }

  get draining(): readonly DrainingEgress[] {
    return this.#draining.map((e) => ({
      egress: e.egress,
      sessions: e.leases.size,
      since: e.drainingSince ?? 0,
      graceEndsAt: e.graceEndsAt,
    }));
  }

  /** Every egress change, for status views and metrics. Returns an unsubscribe function. */
  onEvent(fn: (ev: EgressManagerEvent) => void): () => void {
    return this.#listeners.add(fn);
  }

  acquire(): EgressLease {
    const entry = this.#pick();
    if (!entry) return { egress: this.fallback, release: () => {}, onRetire: () => () => {} };
    const lease: Lease = { retire: new Set() };
    entry.leases.add(lease);
    this.stats.leases++;
    return {
      egress: entry.egress,
      release: () => {
        if (!entry.leases.delete(lease)) return;
        lease.retire.clear();
        if (entry.leases.size === 0 && this.#draining.includes(entry)) {
          this.stats.drained++;
          this.#close(entry, 'drained');
        }
      },
      onRetire: (handler) => {
        lease.retire.add(handler);
        return () => lease.retire.delete(handler);
      },
    };
  }

  /**
   * The entry for a new session: by the strategy among the members not marked down; with every one
   * down, the first (best-ranked) anyway: a member that may answer beats refusing the session.
   */
  #pick(): Entry | null {
    const taking = this.#taking().filter((e) => e.egress.state !== 'closed');
    if (taking.length <= 1) return taking[0] ?? null;
    const up = taking.filter((e) => !e.down);
    if (up.length === 0) return taking[0]!;
    return up[this.#balancer.pick(up.map((e) => ({ egress: e.egress, sessions: e.leases.size })))] ?? up[0]!;
  }

  /** Makes `egress` active; the previous one drains (or closes at once with interruptExistingConnections). */
  setActive(egress: Egress, reason: string): void {
    const old = this.#active;
    if (old?.egress === egress) return;
    // A draining egress made active again keeps its sessions (switching back to a node whose tunnel
    // is still up needs no new tunnel, and a server that allows one session per client is not asked for two).
    // A member made active keeps its sessions too.
    const back = this.#takeBack(egress) ?? this.#takeMember(egress);
    this.#active = back ?? this.#entry(egress);
    this.stats.switches++;
    this.#log.info(
      { event: 'egress-active', egressId: egress.id, previous: old?.egress.id ?? null, reason, reused: back !== null },
      back ? 'a draining egress is active again' : 'new sessions use a new egress',
    );
    this.#emit({ type: 'active', egress, previous: old?.egress ?? null, reason });
    if (old) this.#retire(old);
  }

  /** Adds a balance member: new sessions may pick it from now on. */
  addMember(egress: Egress, reason: string): void {
    if (this.#taking().some((e) => e.egress === egress)) return;
    this.#members.push(this.#takeBack(egress) ?? this.#entry(egress));
    this.#log.info(
      { event: 'egress-member', change: 'added', egressId: egress.id, reason },
      'a balance member takes sessions',
    );
    this.#emit({ type: 'member', egress, change: 'added', reason });
  }

  /**
   * Takes a member out of selection: its sessions drain (make-before-break when a replacement was
   * added first). A member that died (`lost`) is dropped without draining; its sessions end with it.
   */
  removeMember(egress: Egress, reason: string, lost = false): void {
    const entry = this.#takeMember(egress);
    if (!entry) return;
    this.#log.info(
      { event: 'egress-member', change: 'removed', egressId: egress.id, reason, sessions: entry.leases.size },
      'a balance member leaves',
    );
    this.#emit({ type: 'member', egress, change: 'removed', reason });
    if (!lost) this.#retire(entry);
    else {
      // Sessions still connecting, or connected but idle, may move to a member that works.
      this.#tellRetired(entry, 'down');
      if (entry.leases.size === 0) this.#close(entry, reason);
    }
  }

  /** Marks the active egress or a member down (new sessions avoid it) or up again. */
  setDown(egress: Egress, down: boolean, reason: string): void {
    const entry = this.#taking().find((e) => e.egress === egress);
    if (!entry || entry.down === down) return;
    entry.down = down;
    this.#log.info(
      { event: 'egress-member', change: down ? 'down' : 'up', egressId: egress.id, reason },
      down ? 'new sessions avoid an egress' : 'an egress takes sessions again',
    );
    this.#emit({ type: 'member', egress, change: down ? 'down' : 'up', reason });
    // Sessions that have moved nothing yet may move to a member that works (they release this lease).
    if (down && this.#taking().some((e) => !e.down)) this.#tellRetired(entry, 'down');
  }

  #entry(egress: Egress): Entry {
    return {
      egress,
      leases: new Set(),
      down: false,
      since: Date.now(),
      drainTimer: null,
      drainingSince: null,
      graceEndsAt: 0,
    };
  }

  #takeMember(egress: Egress): Entry | null {
    const i = this.#members.findIndex((e) => e.egress === egress);
    return i < 0 ? null : this.#members.splice(i, 1)[0]!;
  }

  /** A draining entry taken back into service, its sessions kept. */
  #takeBack(egress: Egress): Entry | null {
    const back = this.#draining.find((e) => e.egress === egress);
    if (!back) return null;
    this.#draining.splice(this.#draining.indexOf(back), 1);
    if (back.drainTimer) clearTimeout(back.drainTimer);
    back.drainTimer = null;
    back.drainingSince = null;
    back.graceEndsAt = 0;
    back.down = false;
    back.since = Date.now();
    return back;
  }

  /** The active egress died: new sessions get the fallback until a new one is set. */
  clearActive(egress: Egress, reason: string): void {
    if (this.#active?.egress !== egress) return;
    this.#log.warn({ event: 'egress-lost', egressId: egress.id, reason }, 'active egress lost');
    const entry = this.#active;
    this.#active = null;
    this.#emit({ type: 'lost', egress, reason });
    // Its sessions end as the egress closes; the entry is kept out of the draining list.
    if (entry.leases.size === 0) this.#close(entry, reason);
  }

  /** Closes a draining egress now (the user's "Close now"); its sessions end. False if none has that id. */
  closeDraining(egressId: string): boolean {
    const entry = this.#draining.find((e) => e.egress.id === egressId);
    if (!entry) return false;
    this.#close(entry, 'closed by the user');
    return true;
  }

  #retire(old: Entry): void {
    if (old.leases.size === 0) {
      this.#close(old, 'replaced with no sessions');
      return;
    }
    if (this.opts.interruptExistingConnections) {
      this.#close(old, 'replaced (interruptExistingConnections)');
      return;
    }
    const graceMs = this.opts.drainGraceMs ?? 10 * 60_000;
    old.drainingSince = Date.now();
    old.graceEndsAt = old.drainingSince + graceMs;
    old.drainTimer = setTimeout(() => this.#close(old, 'drain grace expired'), graceMs);
    old.drainTimer.unref();
    this.#draining.push(old);
    this.#log.info(
      { event: 'egress-draining', egressId: old.egress.id, sessions: old.leases.size, graceMs },
      'old egress drains its sessions',
    );
    this.#emit({ type: 'draining', egress: old.egress, sessions: old.leases.size, graceEndsAt: old.graceEndsAt });
    while (this.#draining.length > (this.opts.maxDraining ?? 2))
      this.#close(this.#draining[0]!, 'too many draining egresses');
    // Sessions that have moved nothing yet may move to the new egress (they release this lease).
    this.#tellRetired(old, 'replaced');
  }

  #tellRetired(entry: Entry, why: RetireReason): void {
    for (const lease of [...entry.leases]) for (const fn of [...lease.retire]) fn(why);
  }

  #close(entry: Entry, reason: string): void {
    const i = this.#draining.indexOf(entry);
    if (i >= 0) this.#draining.splice(i, 1);
    if (entry.drainTimer) clearTimeout(entry.drainTimer);
    entry.drainTimer = null;
    const sessions = entry.leases.size;
    if (reason !== 'drained' && reason !== 'shutdown') this.stats.forceClosedSessions += sessions;
    const fields = { event: 'egress-closed', egressId: entry.egress.id, sessions, reason };
    if (sessions > 0 && reason !== 'shutdown')
      this.#log.warn(fields, `egress closed with ${sessions} sessions still on it`);
    else this.#log.info(fields, 'egress closed');
    this.#emit({ type: 'closed', egress: entry.egress, sessions, reason });
    detach(this.#log, 'egress-close', entry.egress.close());
  }

  #emit(ev: EgressManagerEvent): void {
    this.#listeners.emit(ev);
  }

  async close(): Promise<void> {
    for (const e of [...this.#draining]) this.#close(e, 'shutdown');
    for (const e of this.#members.splice(0)) this.#close(e, 'shutdown');
    if (this.#active) {
      const a = this.#active;
      this.#active = null;
      await a.egress.close();
    }
    await this.fallback.close();
  }
}
