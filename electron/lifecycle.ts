import type { AppApi, PowerMonitorApi, WindowApi } from './electron-api.js';

/** A stuck tunnel must not hang the quit: past this, the process exits anyway. */
export const SHUTDOWN_DEADLINE_MS = 8_000;

/**
 * One shutdown, reached from every way out: the tray's Quit, the app menu / Dock / Cmd-Q
 * (before-quit), Windows session end (query-session-end, session-end), SIGINT and SIGTERM. It
 * runs `stop` (restore the system proxy, stop the core, flush the store) once, then exits, by the
 * deadline at the latest.
 */
export class Lifecycle {
  #stopping: Promise<void> | null = null;
  exitCode: number | null = null;
  readonly reasons: string[] = [];

  constructor(
    private readonly app: Pick<AppApi, 'on' | 'exit'>,
    private readonly stop: () => Promise<void>,
    private readonly opts: { deadlineMs?: number; onSignal?: (sig: NodeJS.Signals, fn: () => void) => void; powerMonitor?: PowerMonitorApi } = {},
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
  }

  /** Windows reports logoff / shutdown on windows (query-session-end, then session-end). */
  watchWindow(win: Pick<WindowApi, 'on'>): void {
    win.on('query-session-end', () => void this.shutdown('query-session-end'));
    win.on('session-end', () => void this.shutdown('session-end'));
  }

  get stopping(): boolean {
    return this.#stopping !== null;
  }

  shutdown(reason: string): Promise<void> {
    this.reasons.push(reason);
    this.#stopping ??= (async () => {
      let timer: NodeJS.Timeout | null = null;
      const deadline = new Promise<'deadline'>((r) => {
        timer = setTimeout(() => r('deadline'), this.opts.deadlineMs ?? SHUTDOWN_DEADLINE_MS);
      });
      const outcome = await Promise.race([this.stop().then(() => 'stopped' as const, () => 'failed' as const), deadline]);
      if (timer) clearTimeout(timer);
      this.exitCode = outcome === 'stopped' ? 0 : 1;
      this.app.exit(this.exitCode);
    })();
    return this.#stopping;
  }
}
