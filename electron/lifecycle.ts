import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppApi, PowerMonitorApi, WindowApi } from './electron-api.js';

/** A stuck tunnel must not hang the quit: past this, the process exits anyway. */
export const SHUTDOWN_DEADLINE_MS = 8_000;

/** Where the process reports a fatal error (process.on('uncaughtException'), 'unhandledRejection'). */
export interface FatalEvents {
  on(event: 'uncaughtException' | 'unhandledRejection', fn: (err: unknown) => void): unknown;
}

export interface LifecycleOptions {
  deadlineMs?: number;
  onSignal?: (sig: NodeJS.Signals, fn: () => void) => void;
  powerMonitor?: PowerMonitorApi;
  /** Fatal errors of the process (default: `process`). */
  fatalEvents?: FatalEvents;
  /** Crash records are written here (`crash-<time>.log`). */
  crashDir?: string;
  /** Runs first on a fatal error, before the normal stop: put the user's proxy settings back. */
  restoreFirst?: () => Promise<unknown>;
}

/**
 * One shutdown, reached from every way out: the tray's Quit, the app menu / Dock / Cmd-Q
 * (before-quit), Windows session end (query-session-end, session-end: on the window, or on the
 * hidden session window when there is none), OS shutdown, SIGINT and SIGTERM. It runs `stop`
 * (restore the system proxy, stop the core, flush the store) once, then exits, by the deadline at
 * the latest. A fatal error takes the same road: the crash is recorded, the system proxy put back
 * first, and the process exits 1.
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
      void this.shutdown('before-quit');
    });
    // The OS is going down (Linux, macOS): restore the proxy while we still can.
    this.opts.powerMonitor?.on('shutdown', () => void this.shutdown('os-shutdown'));
    // A tray app keeps running with no window.
    this.app.on('window-all-closed', () => {});
    const onSignal = this.opts.onSignal ?? ((sig, fn) => process.once(sig, fn));
    for (const sig of ['SIGINT', 'SIGTERM'] as const) onSignal(sig, () => void this.shutdown(sig));
    const fatal = this.opts.fatalEvents ?? process;
    fatal.on('uncaughtException', (err) => void this.fatal(err, 'uncaughtException'));
    fatal.on('unhandledRejection', (err) => void this.fatal(err, 'unhandledRejection'));
  }

  /** Windows reports logoff and shutdown on windows (query-session-end, then session-end). Once per window. */
  watchWindow(win: Pick<WindowApi, 'on'>): void {
    if (this.#watched.has(win)) return;
    this.#watched.add(win);
    win.on('query-session-end', () => void this.shutdown('query-session-end'));
    win.on('session-end', () => void this.shutdown('session-end'));
  }

  get stopping(): boolean {
    return this.#stopping !== null;
  }

  shutdown(reason: string, exitCode = 0): Promise<void> {
    this.reasons.push(reason);
    this.#stopping ??= (async () => {
      let timer: NodeJS.Timeout | null = null;
      const deadline = new Promise<'deadline'>((r) => {
        timer = setTimeout(() => r('deadline'), this.opts.deadlineMs ?? SHUTDOWN_DEADLINE_MS);
      });
      const outcome = await Promise.race([
        this.stop().then(
          () => 'stopped' as const,
          () => 'failed' as const,
        ),
        deadline,
      ]);
      if (timer) clearTimeout(timer);
      this.exitCode = outcome === 'stopped' ? exitCode : 1;
      this.app.exit(this.exitCode);
    })();
    return this.#stopping;
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
      } catch {
        /* a full disk must not stop the proxy from being restored */
      }
    }
    if (!this.#stopping && this.opts.restoreFirst) {
      await Promise.race([
        this.opts.restoreFirst().catch(() => undefined),
        new Promise((r) => setTimeout(r, 3_000).unref()),
      ]);
    }
    await this.shutdown(`fatal: ${kind}`, 1);
  }
}
