import { z } from 'zod';
import type { Logger } from '../common/index.js';
import type { Ranking } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import type { ControllerEvent } from './switch-controller.js';
import { detach, wholeNumber } from '../common/index.js';

/** How a start without network is retried (config `recovery:`). */
export const recoveryOptionsSchema = z
  .object({
    /** First retry after this long; doubles each time. */
    initialMs: wholeNumber(10, 5_000),
    /** The longest wait between retries. */
    maxMs: wholeNumber(10, 180_000),
  })
  .strict()
  .refine((o) => o.maxMs >= o.initialMs, { message: 'maxMs must not be below initialMs', path: ['maxMs'] });
export type RecoveryOptions = z.infer<typeof recoveryOptionsSchema>;

/** Why no tunnel is up: no list at all, no node answered, or no tunnel came up. */
export type StarvedReason = 'no-node-list' | 'no-reachable-node' | 'no-tunnel';

export interface RecoveryStatus {
  state: 'ok' | 'waiting';
  reason: StarvedReason | null;
  /** When the wait began (ms since the epoch). */
  since: number | null;
  attempts: number;
  nextAttemptAt: number | null;
}

export interface PoolRecoveryDeps {
  nodes: {
    readonly nodes: readonly VpnGateNode[];
    readonly fetchable: boolean;
    refresh(): Promise<void>;
    onChange(fn: () => void): () => void;
  };
  selector: { readonly last: Ranking | null; onRanked(fn: () => void): () => void };
  /** Ranks the current list. */
  rank(): Promise<Ranking>;
  controller: {
    readonly active: unknown;
    readonly switching: number | null;
    retryNow(reason: string): boolean;
    onEvent(fn: (ev: ControllerEvent) => void): () => void;
  };
  options: RecoveryOptions;
  logger: Logger;
}

const WHY: Record<StarvedReason, string> = {
  'no-node-list': 'no node list yet (every list endpoint failed)',
  'no-reachable-node': 'no node answered its probe',
  'no-tunnel': 'no tunnel came up',
};

/**
 * Gets Gatehop out of a start without network (the app starts at login before Wi-Fi, or the
 * machine resumes from sleep): while no tunnel is up because there is no list, no node answers or
 * no tunnel comes up, the list fetch, the probes and the first switch are retried with back-off
 * (initialMs doubling to maxMs), and at once when the network changes. The 20-minute list refresh
 * and the switch policy's 30–480 s back-off are right for a working machine, not for this.
 */
export class PoolRecovery {
  #state: RecoveryStatus = { state: 'ok', reason: null, since: null, attempts: 0, nextAttemptAt: null };
  #delayMs: number;
  #timer: NodeJS.Timeout | null = null;
  #attempting = false;
  #closed = false;
  /** Set by the controller's first finished switch: before it, no tunnel is just "not yet". */
  #armed = false;
  readonly #off: Array<() => void> = [];
  readonly #log: Logger;

  constructor(private readonly deps: PoolRecoveryDeps) {
    this.#log = deps.logger.child({ component: 'recovery' });
    this.#delayMs = deps.options.initialMs;
    this.#off.push(
      deps.nodes.onChange(() => this.check()),
      deps.selector.onRanked(() => this.check()),
      deps.controller.onEvent((ev) => {
        if (ev.type !== 'switch') return;
        this.#armed = true;
        // Emitted from inside the finished switch, before the controller clears it as running.
        this.#check(true);
      }),
    );
  }

  get status(): RecoveryStatus {
    return { ...this.#state };
  }

  /** Looks at the pool now: waiting starts (and schedules a retry) or ends. */
  check(): void {
    this.#check(false);
  }

  #check(switchJustEnded: boolean): void {
    if (this.#closed || this.#attempting || !this.#armed) return;
    const { controller } = this.deps;
    if (controller.active) return this.#recovered();
    if (controller.switching !== null && !switchJustEnded) return; // its outcome calls check again
    const reason = this.#reason();
    if (this.#state.state === 'ok') {
      this.#state = { state: 'waiting', reason, since: Date.now(), attempts: 0, nextAttemptAt: null };
      this.#log.warn(
        { event: 'waiting-for-network', reason },
        `waiting for the network: ${WHY[reason]}; retrying in ${seconds(this.#delayMs)}`,
      );
    } else {
      this.#state.reason = reason;
    }
    this.#schedule();
  }

  /** The machine's network changed (or it resumed): while waiting, retry at once. */
  networkChanged(why: string): void {
    if (this.#closed || this.#state.state !== 'waiting') return;
    this.#log.info({ event: 'network-retry', why }, `network changed (${why}): retrying now`);
    this.#delayMs = this.deps.options.initialMs;
    this.#clearTimer();
    detach(this.#log, 'pool-recovery', this.#attempt());
  }

  close(): void {
    this.#closed = true;
    this.#clearTimer();
    for (const off of this.#off.splice(0)) off();
  }

  #reason(): StarvedReason {
    if (this.deps.nodes.nodes.length === 0) return 'no-node-list';
    const last = this.deps.selector.last;
    if (!last || last.ranked.length === 0) return 'no-reachable-node';
    return 'no-tunnel';
  }

  #schedule(): void {
    if (this.#timer) return;
    const delay = this.#delayMs;
    this.#state.nextAttemptAt = Date.now() + delay;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      detach(this.#log, 'pool-recovery', this.#attempt());
    }, delay);
    this.#timer.unref();
  }

  async #attempt(): Promise<void> {
    if (this.#closed || this.#attempting) return;
    this.#attempting = true;
    this.#state.attempts++;
    this.#state.nextAttemptAt = null;
    this.#delayMs = Math.min(this.#delayMs * 2, this.deps.options.maxMs);
    const reason = this.#reason();
    this.#log.info(
      { event: 'recovery-attempt', attempt: this.#state.attempts, reason },
      `retry ${this.#state.attempts}: ${WHY[reason]}`,
    );
    let started = false;
    try {
      if (reason === 'no-node-list' && this.deps.nodes.fetchable) await this.deps.nodes.refresh();
      if (this.#closed) return;
      if (this.deps.nodes.nodes.length > 0) {
        await this.deps.rank().catch(() => undefined); // the selector logs its own failures
        if (this.#closed) return;
        started = this.deps.controller.retryNow('retrying after a start without network');
      }
    } finally {
      this.#attempting = false;
    }
    // A started switch reports back through its 'switch' event; otherwise look again now.
    if (!started) this.check();
  }

  #recovered(): void {
    if (this.#state.state === 'ok') return;
    const waitedMs = Date.now() - (this.#state.since ?? Date.now());
    this.#log.info(
      { event: 'network-recovered', attempts: this.#state.attempts, durationMs: waitedMs },
      `a tunnel is up after ${seconds(waitedMs)} without one`,
    );
    this.#clearTimer();
    this.#state = { state: 'ok', reason: null, since: null, attempts: 0, nextAttemptAt: null };
    this.#delayMs = this.deps.options.initialMs;
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#state.nextAttemptAt = null;
  }
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
