import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../core/common/index.js';
import type { ElectronApi, WindowApi } from './electron-api.js';

/** The window's page: the renderer build, served by our own privileged scheme (never a remote URL). */
export const APP_SCHEME = 'gatehop';
export const APP_ORIGIN = `${APP_SCHEME}://app`;
export const APP_URL = `${APP_ORIGIN}/index.html`;

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

/**
 * Owns the one BrowserWindow: created on first open, shown and focused after; closing hides it
 * (the first time, the notifier says Gatehop keeps running in the tray). Bounds are remembered in
 * a small JSON file. Navigation, window.open and permission requests are refused.
 */
export class WindowController {
  #win: WindowApi | null = null;
  #quitting = false;
  #toldAboutTray = false;

  constructor(
    private readonly e: Pick<ElectronApi, 'BrowserWindow' | 'shell'>,
    private readonly opts: { preload: string; boundsFile: string; onFirstHide: () => void },
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
      if (view) void existing.loadURL(`${APP_URL}#view=${view}`);
      return existing;
    }
    const bounds = this.#loadBounds();
    const win = new this.e.BrowserWindow({
      ...bounds,
      minWidth: 640,
      minHeight: 480,
      show: false,
      title: 'Gatehop',
      backgroundColor: '#14171c',
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
      if (/^https:\/\//.test(url)) void this.e.shell.openExternal(url);
      return { action: 'deny' };
    });
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
    void win.loadURL(APP_URL + (view ? `#view=${view}` : ''));
    return win;
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

  #loadBounds(): Bounds {
    try {
      const b = JSON.parse(readFileSync(this.opts.boundsFile, 'utf8')) as Bounds;
      if (Number.isFinite(b.width) && Number.isFinite(b.height) && b.width >= 640 && b.height >= 480) return { x: b.x, y: b.y, width: b.width, height: b.height };
    } catch {
      /* first start or unreadable: defaults */
    }
    return { width: 1100, height: 720 };
  }

  #saveBounds(win: WindowApi): void {
    try {
      writeFileAtomic(this.opts.boundsFile, JSON.stringify(win.getBounds()));
    } catch {
      /* a window that forgets its place is not worth an error */
    }
  }
}
