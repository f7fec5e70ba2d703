import { randomInt } from 'node:crypto';
import { detach, Listeners, type Logger } from '../common/index.js';
import type { Egress } from '../contracts/index.js';
import type { SecondNode } from './checks.js';
import { checkNodeHonesty, type HonestyReport } from './honesty-check.js';
import type { DohServer, HonestyOptions } from './options.js';
import { CLEAN_CHECKS_TO_CLEAR, isTampering, type HonestyRecord, type Tampering } from './types.js';

/** Where verdicts are kept across restarts (the store; forgotten with the node). */
export interface HonestyStore {
  honestyRecords(): HonestyRecord[];
  saveHonesty(r: HonestyRecord): void;
  forgetHonesty(nodeIds: readonly string[]): void;
}

/** A tunnel to a node, as a check needs it: the way through, the node's resolvers, and (for a tunnel opened only for the check) how to close it. */
export interface CheckTunnel {
  egress: Egress;
  resolvers: readonly string[];
}

export interface HonestyMonitorDeps {
  options: () => HonestyOptions;
  /** DoH resolvers for a second opinion on a name (config dohServers). */
  doh: () => readonly DohServer[];
  store: HonestyStore;
  /** The host network, to tell an out-of-date published answer from a changed one (never a reference alone). */
  direct: Egress | null;
  logger: Logger;
  /** A tunnel to `nodeId` for a background check, closed by the caller's `close` (null: cannot now). */
  openForCheck?: (nodeId: string, signal: AbortSignal) => Promise<CheckTunnel & { close(): Promise<void> }>;
  /** Nodes a background check may take, best first (the ranking's). */
  sweepCandidates?: () => readonly string[];
  /** Whether the proxy is in use (no background checks while nobody uses it). */
  busy?: () => boolean;
  /** Whether a node's tunnel is in use now (checked through that tunnel instead). */
  inUse?: (nodeId: string) => boolean;
  /** The check itself (tests put a stand-in here). */
  check?: typeof checkNodeHonesty;
}

/** How many checks run at once: one for the nodes in use, one for the background sweep. */
const MAX_RUNNING = 2;

/**
 * The honesty checks' schedule and memory: a node is checked through its own tunnel when it is
 * first used and then at most every `recheckMs` (an inconclusive check after `retryUncheckedMs`),
 * and in the background, while the proxy is in use, one node not checked yet every
 * `sweepEveryMs` through a tunnel opened for it. Verdicts are kept (HonestyStore), announced
 * (onVerdict) and asked by everyone who chooses nodes (flagged).
 */
export class HonestyMonitor {
  readonly #records = new Map<string, HonestyRecord>();
  readonly #running = new Map<string, Promise<HonestyRecord | null>>();
  /** In-use checks waiting for their random moment (checkInUse), by node. */
  readonly #waiting = new Map<string, NodeJS.Timeout>();
  readonly #listeners: Listeners<HonestyRecord>;
  readonly #log: Logger;
  readonly #abort = new AbortController();
  #sweep: NodeJS.Timeout | null = null;
  #sweeping = false;
  #stopped = false;
  /** Nodes the sweep could not reach, and until when it leaves them (a dead node must not hold the sweep up). */
  readonly #unreachableUntil = new Map<string, number>();

  constructor(private readonly deps: HonestyMonitorDeps) {
    this.#log = deps.logger.child({ component: 'honesty' });
    this.#listeners = new Listeners(this.#log, 'honesty verdict');
    for (const r of deps.store.honestyRecords()) this.#records.set(r.nodeId, r);
  }

  get enabled(): boolean {
    return this.deps.options().enabled;
  }

  /** Every verdict known, by node. */
  get records(): ReadonlyMap<string, HonestyRecord> {
    return this.#records;
  }

  get(nodeId: string): HonestyRecord | null {
    return this.#records.get(nodeId) ?? null;
  }

  /** The node's tampering verdict, or null: automatic selection never takes a flagged node. */
  flagged(nodeId: string): Tampering | null {
    const v = this.#records.get(nodeId)?.verdict;
    return isTampering(v) ? v : null;
  }

  /** Flagged and not accepted by the user: a pin must not go there without asking. */
  blocked(nodeId: string): Tampering | null {
    const r = this.#records.get(nodeId);
    return r && isTampering(r.verdict) && !r.accepted ? r.verdict : null;
  }

  /** Whether a check is under way for the node. */
  checking(nodeId: string): boolean {
    return this.#running.has(nodeId);
  }

  onVerdict(fn: (r: HonestyRecord) => void): () => void {
    return this.#listeners.add(fn);
  }

