import { Listeners, type Logger } from '../common/index.js';
import { emptyHistory, type LatencySample, type LeftShape, type NodeHistory } from '../store/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import { inBackoff, leftHolding, withFailure, withLeft, withSuccess, withThroughput } from './history.js';
import type { SelectorOptions } from './options.js';
import { computePriors, topK, type PriorTerms } from './priors.js';
import { mapBounded, probeNode, type ProbeResult } from './probes.js';
import { scoreNode, type ScoreTerms } from './score.js';

/** What the selector remembers through (the store satisfies it). */
export interface HistoryStore {
  history(nodeId: string): NodeHistory;
  /** Every node's history in one query (a ranking reads it once). */
  allHistory(): Map<string, NodeHistory>;
  saveHistory(h: NodeHistory): void;
  addLatency(s: LatencySample): void;
}

export interface RankedNode {
  node: VpnGateNode;
  priorTerms: PriorTerms;
  terms: ScoreTerms;
  history: NodeHistory;
}

export interface Ranking {
  ranked: RankedNode[];
  /** Candidates left out, with why. */
  excluded: Array<{ nodeId: string; reason: ExcludeReason }>;
  at: number;
}

/**
 * Why a node was not ranked: backed off, did not answer, denied country, not probed, unreachable
 * by the way Gatehop must reach nodes (UDP through a proxy without UDP), found to tamper with
 * traffic (core/honesty), or trusted by a private CA that only a list fetched in clear names
 * (#59): never chosen automatically, and not probed.
 */
export type ExcludeReason =
  'backoff' | 'left' | 'unreachable' | 'country-denied' | 'not-in-top-k' | 'needs-udp' | 'tampers' | 'ca-in-clear';

/** Why a node may not be ranked at all before any probe (null: it may). */
export type RankGate = (node: VpnGateNode) => 'needs-udp' | 'tampers' | 'ca-in-clear' | null;

export type Prober = (
  node: VpnGateNode,
  opts: { samples: number; timeoutMs: number; signal?: AbortSignal },
) => Promise<ProbeResult>;

const defaultProber: Prober = (node, opts) => probeNode(node.proto, node.ip, node.port, opts);

/**
 * Two-stage selection: priors from the list pick the top K, probes measure them, and the score
 * weighs the measurement with what history says. Single-flight: a second call for the same list
 * while one runs shares its result; a call with a newer list is ranked right after.
 */
export class Selector {
  #running: Promise<Ranking> | null = null;
  #runningFor: readonly VpnGateNode[] | null = null;
  #queued: { nodes: readonly VpnGateNode[]; promise: Promise<Ranking> } | null = null;
  #last: Ranking | null = null;
  readonly #log: Logger;
  readonly #rankedListeners: Listeners<Ranking>;

  constructor(
    private opts: SelectorOptions,
    private readonly store: HistoryStore,
    logger: Logger,
    private readonly prober: Prober = defaultProber,
    private readonly gate: RankGate = () => null,
  ) {
    this.#log = logger.child({ component: 'selector' });
    this.#rankedListeners = new Listeners(this.#log, 'ranking');
  }

  get last(): Ranking | null {
    return this.#last;
  }

  /** Every finished ranking (status views, metrics). Returns an unsubscribe function. */
  onRanked(fn: (r: Ranking) => void): () => void {
    return this.#rankedListeners.add(fn);
  }

