import { readFileSync } from 'node:fs';
import { detach, writeFileAtomic, type DetachLog } from '../core/common/index.js';
import type { ElectronApi, WindowApi } from './electron-api.js';

/** The window's page: the renderer build, served by our own privileged scheme (never a remote URL). */
export const APP_SCHEME = 'gatehop';
export const APP_ORIGIN = `${APP_SCHEME}://app`;
export const APP_URL = `${APP_ORIGIN}/index.html`;
/** What a window whose renderer keeps crashing shows instead of a blank page (app-protocol.ts serves it). */
export const CRASHED_URL = `${APP_ORIGIN}/crashed.html`;

/** A second renderer crash within this long is not reloaded again. */
export const CRASH_WINDOW_MS = 60_000;

/** What the window runs with; a test checks these exact values. */
export const WEB_PREFERENCES = Object.freeze({
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  webviewTag: false,
  spellcheck: false,
});

export interface Bounds {
  x?: number;
  y?: number;
  width: number;
  height: number;
}

export interface WindowControllerOptions {
  preload: string;
  boundsFile: string;
  onFirstHide: () => void;
  /** Once per window, when it is created (the lifecycle watches it for session end). */
  onCreated?: (win: WindowApi) => void;
  /** The renderer crashed again soon after a reload: the window now shows an error page. */
  onCrashedTwice?: (reason: string) => void;
  /** Where a failed page load or external link is reported (none: the console). */
  log?: DetachLog;
  /** The window's background before its page paints: the theme's, so a light desktop gets no dark flash. */
  background?: () => string;
  now?: () => number;
}

/**
 * Owns the one BrowserWindow: created on first open, shown and focused after; closing hides it
 * (the first time, the notifier says Gatehop keeps running in the tray). Bounds are remembered in
 * a small JSON file and used only if they are on a display that is still connected. Navigation,
 * window.open and permission requests are refused. A crashed renderer is reloaded once; a second
 * crash within a minute shows an error page (not a blank window) and tells the shell.
 */
export class WindowController {
  #win: WindowApi | null = null;
  #quitting = false;
  #toldAboutTray = false;
  #opens = 0;
  #lastCrashAt = -Infinity;

  constructor(
    private readonly e: Pick<ElectronApi, 'BrowserWindow' | 'shell' | 'screen'>,
    private readonly opts: WindowControllerOptions,
  ) {}

  get window(): WindowApi | null {
    return this.#win && !this.#win.isDestroyed() ? this.#win : null;
  }

  open(view?: string): WindowApi {
    const existing = this.window;
    if (existing) {
      if (existing.isMinimized()) existing.restore();
      existing.show();
      existing.focus();
      // A fragment change is an in-page navigation: the renderer switches view without reloading.
      // The counter makes every open a change, so "More…" works when the window shows that view already.
      if (view) this.#load(existing, `${APP_URL}#view=${view}&open=${++this.#opens}`);
      return existing;
    }
    const bounds = this.#loadBounds();
    const win = new this.e.BrowserWindow({
      ...bounds,
      minWidth: 640,
      minHeight: 480,
      show: false,
      title: 'Gatehop',
      backgroundColor: this.opts.background?.() ?? '#14171c',
      autoHideMenuBar: true,
      webPreferences: { ...WEB_PREFERENCES, preload: this.opts.preload },
    });
    this.#win = win;
    const wc = win.webContents;
    // Only our own page: any navigation elsewhere and every window.open are refused; links to the web open in the browser.
    wc.on('will-navigate', (ev, url) => {
      if (!url.startsWith(APP_ORIGIN)) ev.preventDefault();
    });
    wc.on('will-redirect', (ev, url) => {
      if (!url.startsWith(APP_ORIGIN)) ev.preventDefault();
    });
    wc.setWindowOpenHandler(({ url }) => {
      if (/^https:\/\//.test(url)) this.#report('open-external', this.e.shell.openExternal(url));
      return { action: 'deny' };
    });
    wc.on('render-process-gone', (_ev, details) => this.#crashed(win, details.reason));
    win.on('close', (ev) => {
      if (this.#quitting) return;
      ev.preventDefault();
      this.#saveBounds(win);
      win.hide();
      if (!this.#toldAboutTray) {
        this.#toldAboutTray = true;
        this.opts.onFirstHide();
      }
    });
    win.once('ready-to-show', () => win.show());
    this.opts.onCreated?.(win);
    this.#load(win, APP_URL + (view ? `#view=${view}` : ''));
    return win;
  }

  /**
   * Loads a page into the window. A load that fails (a navigation superseded by the next one, a
   * window closed mid-load) is reported, not left to the process's fatal handler.
   */
  #load(win: WindowApi, url: string): void {
    this.#report('window-load', win.loadURL(url));
  }

  #report(event: string, work: Promise<unknown>): void {
    detach(this.opts.log ?? { error: (obj, msg) => console.error(msg, obj) }, event, work);
  }

  /** Lets the window really close (quitting). */
  prepareQuit(): void {
    this.#quitting = true;
    const w = this.window;
    if (w) this.#saveBounds(w);
  }

  destroy(): void {
    this.prepareQuit();
    this.window?.destroy();
    this.#win = null;
  }

  #crashed(win: WindowApi, reason: string): void {
    if (this.#quitting || win.isDestroyed() || reason === 'clean-exit') return;
    const now = (this.opts.now ?? Date.now)();
    const again = now - this.#lastCrashAt < CRASH_WINDOW_MS;
    this.#lastCrashAt = now;
    if (!again) {
      win.webContents.reload();
      return;
    }
    this.#load(win, CRASHED_URL);
    this.opts.onCrashedTwice?.(reason);
  }

  #loadBounds(): Bounds {
    const fallback = { width: 1100, height: 720 };
    let b: Bounds;
    try {
      b = JSON.parse(readFileSync(this.opts.boundsFile, 'utf8')) as Bounds;
    } catch {
      return fallback; // first start or unreadable
    }
    if (!Number.isFinite(b.width) || !Number.isFinite(b.height) || b.width < 640 || b.height < 480) return fallback;
    if (b.x === undefined || b.y === undefined) return { width: b.width, height: b.height };
    // A window saved on a display that is gone (a laptop off its dock) opens centred on one that is there.
    const visible = this.e.screen
      .getAllDisplays()
      .some(
        ({ workArea: w }) =>
          b.x! + 100 <= w.x + w.width && b.x! + b.width - 100 >= w.x && b.y! >= w.y - 10 && b.y! + 40 <= w.y + w.height,
      );
    return visible ? { x: b.x, y: b.y, width: b.width, height: b.height } : { width: b.width, height: b.height };
  }

  #saveBounds(win: WindowApi): void {
    try {
      writeFileAtomic(this.opts.boundsFile, JSON.stringify(win.getBounds()));
    } catch {
      /* a window that forgets its place is not worth an error */
    }
  }
}
