import { Listeners, type Logger } from '../common/index.js';
import type { Egress, EgressLease, EgressSource } from './types.js';

export interface EgressManagerOptions {
  /** How long a replaced egress may keep serving its sessions before they are force-closed. */
  drainGraceMs?: number;
  /** Draining egresses kept at most; a further switch force-closes the oldest. */
  maxDraining?: number;
  /** Close a replaced egress's sessions at once instead of letting them drain. */
  interruptExistingConnections?: boolean;
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
  | { type: 'lost'; egress: Egress; reason: string }
  | { type: 'draining'; egress: Egress; sessions: number; graceEndsAt: number }
  | { type: 'closed'; egress: Egress; sessions: number; reason: string };

export interface DrainingEgress {
  egress: Egress;
  sessions: number;
  since: number;
  graceEndsAt: number;
}

interface Lease {
  retire: Set<() => void>;
}

interface Entry {
  egress: Egress;
  leases: Set<Lease>;
  drainTimer: NodeJS.Timeout | null;
  drainingSince: number | null;
  graceEndsAt: number;
}

/**
 * One active egress and the draining ones (make-before-break). Each session leases the active egress
 * when it starts and keeps it for life; a replaced egress closes when its last lease is released, or
 * when drainGraceMs runs out. At most maxDraining are kept; a further switch closes the oldest.
 */
export class EgressManager implements EgressSource {
  #active: Entry | null = null;
  readonly #draining: Entry[] = [];
  readonly #log: Logger;
  readonly #listeners: Listeners<EgressManagerEvent>;
  readonly stats: EgressManagerStats = { switches: 0, leases: 0, forceClosedSessions: 0, drained: 0 };

  constructor(
    private readonly fallback: Egress,
    logger: Logger,
    private readonly opts: EgressManagerOptions = {},
  ) {
    this.#log = logger.child({ component: 'egress-manager' });
    this.#listeners = new Listeners(this.#log, 'egress event');
  }

  get active(): Egress | null {
    return this.#active?.egress ?? null;
  }

  /** Sessions holding the active egress. */
  get activeSessions(): number {
    return this.#active?.leases.size ?? 0;
  }

  get draining(): readonly DrainingEgress[] {
    return this.#draining.map((e) => ({ egress: e.egress, sessions: e.leases.size, since: e.drainingSince ?? 0, graceEndsAt: e.graceEndsAt }));
  }

  /** Every egress change, for status views and metrics. Returns an unsubscribe function. */
  onEvent(fn: (ev: EgressManagerEvent) => void): () => void {
    return this.#listeners.add(fn);
  }

  acquire(): EgressLease {
    const entry = this.#active;
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

  /** Makes `egress` active; the previous one drains (or closes at once with interruptExistingConnections). */
  setActive(egress: Egress, reason: string): void {
    const old = this.#active;
    if (old?.egress === egress) return;
    // A draining egress made active again keeps its sessions (switching back to a node whose tunnel
    // is still up needs no new tunnel, and a server that allows one session per client is not asked for two).
    const back = this.#draining.find((e) => e.egress === egress);
    if (back) {
      this.#draining.splice(this.#draining.indexOf(back), 1);
      if (back.drainTimer) clearTimeout(back.drainTimer);
      back.drainTimer = null;
      back.drainingSince = null;
      back.graceEndsAt = 0;
    }
    this.#active = back ?? { egress, leases: new Set(), drainTimer: null, drainingSince: null, graceEndsAt: 0 };
    this.stats.switches++;
    this.#log.info({ event: 'egress-active', egressId: egress.id, previous: old?.egress.id ?? null, reason, reused: back !== undefined }, back ? 'a draining egress is active again' : 'new sessions use a new egress');
    this.#emit({ type: 'active', egress, previous: old?.egress ?? null, reason });
    if (old) this.#retire(old);
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
    this.#log.info({ event: 'egress-draining', egressId: old.egress.id, sessions: old.leases.size, graceMs }, 'old egress drains its sessions');
    this.#emit({ type: 'draining', egress: old.egress, sessions: old.leases.size, graceEndsAt: old.graceEndsAt });
    while (this.#draining.length > (this.opts.maxDraining ?? 2)) this.#close(this.#draining[0]!, 'too many draining egresses');
    // Sessions that have moved nothing yet may move to the new egress (they release this lease).
    for (const lease of [...old.leases]) for (const fn of [...lease.retire]) fn();
  }

  #close(entry: Entry, reason: string): void {
    const i = this.#draining.indexOf(entry);
    if (i >= 0) this.#draining.splice(i, 1);
    if (entry.drainTimer) clearTimeout(entry.drainTimer);
    entry.drainTimer = null;
    const sessions = entry.leases.size;
    if (reason !== 'drained' && reason !== 'shutdown') this.stats.forceClosedSessions += sessions;
    const fields = { event: 'egress-closed', egressId: entry.egress.id, sessions, reason };
    if (sessions > 0 && reason !== 'shutdown') this.#log.warn(fields, `egress closed with ${sessions} sessions still on it`);
    else this.#log.info(fields, 'egress closed');
    this.#emit({ type: 'closed', egress: entry.egress, sessions, reason });
    void entry.egress.close();
  }

  #emit(ev: EgressManagerEvent): void {
    this.#listeners.emit(ev);
  }

  async close(): Promise<void> {
    for (const e of [...this.#draining]) this.#close(e, 'shutdown');
    if (this.#active) {
      const a = this.#active;
      this.#active = null;
      await a.egress.close();
    }
    await this.fallback.close();
  }
}
