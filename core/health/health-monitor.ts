import type { Logger } from '../common/index.js';
import type { HealthOptions } from './options.js';
import {
  countersOf,
  diffCounters,
  scoreWindow,
  type HealthCounters,
  type HealthSource,
  type WindowScore,
  TRAFFIC_SYMPTOMS,
} from './window-score.js';
import { detach } from '../common/index.js';

export interface HealthMonitorEvents {
  /** Every window, for status views and metrics. */
  onWindow?(source: HealthSource, w: WindowScore & { consecutiveBad: number; dnsMs: number | null }): void;
  /**
   * `badWindows` bad windows in a row, and again at every bad window while it lasts: the
   * controller should look for a better node (it may hold while its anti-flap minimum runs, and
   * asks `failing` when that ends).
   */
  onUnhealthy(source: HealthSource, reason: string, o?: { urgent: boolean }): void;
  /**
   * Whether another node in the pool is known to deliver at least `rateBps` (the crawl's rate
   * times crawlFasterBy): only then is a crawl a bad window (absent: never).
   */
  fasterNodeKnown?(source: HealthSource, rateBps: number): boolean;
}

/**
 * Samples the active egress once per window and asks for a switch after enough bad windows in a
 * row. It decides nothing else: whether and where to switch is the switch controller's (with its
 * anti-flap policy). L1 reconnects stay inside core/ovpn; a reconnecting link only scores 0 here.
 *
 * The count is of windows that saw the failure in a row (#60): it starts over at a good window
 * that could have seen it, and only on a new egress. A quiet window (nothing went through) that
 * looks good says nothing about connects failing or a stall, so after such a bad window it leaves
 * the count as it is: a node whose uplink died is not washed clean by the pauses between a user's
 * tries. Reaching `badWindows` does not reset the count either: while the node keeps failing,
 * every bad window asks again, so a switch held by the anti-flap minimum is not forgotten.
 */
export class HealthMonitor {
  #source: HealthSource | null = null;
  #before: HealthCounters | null = null;
  #consecutiveBad = 0;
  /** The streak's last bad window saw a symptom that shows only with traffic. */
  #needsTraffic = false;
  #lastReason = '';
  #timer: NodeJS.Timeout | null = null;
  #sampling = false;
  readonly #log: Logger;

  constructor(
    private opts: HealthOptions,
    private readonly events: HealthMonitorEvents,
    logger: Logger,
  ) {
    this.#log = logger.child({ component: 'health' });
  }

  /** Watches `source` from now on (null: nothing to watch); the count of bad windows starts over. */
  watch(source: HealthSource | null): void {
    this.#source = source;
    this.#before = source ? countersOf(source) : null;
    source?.takeConnectHosts?.(); // what it saw before it was watched (a standby, a member) is not this window's
    source?.takeBulk?.();
    this.#consecutiveBad = 0;
    this.#needsTraffic = false;
    if (source && !this.#timer) {
      this.#timer = setInterval(() => detach(this.#log, 'health-sample', this.sample()), this.opts.intervalMs);
      this.#timer.unref();
    }
    if (!source) this.#stopTimer();
  }

  /** A reload: windows from now on use these; a new interval restarts the timer. */
  updateOptions(opts: HealthOptions): void {
    const restart = opts.intervalMs !== this.opts.intervalMs && this.#timer !== null;
    this.opts = opts;
    if (restart) {
      this.#stopTimer();
      this.watch(this.#source);
    }
  }

  get consecutiveBad(): number {
    return this.#consecutiveBad;
  }

  /** The watched egress is failing now: `badWindows` windows in a row saw it, and none since cleared it. */
  get failing(): { reason: string } | null {
    return this.#source && this.#consecutiveBad >= this.opts.badWindows ? { reason: this.#lastReason } : null;
  }

  /** One window now (the timer calls this; tests may too). */
  async sample(): Promise<WindowScore | null> {
    const source = this.#source;
    if (!source || this.#sampling) return null;
    this.#sampling = true;
    try {
      const link = source.linkState();
      const dnsMs = link === 'up' ? await source.measureDns().catch(() => null) : null;
      if (source !== this.#source) return null; // replaced while we measured
      const now = countersOf(source);
      const hosts = source.takeConnectHosts?.();
      const bulk = source.takeBulk?.() ?? null;
      const rateBps = bulk ? (bulk.bytes * 1000) / bulk.spanMs : null;
      const w = scoreWindow(
        {
          link,
          dnsMs,
          sessionsActive: source.stats.sessionsActive,
          delta: diffCounters(now, this.#before!),
          ...(hosts ? { hosts } : {}),
          ...(rateBps !== null
            ? {
                bulk: {
                  rateBps,
                  fasterKnown:
                    rateBps < this.opts.crawlBps &&
                    (this.events.fasterNodeKnown?.(source, rateBps * this.opts.crawlFasterBy) ?? false),
                },
              }
            : {}),
        },
        this.opts,
      );
      this.#before = now;
      // Urgent (every connect failed, to many places): as many bad windows as a switch needs, now.
      if (w.urgent) this.#consecutiveBad = Math.max(this.#consecutiveBad, this.opts.badWindows - 1);
      if (w.bad) {
        this.#consecutiveBad++;
        this.#needsTraffic = w.symptoms.some((x) => TRAFFIC_SYMPTOMS.has(x));
      } else if (!(w.quiet && this.#needsTraffic)) this.#consecutiveBad = 0;
      const fields = {
        event: 'health-window',
        egressId: source.id,
        score: Math.round(w.score * 100) / 100,
        reasons: w.reasons,
        consecutiveBad: this.#consecutiveBad,
        dnsMs: dnsMs === null ? null : Math.round(dnsMs),
      };
      if (w.bad) this.#log.info(fields, `egress ${source.id} window bad (${w.reasons.join(', ')})`);
      else this.#log.debug(fields, 'health window');
      this.events.onWindow?.(source, { ...w, consecutiveBad: this.#consecutiveBad, dnsMs });
      if (w.bad && this.#consecutiveBad >= this.opts.badWindows) {
        this.#lastReason = w.urgent
          ? `a health window in which ${w.reasons.join(', ')}`
          : `${this.#consecutiveBad} bad health windows (${w.reasons.join(', ')})`;
        this.events.onUnhealthy(source, this.#lastReason, { urgent: w.urgent });
      }
      return w;
    } finally {
      this.#sampling = false;
    }
  }

  #stopTimer(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  stop(): void {
    this.#source = null;
    this.#stopTimer();
  }
}
