import type { HealthOptions } from './options.js';

export type Verdict = { ok: true } | { ok: false; reason: string };

/**
 * Anti-flap rules for automatic switches (a user's explicit switch and a dead active tunnel are
 * not subject to them): a minimum interval between switches, a candidate that must be clearly
 * better, and exponential backoff after switches that failed.
 */
export class SwitchPolicy {
  #lastSwitchAt = Number.NEGATIVE_INFINITY;
  #failures = 0;
  #backoffUntil = 0;

  constructor(
    private opts: Pick<HealthOptions, 'minSwitchIntervalMs' | 'betterBy' | 'failureBackoffMs' | 'failureBackoffMaxMs'>,
  ) {}

  /** A reload: the next decision uses these (the switch history is kept). */
  updateOptions(
    opts: Pick<HealthOptions, 'minSwitchIntervalMs' | 'betterBy' | 'failureBackoffMs' | 'failureBackoffMaxMs'>,
  ): void {
    this.opts = opts;
  }

  /** May an automatic switch start now? */
  mayAutoSwitch(now = Date.now()): Verdict {
    if (now < this.#backoffUntil)
      return {
        ok: false,
        reason: `backing off after ${this.#failures} failed switches until ${new Date(this.#backoffUntil).toISOString()}`,
      };
    const sinceMs = now - this.#lastSwitchAt;
    if (sinceMs < this.opts.minSwitchIntervalMs)
      return {
        ok: false,
        reason: `last switch ${Math.round(sinceMs / 1000)} s ago (minimum ${Math.round(this.opts.minSwitchIntervalMs / 1000)} s)`,
      };
    return { ok: true };
  }

  /** When an automatic switch may start: at once (now or earlier), or when the minimum or a back-off ends. */
  allowedAt(): number {
    return Math.max(this.#backoffUntil, this.#lastSwitchAt + this.opts.minSwitchIntervalMs);
  }

  /** Is `candidate` better than `current` by the configured margin? (Scores: higher is better.) */
  isClearlyBetter(candidate: number, current: number): boolean {
    return candidate - current > this.opts.betterBy * Math.abs(current);
  }

  get backoffUntil(): number {
    return this.#backoffUntil;
  }

  recordSwitch(now = Date.now()): void {
    this.#lastSwitchAt = now;
    this.#failures = 0;
    this.#backoffUntil = 0;
  }

  /** A switch found no candidate that came up: 30 s, 60 s, … up to the max. */
  recordFailure(now = Date.now()): number {
    this.#failures++;
    const ms = Math.min(this.opts.failureBackoffMs * 2 ** (this.#failures - 1), this.opts.failureBackoffMaxMs);
    this.#backoffUntil = now + ms;
    return ms;
  }
}