  /** The user confirmed a manual pick of a flagged node: pins may go to it (automatic selection still never does). */
  accept(nodeId: string): void {
    const r = this.#records.get(nodeId);
    if (!r || r.accepted) return;
    const next = { ...r, accepted: true };
    this.#records.set(nodeId, next);
    this.deps.store.saveHonesty(next);
    this.#log.warn(
      { event: 'honesty-accepted', nodeId, verdict: r.verdict },
      `the user chose to use ${nodeId} although it ${r.verdict}`,
    );
  }

  /** The node is gone from the pool: its verdict goes with it (the store forgets it with the node). */
  forget(ids: readonly string[]): void {
    for (const id of ids) {
      this.#records.delete(id);
      this.#unreachableUntil.delete(id);
    }
  }

  /**
   * The node's row names another CA now (another key, perhaps another machine, #59): its verdict
   * and the user's consent belonged to the old one. Forgotten here and in the store; the node is
   * checked again when next used.
   */
  rekeyed(ids: readonly string[]): void {
    const had = ids.filter((id) => this.#records.has(id));
    if (had.length === 0) return;
    for (const id of had) this.#records.delete(id);
    this.deps.store.forgetHonesty(had);
    this.#log.info(
      { event: 'honesty-reset', nodes: had.length, first: had.slice(0, 5) },
      `forgot the honesty verdicts of ${had.length} nodes that name another CA now`,
    );
  }

  /** Due for a check: never checked, checked too long ago, or inconclusive and due a retry. */
  due(nodeId: string, now = Date.now()): boolean {
    const o = this.deps.options();
    if (!o.enabled) return false;
    const r = this.#records.get(nodeId);
    if (!r) return true;
    return now - r.checkedAt >= (r.verdict === 'unchecked' ? o.retryUncheckedMs : o.recheckMs);
  }

  /**
   * A tunnel to the node is in use: check it through that tunnel if it is due, in the background,
   * at a random moment within `inUseWithinMs` while the tunnel stays open (so the check comes
   * among the user's own traffic, not right at the switch).
   */
  checkInUse(nodeId: string, tunnel: CheckTunnel): void {
    if (!this.due(nodeId) || this.#running.has(nodeId) || this.#waiting.has(nodeId)) return;
    const within = this.deps.options().inUseWithinMs;
    const delay = within > 0 ? randomInt(0, within) : 0;
    const start = (): void => {
      this.#waiting.delete(nodeId);
      if (this.#stopped || tunnel.egress.state === 'closed' || !this.due(nodeId) || this.#running.has(nodeId)) return;
      if (this.#running.size >= MAX_RUNNING) return;
      detach(this.#log, 'honesty-check', this.#check(nodeId, tunnel, 'in use'));
    };
    if (delay === 0) return start();
    const timer = setTimeout(start, delay);
    timer.unref();
    this.#waiting.set(nodeId, timer);
  }

  /** Whether a check of the node in use is waiting for its moment. */
  waiting(nodeId: string): boolean {
    return this.#waiting.has(nodeId);
  }

  /** A check now, due or not (the API's "Check now"); resolves with the new record (null when stopped). */
  checkNow(nodeId: string, tunnel: CheckTunnel): Promise<HonestyRecord | null> {
    return this.#running.get(nodeId) ?? this.#check(nodeId, tunnel, 'asked');
  }

  #check(nodeId: string, tunnel: CheckTunnel, why: string): Promise<HonestyRecord | null> {
    const p = this.#run(nodeId, tunnel, why).finally(() => this.#running.delete(nodeId));
    this.#running.set(nodeId, p);
    return p;
  }

  async #run(nodeId: string, tunnel: CheckTunnel, why: string): Promise<HonestyRecord | null> {
    this.#log.info({ event: 'honesty-check', nodeId, why }, `checking ${nodeId} for tampering (${why})`);
    let report: HonestyReport;
    try {
      const second = this.#secondNodeFor(nodeId);
      report = await (this.deps.check ?? checkNodeHonesty)(tunnel.egress, tunnel.resolvers, this.deps.options(), {
        direct: this.deps.direct,
        doh: this.deps.doh(),
        signal: this.#abort.signal,
        ...(second ? { second } : {}),
      });
    } catch (err) {
      if (this.#stopped) return null;
      this.#log.info(
        { event: 'honesty-check-failed', nodeId, err: (err as Error).message },
        `the check of ${nodeId} did not finish: ${(err as Error).message}`,
      );
      return null;
    }
    if (this.#stopped) return null;
    const before = this.#records.get(nodeId);
    const record = nextRecord(nodeId, before, report, why === 'asked');
    this.#records.set(nodeId, record);
    this.deps.store.saveHonesty(record);
    const fields = {
      event: 'honesty-verdict',
      nodeId,
      verdict: record.verdict,
      durationMs: record.durationMs,
      bytes: record.bytes,
      evidence: record.evidence,
      inconclusive: record.inconclusive.length,
    };
    if (isTampering(record.verdict))
      this.#log.warn(
        fields,
        `${nodeId} tampers (${record.verdict}): ${record.evidence.map((e) => `${e.target}: expected ${e.expected}, got ${e.got}`).join('; ')}`,
      );
    else this.#log.info(fields, `${nodeId}: ${record.verdict} (${record.durationMs} ms, ${record.bytes} bytes)`);
    this.#listeners.emit(record);
    return record;
  }

  /**
   * For a URL the user named without its answer (honesty.http with no status): a tunnel to another
   * node that passed its checks, the best-ranked, opened only if a check needs it (#59: the
   * reference copy never comes from the user's own network alone). Null when no URL needs one.
   */
  #secondNodeFor(nodeId: string): SecondNode | null {
    const { openForCheck, sweepCandidates } = this.deps;
    if (!openForCheck || !this.deps.options().http.some((h) => h.status === undefined)) return null;
    return async () => {
      const id = (sweepCandidates?.() ?? []).find((x) => x !== nodeId && this.#records.get(x)?.verdict === 'honest');
      if (!id) return null;
      const t = await openForCheck(id, this.#abort.signal);
      this.#log.debug({ event: 'honesty-second-node', nodeId, second: id }, `comparing ${nodeId}'s pages with ${id}'s`);
      return { egress: t.egress, close: () => t.close() };
    };
  }

  /** Starts the background sweep (sweepEveryMs; 0: none). */
  start(): void {
    this.#arm();
  }

  /** After a reload: the sweep's pace may have changed. */
  reconfigure(): void {
    if (this.#sweep) clearInterval(this.#sweep);
    this.#sweep = null;
    this.#arm();
  }

  #arm(): void {
    const every = this.deps.options().sweepEveryMs;
    if (this.#stopped || every <= 0 || !this.deps.openForCheck) return;
    this.#sweep = setInterval(() => detach(this.#log, 'honesty-sweep', this.sweepOnce()), every);
    this.#sweep.unref();
  }

  /** One background check: the best-ranked node that is due and not in use, through a tunnel of its own. */
  async sweepOnce(): Promise<HonestyRecord | null> {
    const { openForCheck, sweepCandidates, busy, inUse } = this.deps;
    if (this.#sweeping || this.#stopped || !this.enabled || !openForCheck || this.#running.size >= MAX_RUNNING)
      return null;
    if (busy && !busy()) return null;
    const now = Date.now();
    const nodeId = (sweepCandidates?.() ?? []).find(
      (id) =>
        this.due(id, now) && !this.#running.has(id) && !inUse?.(id) && (this.#unreachableUntil.get(id) ?? 0) <= now,
    );
    if (!nodeId) return null;
    this.#sweeping = true;
    let tunnel: (CheckTunnel & { close(): Promise<void> }) | null = null;
    try {
      tunnel = await openForCheck(nodeId, this.#abort.signal);
      // Taken into use meanwhile, and checked through that tunnel already: one check at a time.
      if (this.#running.has(nodeId)) return null;
      return await this.#check(nodeId, tunnel, 'background');
    } catch (err) {
      // Not up: nothing to say of its honesty (a node that is down is not dishonest); the next
      // sweeps take others first.
      this.#unreachableUntil.set(nodeId, Date.now() + this.deps.options().retryUncheckedMs);
      this.#log.debug(
        { event: 'honesty-sweep-skipped', nodeId, err: (err as Error).message },
        `could not check ${nodeId}: ${(err as Error).message}`,
      );
      return null;
    } finally {
      this.#sweeping = false;
      await tunnel?.close();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#waiting.values()) clearTimeout(t);
    this.#waiting.clear();
    if (this.#sweep) clearInterval(this.#sweep);
    this.#sweep = null;
    this.#abort.abort();
    await Promise.allSettled([...this.#running.values()]);
  }
}

/**
 * What a check's report makes of a node's verdict. A tampering verdict stands through clean checks
 * until CLEAN_CHECKS_TO_CLEAR come in a row (#59: a node that tampers now and then, or only when it
 * does not suspect a check, used to be cleared by one); what it is still flagged for is the
 * evidence it was flagged with. A clean check the user asked for ("Check" on the node's row)
 * clears it at once: the user's call. Consent is for what the user saw: a new finding asks again.
 */
function nextRecord(
  nodeId: string,
  before: HonestyRecord | undefined,
  report: HonestyReport,
  userAsked: boolean,
): HonestyRecord {
  const now = Date.now();
  const common = { checkedAt: now, durationMs: report.durationMs, bytes: report.bytes };
  if (!userAsked && before && isTampering(before.verdict) && report.verdict === 'honest') {
    const cleanChecks = before.cleanChecks + 1;
    if (cleanChecks < CLEAN_CHECKS_TO_CLEAR) return { ...before, ...common, cleanChecks };
  }
  return {
    nodeId,
    verdict: report.verdict,
    evidence: report.evidence,
    inconclusive: report.inconclusive.slice(0, 16),
    ...common,
    accepted: !!before?.accepted && before.verdict === report.verdict,
    cleanChecks: 0,
  };
}
