import { mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ignoreRejection, withDeadline } from '../core/common/index.js';
import { RESTORE_DEADLINE_MS } from '../core/app/index.js';
import type { AppApi, PowerMonitorApi, WindowApi } from './electron-api.js';

/** A stuck tunnel must not hang the quit: past this, the process exits anyway. */
export const SHUTDOWN_DEADLINE_MS = 8_000;

export { RESTORE_DEADLINE_MS };

/**
 * Crash records kept (`crash-<time>.log`, newest first); older ones are removed as a new one is
 * written, so a crash loop at every login cannot fill the folder.
 */
export const CRASH_RECORDS_KEPT = 10;

/** Where the process reports a fatal error (process.on('uncaughtException'), 'unhandledRejection'). */
export interface FatalEvents {
  on(event: 'uncaughtException' | 'unhandledRejection', fn: (err: unknown) => void): unknown;
}

export interface LifecycleOptions {
  /** How long stopping the core may take once the system proxy is restored. */
  deadlineMs?: number;
  /** How long the system proxy's restore may take (default RESTORE_DEADLINE_MS). */
  restoreDeadlineMs?: number;
  onSignal?: (sig: NodeJS.Signals, fn: () => void) => void;
  powerMonitor?: PowerMonitorApi;
  /** Fatal errors of the process (default: `process`). */
  fatalEvents?: FatalEvents;
  /** Crash records are written here (`crash-<time>.log`). */
  crashDir?: string;
  /**
   * Runs first on every way out, before the core stops and with the proxy still listening: put the
   * user's proxy settings back. It has its own deadline (restoreDeadlineMs), not the stop's.
   */
  restoreFirst?: () => Promise<unknown>;
}

/**
 * One shutdown, reached from every way out: the tray's Quit, the app menu / Dock / Cmd-Q
 * (before-quit), Windows session end (query-session-end, session-end: on the window, or on the
 * hidden session window when there is none), OS shutdown, SIGINT and SIGTERM. It restores the
 * system proxy first (restoreFirst, within restoreDeadlineMs, while the proxy still listens), then
 * runs `stop` (stop the core, flush the store) once and exits, by the stop's deadline at the latest.
 * A fatal error takes the same road: the crash is recorded and the process exits 1.
 */
export class Lifecycle {
  #stopping: Promise<void> | null = null;
  readonly #watched = new WeakSet<object>();
  exitCode: number | null = null;
  readonly reasons: string[] = [];
  /** The crash records written (paths). */
  readonly crashes: string[] = [];

  constructor(
    private readonly app: Pick<AppApi, 'on' | 'exit'>,
    private readonly stop: () => Promise<void>,
    private readonly opts: LifecycleOptions = {},
  ) {}

  /** Hooks every quit path. */
  install(): void {
    this.app.on('before-quit', (ev) => {
      if (this.exitCode !== null) return; // our own app.exit
      ev.preventDefault();
      this.#shutdownFrom('before-quit');
    });
    // The OS is going down (Linux, macOS): restore the proxy while we still can.
    this.opts.powerMonitor?.on('shutdown', () => this.#shutdownFrom('os-shutdown'));
    // A tray app keeps running with no window.
    this.app.on('window-all-closed', () => {});
    const onSignal = this.opts.onSignal ?? ((sig, fn) => process.once(sig, fn));
    for (const sig of ['SIGINT', 'SIGTERM'] as const) onSignal(sig, () => this.#shutdownFrom(sig));
    const fatal = this.opts.fatalEvents ?? process;
    // fatal() never rejects: every step in it is caught or bounded.
    fatal.on('uncaughtException', (err) => ignoreRejection(this.fatal(err, 'uncaughtException')));
    fatal.on('unhandledRejection', (err) => ignoreRejection(this.fatal(err, 'unhandledRejection')));
  }

  /**
   * Windows reports logoff and shutdown on windows (query-session-end, then session-end). Once per
   * window. At query-session-end the session's end is held (Electron: `preventDefault()` delays
   * it) until the system proxy is put back and the process exits, which ends the hold: bounded by
   * the restore's and the stop's deadlines. session-end cannot be held: the same shutdown, as far
   * as it gets.
   */
  watchWindow(win: Pick<WindowApi, 'on'>): void {
    if (this.#watched.has(win)) return;
    this.#watched.add(win);
    win.on('query-session-end', (ev) => {
      if (this.exitCode === null) ev.preventDefault();
      this.#shutdownFrom('query-session-end');
    });
    win.on('session-end', () => this.#shutdownFrom('session-end'));
  }

  get stopping(): boolean {
    return this.#stopping !== null;
  }

  /** A quit path's event: shutdown() never rejects (the stop's failure becomes exit code 1). */
  #shutdownFrom(reason: string): void {
    ignoreRejection(this.shutdown(reason));
  }

  shutdown(reason: string, exitCode = 0): Promise<void> {
    this.reasons.push(reason);
    this.#stopping ??= (async () => {
      const restored = await this.#restoreProxy();
      const outcome = await withDeadline(this.stop(), this.opts.deadlineMs ?? SHUTDOWN_DEADLINE_MS);
      this.exitCode = outcome === 'done' && restored ? exitCode : 1;
      this.app.exit(this.exitCode);
    })();
    return this.#stopping;
  }

  /** The system proxy put back, with the proxy still up; false when it failed or ran out of time. */
  async #restoreProxy(): Promise<boolean> {
    if (!this.opts.restoreFirst) return true;
    const outcome = await withDeadline(this.opts.restoreFirst(), this.opts.restoreDeadlineMs ?? RESTORE_DEADLINE_MS);
    return outcome === 'done';
  }

  /**
   * The one fatal-error path of the desktop process: record the crash, put the system proxy back
   * (before anything else can fail), then the normal stop, and exit 1.
   */
  async fatal(err: unknown, kind: string): Promise<void> {
    const at = new Date();
    if (this.opts.crashDir) {
      try {
        mkdirSync(this.opts.crashDir, { recursive: true });
        const file = join(this.opts.crashDir, `crash-${at.toISOString().replace(/[:.]/g, '-')}.log`);
        const text = err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ''}` : String(err);
        writeFileSync(file, `${at.toISOString()} ${kind}\n${text}\n`);
        this.crashes.push(file);
        pruneCrashRecords(this.opts.crashDir, CRASH_RECORDS_KEPT);
      } catch {
        /* a full disk must not stop the proxy from being restored */
      }
    }
    await this.shutdown(`fatal: ${kind}`, 1);
  }
}

/** Removes all but the newest `keep` crash records (their names sort by time). */
export function pruneCrashRecords(dir: string, keep: number): void {
  const records = readdirSync(dir)
    .filter((f) => /^crash-.*\.log$/.test(f))
    .sort()
    .reverse();
  for (const old of records.slice(keep)) unlinkSync(join(dir, old));
}