  rank(nodes: readonly VpnGateNode[], signal?: AbortSignal): Promise<Ranking> {
    if (this.#running && this.#runningFor === nodes) return this.#running;
    if (this.#running) {
      // A newer list while one is being ranked: rank it next (only the newest waits), never drop it.
      if (this.#queued) {
        this.#queued.nodes = nodes;
        return this.#queued.promise;
      }
      const queued: { nodes: readonly VpnGateNode[]; promise: Promise<Ranking> } = {
        nodes,
        promise: Promise.resolve(null as unknown as Ranking),
      };
      queued.promise = this.#running
        .catch(() => undefined)
        .then(() => {
          this.#queued = null;
          return this.rank(queued.nodes, signal);
        });
      this.#queued = queued;
      return queued.promise;
    }
    this.#runningFor = nodes;
    this.#running = this.#rank(nodes, signal).finally(() => {
      this.#running = null;
      this.#runningFor = null;
    });
    return this.#running;
  }

  async #rank(nodes: readonly VpnGateNode[], signal?: AbortSignal): Promise<Ranking> {
    const now = Date.now();
    const excluded: Ranking['excluded'] = [];
    // One query for the whole ranking (it ran 2 × N before), on the main thread.
    const histories = this.store.allHistory();
    const historyOf = (id: string): NodeHistory => histories.get(id) ?? emptyHistory(id);
    const priors = computePriors(nodes, this.opts, { now, history: historyOf });
    for (const n of nodes) if (!priors.has(n.id)) excluded.push({ nodeId: n.id, reason: 'country-denied' });
    const unreachable = new Set<string>();
    const usable = nodes.filter((n) => {
      if (!priors.has(n.id)) return false;
      const why = this.gate(n);
      if (why) {
        excluded.push({ nodeId: n.id, reason: why });
        if (why === 'needs-udp') unreachable.add(n.id);
        return false;
      }
      // Left in use for how it failed (#60): away for its hold, whatever its back-off says.
      if (leftHolding(historyOf(n.id), now)) {
        excluded.push({ nodeId: n.id, reason: 'left' });
        return false;
      }
      if (inBackoff(historyOf(n.id), now)) {
        excluded.push({ nodeId: n.id, reason: 'backoff' });
        return false;
      }
      return true;
    });
    const candidates = topK(usable, priors, this.opts.topK);
    for (const n of usable) if (!candidates.includes(n)) excluded.push({ nodeId: n.id, reason: 'not-in-top-k' });
    const probeOpts = { timeoutMs: this.opts.probe.timeoutMs, ...(signal ? { signal } : {}) };
    const probed = await mapBounded(candidates, this.opts.probe.concurrency, (n) =>
      this.prober(n, { ...probeOpts, samples: this.opts.probe.samples }),
    );
    // A second chance, one sample each, for the ones that failed: a lost datagram or a busy moment
    // should not cost a node a backoff period.
    const retry = candidates.filter((_, i) => probed[i]!.rttMs === null);
    const retried = await mapBounded(retry, this.opts.probe.concurrency, (n) =>
      this.prober(n, { ...probeOpts, samples: 1 }),
    );
    retry.forEach((n, j) => {
      if (retried[j]!.rttMs !== null) probed[candidates.indexOf(n)] = retried[j]!;
    });
    const ranked: RankedNode[] = [];
    // When every candidate fails at once, the likelier cause is our own network (down, not up yet,
    // captive portal), not a dozen volunteers at the same moment: nobody is backed off for it, so
    // the retry after the network returns finds them all again.
    const allFailed = candidates.length > 1 && probed.every((p) => p.rttMs === null);
    if (allFailed)
      this.#log.warn(
        { event: 'probes-all-failed', candidates: candidates.length },
        `none of ${candidates.length} nodes answered its probe; the network looks down, so no node is backed off`,
      );
    candidates.forEach((node, i) => {
      const probe = probed[i]!;
      this.store.addLatency({ nodeId: node.id, at: now, kind: 'tcp', ms: probe.rttMs, success: probe.rttMs !== null });
      if (probe.rttMs === null) {
        excluded.push({ nodeId: node.id, reason: 'unreachable' });
        if (allFailed) return;
        const h = withFailure(historyOf(node.id), now, this.opts.backoff.initialMs, this.opts.backoff.maxMs);
        this.store.saveHistory(h);
        histories.set(node.id, h);
        this.#log.info(
          {
            event: 'probe-failed',
            nodeId: node.id,
            backoffUntil: h.backoffUntil,
            consecutiveFailures: h.consecutiveFailures,
          },
          'node did not answer its probe',
        );
        return;
      }
      const history = historyOf(node.id);
      ranked.push({
        node,
        priorTerms: priors.get(node.id)!,
        terms: scoreNode(priors.get(node.id)!, probe.rttMs, history, this.opts),
        history,
      });
    });
    ranked.sort((a, b) => b.terms.total - a.terms.total || a.node.id.localeCompare(b.node.id));
    ranked.forEach((r, i) => {
      const t = r.terms;
      // Every node of every ranking: detail for a bug report, not the log a user keeps (debug).
      this.#log.debug(
        {
          event: 'node-scored',
          rank: i + 1,
          nodeId: r.node.id,
          ip: r.node.ip,
          port: r.node.port,
          proto: r.node.proto,
          score: round(t.total),
          rttMs: round(t.rttMs),
          latencyTerm: round(t.latency),
          priorTerm: round(t.prior),
          historyTerm: round(t.history),
          failurePenalty: round(t.recentFailures),
          prior: round(r.priorTerms.prior),
        },
        `#${i + 1} ${r.node.id} score ${round(t.total)} = latency ${round(t.latency)} + prior ${round(t.prior)} + history ${round(t.history)} − failures ${round(t.recentFailures)}`,
      );
    });
    if (unreachable.size > 0)
      this.#log.info(
        { event: 'nodes-skipped', reason: 'needs-udp', nodes: unreachable.size },
        `${unreachable.size} UDP nodes skipped: the upstream proxy carries no UDP`,
      );
    const result = { ranked, excluded, at: now };
    this.#last = result;
    this.#rankedListeners.emit(result);
    return result;
  }

  /** A tunnel to the node came up (or a URL test passed): reset its backoff. */
  recordSuccess(nodeId: string, sample: { connectMs?: number; throughputBps?: number; urlMs?: number } = {}): void {
    const now = Date.now();
    this.store.saveHistory(withSuccess(this.store.history(nodeId), now, sample));
    if (sample.urlMs !== undefined)
      this.store.addLatency({ nodeId, at: now, kind: 'url', ms: sample.urlMs, success: true });
  }

  /** Bulk downloads through the node in use ran at `rateBps` (#60): remembered as what it delivers. */
  recordThroughput(nodeId: string, rateBps: number): void {
    this.store.saveHistory(withThroughput(this.store.history(nodeId), rateBps));
  }

  /**
   * A node the last ranking found usable, other than `exceptId` and not held away, that is known to
   * deliver `rateBps` or more (bulk downloads through it, remembered): where a crawl may be left for.
   */
  fasterNodeKnown(rateBps: number, exceptId: string, now = Date.now()): string | null {
    const last = this.#last;
    if (!last) return null;
    // A hold or back-off the last ranking saw may have ended since (a user's pick clears a hold):
    // those nodes are asked again now; what else it excluded (country, a flag, unreachable) stays out.
    const ids = [
      ...last.ranked.map((r) => r.node.id),
      ...last.excluded.filter((x) => x.reason === 'left' || x.reason === 'backoff').map((x) => x.nodeId),
    ];
    for (const id of ids) {
      if (id === exceptId || this.backingOff(id, now)) continue;
      if ((this.store.history(id).avgThroughputBps ?? 0) >= rateBps) return id;
    }
    return null;
  }

  /** A reload: the next ranking uses these. */
  updateOptions(opts: SelectorOptions): void {
    this.opts = opts;
  }

  /** The node failed recently and waits out its back-off or its hold after being left (a ranking may predate either). */
  backingOff(nodeId: string, now = Date.now()): boolean {
    const h = this.store.history(nodeId);
    return inBackoff(h, now) || leftHolding(h, now);
  }

  /** Automatic selection left the node in use for how it failed: back it off and hold it away for `holdMs`. */
  recordLeft(nodeId: string, shape: LeftShape, holdMs: number): NodeHistory {
    const now = Date.now();
    const b = this.opts.backoff;
    const h = withLeft(this.store.history(nodeId), now, shape, holdMs, b.initialMs, b.maxMs);
    this.store.saveHistory(h);
    this.store.addLatency({ nodeId, at: now, kind: 'tcp', ms: null, success: false });
    return h;
  }

  /** When automatic selection last left the node for failing in use, if it is still held away. */
  leftAt(nodeId: string, now = Date.now()): number | null {
    const h = this.store.history(nodeId);
    return leftHolding(h, now) ? h.left!.at : null;
  }

  /** The user picked the node: whatever automatic selection held against it is theirs to overrule. */
  clearLeft(nodeId: string): void {
    const h = this.store.history(nodeId);
    if (h.left) this.store.saveHistory({ ...h, left: null });
  }

  /** A tunnel to the node failed: back it off. */
  recordFailure(nodeId: string, kind: 'tcp' | 'url' = 'tcp'): NodeHistory {
    const now = Date.now();
    const h = withFailure(this.store.history(nodeId), now, this.opts.backoff.initialMs, this.opts.backoff.maxMs);
    this.store.saveHistory(h);
    this.store.addLatency({ nodeId, at: now, kind, ms: null, success: false });
    return h;
  }
}

function round(v: number | null): number | null {
  return v === null ? null : Math.round(v * 1000) / 1000;
}
