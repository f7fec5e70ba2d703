import { ErrorCodes, GatehopError, Listeners, type Logger } from '../common/index.js';
import { processAlive, processStart } from './process-identity.js';
import type { SnapshotKeeper, SysProxySnapshot } from './snapshot-keeper.js';
import { hostPort, type FlatSettings, type ProxyBackend, type ProxyTarget } from './types.js';

export type SysProxyEvent =
  | { type: 'applied'; target: string; backend: string }
  | { type: 'restored'; to: string }
  /** The user (or another program) changed the settings while Gatehop had them: left as they are. */
  | { type: 'left-alone'; current: string }
  /** A crash left the OS pointing at Gatehop: fixed at start. */
  | { type: 'recovered'; how: 'snapshot' | 'turned-off'; to: string }
  /** The guard saw another program rewrite the settings while Gatehop had them on. */
  | { type: 'overridden'; current: string; reapplied: boolean }
  /** Kill switch: Gatehop stops (or started again) and the settings stay pointed at its port. */
  | { type: 'held'; target: string; original: string };

export interface SysProxyStatus {
  supported: boolean;
  backend: string | null;
  /** What the OS has now, in words; null when it cannot be read. */
  current: string | null;
  /** Gatehop's proxy is what the OS uses now. */
  enabled: boolean;
  snapshot: { savedAt: number; pid: number; original: string; applied: string; target: string } | null;
  error: string | null;
}

export type RestoreOutcome = 'restored' | 'left-alone' | 'nothing-to-restore';
export type ReleaseOutcome = RestoreOutcome | 'held';
export type RecoverOutcome = 'nothing' | 'recovered' | 'turned-off' | 'owner-running' | 'left-alone' | 'held';

export interface SystemProxyOptions {
  /** null when this platform or desktop has no backend (`unsupported` says why). */
  backend: ProxyBackend | null;
  unsupported?: GatehopError;
  keeper: SnapshotKeeper;
  logger: Logger;
  /** Guard: look every intervalMs whether another program rewrote the settings; re-apply when `reapply`. */
  guard?: { intervalMs: number; reapply: boolean } | null;
  /**
   * The kill switch, read when it matters (a live setting): Gatehop going away leaves the settings
   * pointed at its port, and the next start keeps them instead of recovering, so programs that use
   * the proxy fail closed rather than going direct. Off (the default): every way out restores.
   */
  killSwitch?: () => boolean;
}

/**
 * Sets, snapshots, restores exactly and recovers the OS proxy. One operation at a time (a queue),
 * so a quit during an apply restores after the apply, never in the middle of it.
 */
export class SystemProxy {
  #queue: Promise<unknown> = Promise.resolve();
  #guardTimer: NodeJS.Timeout | null = null;
  #target: ProxyTarget | null = null;
  /** release() left the settings on Gatehop (kill switch): later releases say nothing more. */
  #held = false;
  readonly #listeners: Listeners<SysProxyEvent>;
  readonly #log: Logger;

  constructor(private readonly opts: SystemProxyOptions) {
    this.#log = opts.logger.child({ component: 'sysproxy' });
    this.#listeners = new Listeners(this.#log, 'system proxy event');
  }

  get supported(): boolean {
    return this.opts.backend !== null;
  }

  onEvent(fn: (ev: SysProxyEvent) => void): () => void {
    return this.#listeners.add(fn);
  }

  /** The OS settings now, raw (GH_ERR_SYSPROXY_UNSUPPORTED where there is no backend). */
  read(): Promise<FlatSettings> {
    return this.#serial(() => this.#backend().read());
  }

