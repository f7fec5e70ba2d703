import type { Logger } from '../common/index.js';
import type { Egress, EgressLease, EgressSource } from './types.js';

interface Entry {
  egress: Egress;
  leases: number;
  drainTimer: NodeJS.Timeout | null;
  drainingSince: number | null;
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

  constructor(
    private readonly fallback: Egress,
    logger: Logger,
    private readonly opts: { drainGraceMs?: number; maxDraining?: number } = {},
  ) {
    this.#log = logger.child({ component: 'egress-manager' });
  }

  get active(): Egress | null {
    return this.#active?.egress ?? null;
  }

  get draining(): ReadonlyArray<{ egress: Egress; sessions: number; since: number }> {
    return this.#draining.map((e) => ({ egress: e.egress, sessions: e.leases, since: e.drainingSince ?? 0 }));
  }

  acquire(): EgressLease {
    const entry = this.#active;
    if (!entry) return { egress: this.fallback, release: () => {} };
    entry.leases++;
    let released = false;
    return {
      egress: entry.egress,
      release: () => {
        if (released) return;
        released = true;
        entry.leases--;
        if (entry.leases === 0 && entry !== this.#active && this.#draining.includes(entry)) this.#close(entry, 'drained');
      },
    };
  }

  /** Makes `egress` active; the previous one drains. */
  setActive(egress: Egress, reason: string): void {
    const old = this.#active;
    this.#active = { egress, leases: 0, drainTimer: null, drainingSince: null };
    this.#log.info({ event: 'egress-active', egressId: egress.id, previous: old?.egress.id ?? null, reason }, 'new sessions use a new egress');
    if (!old) return;
    if (old.leases === 0) {
      this.#close(old, 'replaced with no sessions');
      return;
    }
    old.drainingSince = Date.now();
    old.drainTimer = setTimeout(() => this.#close(old, 'drain grace expired'), this.opts.drainGraceMs ?? 10 * 60_000);
    old.drainTimer.unref();
    this.#draining.push(old);
    while (this.#draining.length > (this.opts.maxDraining ?? 2)) this.#close(this.#draining[0]!, 'too many draining egresses');
  }

  /** The active egress died: new sessions get the fallback until a new one is set. */
  clearActive(egress: Egress, reason: string): void {
    if (this.#active?.egress !== egress) return;
    this.#log.warn({ event: 'egress-lost', egressId: egress.id, reason }, 'active egress lost');
    this.#active = null;
  }

  #close(entry: Entry, reason: string): void {
    const i = this.#draining.indexOf(entry);
    if (i >= 0) this.#draining.splice(i, 1);
    if (entry.drainTimer) clearTimeout(entry.drainTimer);
    this.#log.info({ event: 'egress-closed', egressId: entry.egress.id, sessions: entry.leases, reason }, 'egress closed');
    void entry.egress.close();
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