  /** What the OS has now (described) and what the snapshot holds. Never throws. */
  status(): Promise<SysProxyStatus> {
    return this.#serial(async () => {
      const b = this.opts.backend;
      const snap = this.opts.keeper.load();
      const snapshot =
        snap && b
          ? {
              savedAt: snap.savedAt,
              pid: snap.pid,
              original: b.describe(snap.original),
              applied: b.describe(snap.applied),
              target: hostPort(snap.target.host, snap.target.port),
            }
          : null;
      if (!b)
        return {
          supported: false,
          backend: null,
          current: null,
          enabled: false,
          snapshot,
          error: this.opts.unsupported?.message ?? 'not supported',
        };
      try {
        const current = await b.read();
        const enabled = snap ? matches(current, snap.applied) : false;
        return { supported: true, backend: b.label, current: b.describe(current), enabled, snapshot, error: null };
      } catch (err) {
        return {
          supported: true,
          backend: b.label,
          current: null,
          enabled: false,
          snapshot,
          error: (err as Error).message,
        };
      }
    });
  }

  /**
   * Points the OS at `target`. The user's settings are saved first (a snapshot that cannot be saved
   * means nothing is changed); a write that fails part-way puts back what was there.
   */
  apply(target: ProxyTarget): Promise<void> {
    return this.#serial(async () => {
      const b = this.#backend();
      const current = await b.read();
      const prior = this.opts.keeper.load();
      // Already ours (a second apply, or a restart of this same process): keep the first original.
      const original = prior && matches(current, prior.applied) ? prior.original : current;
      const desired = b.desired(target, current);
      const snap: SysProxySnapshot = {
        version: 1,
        backend: b.id,
        original,
        applied: desired,
        target: { host: target.host, port: target.port },
        pid: process.pid,
        pidStart: processStart(process.pid),
        savedAt: Date.now(),
      };
      this.opts.keeper.save(snap);
      try {
        await b.write(desired, current);
      } catch (err) {
        await this.#rollback(b, current);
        if (!prior) this.opts.keeper.clear();
        throw wrap(err, `could not set the system proxy (${b.label})`);
      }
      this.#target = target;
      this.#held = false;
      this.#log.info(
        {
          event: 'sysproxy-applied',
          backend: b.id,
          target: hostPort(target.host, target.port),
          original: b.describe(original),
        },
        `system proxy set to ${hostPort(target.host, target.port)} (was: ${b.describe(original)})`,
      );
      this.#emit({ type: 'applied', target: hostPort(target.host, target.port), backend: b.label });
      this.#startGuard();
    });
  }

  /**
   * Puts back the snapshot, unless the settings were changed by someone else meanwhile. With
   * `onlyOwn` (every quit path), a snapshot another running Gatehop wrote is not touched.
   */
  restore(opts: { onlyOwn?: boolean } = {}): Promise<RestoreOutcome> {
    return this.#serial(() => this.#restore(opts.onlyOwn ?? false));
  }

  /**
   * Gatehop goes away (quit, a signal, a fatal error): with the kill switch on, the settings stay
   * pointed at its port and the snapshot is kept, so a later restore (the switch off at the next
   * start, "gatehop sysproxy restore", the system proxy turned off) puts back exactly what the user
   * had; with it off, restore({ onlyOwn: true }).
   */
  release(): Promise<ReleaseOutcome> {
    return this.#serial(async () => {
      if (!this.#killSwitch()) return this.#restore(true);
      this.close();
      const snap = this.opts.keeper.load();
      const b = this.opts.backend;
      if (!snap || !b || snap.pid !== process.pid) return 'nothing-to-restore';
      // Said once: the desktop shell releases first and the core's stop releases again.
      if (this.#held) return 'held';
      this.#held = true;
      const target = hostPort(snap.target.host, snap.target.port);
      this.#log.warn(
        { event: 'sysproxy-held', target, original: b.describe(snap.original) },
        `kill switch on: the system proxy stays pointed at Gatehop (${target}), so programs that use it stay offline until Gatehop runs again; turn the kill switch off (or run "gatehop sysproxy restore") to get back: ${b.describe(snap.original)}`,
      );
      this.#emit({ type: 'held', target, original: b.describe(snap.original) });
      return 'held';
    });
  }

  /**
   * At every start: a snapshot whose process is gone while the OS still points where it said is
   * restored; settings pointing at `ours` with no snapshot are turned off. The user is told (log
   * and event) either way.
   */
  recover(ours: { host: string; port: number } | null): Promise<RecoverOutcome> {
    return this.#serial(async () => {
      const b = this.opts.backend;
      if (!b) return 'nothing';
      const snap = this.opts.keeper.load();
      if (snap) {
        if (snap.pid !== process.pid && processAlive(snap.pid, snap.pidStart)) {
          this.#log.info(
            { event: 'sysproxy-owner-running', pid: snap.pid },
            `the system proxy belongs to a Gatehop still running (pid ${snap.pid}); not touching it`,
          );
          return 'owner-running';
        }
        if (this.#killSwitch()) return this.#adopt(b, snap);
        const outcome = await this.#restore();
        if (outcome !== 'restored') return 'left-alone';
        this.#log.warn(
          { event: 'sysproxy-recovered', pid: snap.pid, to: b.describe(snap.original) },
          `Gatehop (pid ${snap.pid}) ended without restoring the system proxy; restored it to: ${b.describe(snap.original)}`,
        );
        this.#emit({ type: 'recovered', how: 'snapshot', to: b.describe(snap.original) });
        return 'recovered';
      }
      if (!ours) return 'nothing';
      const current = await b.read();
      if (!b.pointsAt(current, ours.host, ours.port)) return 'nothing';
      const off = b.off(current);
      await b.write(off, current);
      this.#log.warn(
        { event: 'sysproxy-recovered', how: 'turned-off' },
        `the system proxy pointed at Gatehop (${hostPort(ours.host, ours.port)}) with no saved settings to go back to; turned it off`,
      );
      this.#emit({ type: 'recovered', how: 'turned-off', to: b.describe(off) });
      return 'turned-off';
    });
  }

  /** Compares the OS settings with what Gatehop set now (the network changed); the guard's check. */
  check(): Promise<void> {
    const g = this.opts.guard;
    return this.#serial(() => this.#guardCheck(g?.reapply ?? false));
  }

  /** Stops the guard. Does not restore: callers decide (quit restores, a crash cannot). */
  close(): void {
    if (this.#guardTimer) clearInterval(this.#guardTimer);
    this.#guardTimer = null;
  }

  #killSwitch(): boolean {
    return this.opts.killSwitch?.() ?? false;
  }

  /**
   * Kill switch at start: the settings a gone Gatehop held stay as they are and become this
   * process's (its snapshot, its guard), so quitting or turning the proxy off restores them. If the
   * user changed them meanwhile, they are theirs: the snapshot is dropped, nothing is written.
   */
  async #adopt(b: ProxyBackend, snap: SysProxySnapshot): Promise<RecoverOutcome> {
    const current = await b.read();
    if (!matches(current, snap.applied)) {
      this.opts.keeper.clear();
      this.#log.info(
        { event: 'sysproxy-left-alone', current: b.describe(current) },
        `the system proxy was changed while Gatehop was away (now: ${b.describe(current)}); leaving it as it is`,
      );
      this.#emit({ type: 'left-alone', current: b.describe(current) });
      return 'left-alone';
    }
    this.opts.keeper.save({ ...snap, pid: process.pid, pidStart: processStart(process.pid), savedAt: Date.now() });
    this.#target = { host: snap.target.host, port: snap.target.port, bypass: [] };
    const target = hostPort(snap.target.host, snap.target.port);
    this.#log.warn(
      { event: 'sysproxy-held', pid: snap.pid, target, original: b.describe(snap.original) },
      `kill switch on: the system proxy Gatehop (pid ${snap.pid}) left pointed at ${target} is kept; it restores to: ${b.describe(snap.original)}`,
    );
    this.#emit({ type: 'held', target, original: b.describe(snap.original) });
    this.#startGuard();
    return 'held';
  }

  async #restore(onlyOwn = false): Promise<RestoreOutcome> {
    this.close();
    const snap = this.opts.keeper.load();
    if (!snap || (onlyOwn && snap.pid !== process.pid)) return 'nothing-to-restore';
    const b = this.#backend();
    if (snap.backend !== b.id) {
      throw new GatehopError(
        ErrorCodes.SYSPROXY_FAILED,
        `the saved proxy settings are for ${snap.backend}, but this session uses ${b.label}: log in to that desktop and run "gatehop sysproxy restore" there`,
      );
    }
    const current = await b.read();
    if (!matches(current, snap.applied)) {
      this.opts.keeper.clear();
      this.#target = null;
      this.#log.warn(
        { event: 'sysproxy-left-alone', current: b.describe(current) },
        `the system proxy was changed by someone else while Gatehop had it (now: ${b.describe(current)}); leaving it as it is`,
      );
      this.#emit({ type: 'left-alone', current: b.describe(current) });
      return 'left-alone';
    }
    try {
      await b.write(snap.original, current);
    } catch (err) {
      throw wrap(
        err,
        `could not restore the system proxy (${b.label}); the saved settings are kept in ${this.opts.keeper.file}: run "gatehop sysproxy restore" to try again`,
      );
    }
    this.opts.keeper.clear();
    this.#target = null;
    this.#log.info(
      { event: 'sysproxy-restored', to: b.describe(snap.original) },
      `system proxy restored to: ${b.describe(snap.original)}`,
    );
    this.#emit({ type: 'restored', to: b.describe(snap.original) });
    return 'restored';
  }

  async #rollback(b: ProxyBackend, before: FlatSettings): Promise<void> {
    try {
      await b.write(before, await b.read());
    } catch (err) {
      this.#log.error(
        { event: 'sysproxy-rollback-failed', err: (err as Error).message },
        'could not undo a partly applied system proxy; the snapshot is kept for "gatehop sysproxy restore"',
      );
    }
  }

  #startGuard(): void {
    const g = this.opts.guard;
    if (!g || this.#guardTimer) return;
    this.#guardTimer = setInterval(
      () => void this.#serial(() => this.#guardCheck(g.reapply)).catch(() => undefined),
      g.intervalMs,
    );
    this.#guardTimer.unref();
  }

  async #guardCheck(reapply: boolean): Promise<void> {
    const b = this.opts.backend;
    const snap = this.opts.keeper.load();
    if (!b || !snap || !this.#target) return;
    let current: FlatSettings;
    try {
      current = await b.read();
    } catch (err) {
      this.#log.debug(
        { event: 'sysproxy-guard-read-failed', err: (err as Error).message },
        'guard could not read the system proxy',
      );
      return;
    }
    if (matches(current, snap.applied)) return;
    let reapplied = false;
    if (reapply) {
      try {
        await b.write(snap.applied, current);
        reapplied = true;
      } catch (err) {
        this.#log.warn(
          { event: 'sysproxy-reapply-failed', err: (err as Error).message },
          'could not re-apply the system proxy',
        );
      }
    }
    this.#log.warn(
      { event: 'sysproxy-overridden', current: b.describe(current), reapplied },
      `another program changed the system proxy (to: ${b.describe(current)})${reapplied ? '; set it back' : ''}`,
    );
    this.#emit({ type: 'overridden', current: b.describe(current), reapplied });
  }

  #backend(): ProxyBackend {
    if (this.opts.backend) return this.opts.backend;
    throw (
      this.opts.unsupported ??
      new GatehopError(ErrorCodes.SYSPROXY_UNSUPPORTED, 'setting the system proxy is not supported here')
    );
  }

  #emit(ev: SysProxyEvent): void {
    this.#listeners.emit(ev);
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

/** The OS still has what Gatehop set (compared on the keys Gatehop wrote). */
function matches(current: FlatSettings, applied: FlatSettings): boolean {
  return Object.keys(applied).every((k) => (current[k] ?? null) === (applied[k] ?? null));
}

function wrap(err: unknown, what: string): GatehopError {
  if (err instanceof GatehopError) {
    const e = new GatehopError(err.code, `${what}: ${err.message}`, { cause: err });
    return e;
  }
  return new GatehopError(ErrorCodes.SYSPROXY_FAILED, `${what}: ${(err as Error).message}`, { cause: err });
}
