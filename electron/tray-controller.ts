import type { ElectronApi, TrayApi } from './electron-api.js';
import { trayIconPath } from './icons.js';
import { buildTrayMenu, iconStateOf, tooltipOf, type TrayActions, type TrayState } from './tray-menu.js';

/** Menu rebuilds at most this often: rapid setContextMenu/setImage calls are dropped by some shells. */
export const TRAY_MIN_INTERVAL_MS = 500;

/**
 * Owns the Tray: its image per state, tooltip and menu, rebuilt when state changes but at most
 * twice a second (the last state always wins: a trailing rebuild is scheduled). The context menu
 * is always attached, so no action depends on a click event (AppIndicator on Linux drops them).
 */
export class TrayController {
  #tray: TrayApi | null = null;
  #state: TrayState;
  #lastBuildAt = 0;
  #pending: NodeJS.Timeout | null = null;
  #lastIcon = '';
  builds = 0;

  constructor(
    private readonly e: Pick<ElectronApi, 'Tray' | 'Menu' | 'nativeImage' | 'nativeTheme'>,
    private readonly assetsDir: string,
    private readonly actions: TrayActions,
    initial: TrayState,
    private readonly platform: NodeJS.Platform = process.platform,
    private readonly now: () => number = Date.now,
  ) {
    this.#state = initial;
  }

  get state(): TrayState {
    return this.#state;
  }

  create(): void {
    if (this.#tray) return;
    this.#tray = new this.e.Tray(this.e.nativeImage.createFromPath(this.#iconFor(this.#state)));
    this.#build();
  }

  update(patch: Partial<TrayState>): void {
    this.#state = { ...this.#state, ...patch };
    if (!this.#tray) return;
    const wait = this.#lastBuildAt + TRAY_MIN_INTERVAL_MS - this.now();
    if (wait <= 0 && !this.#pending) return this.#build();
    this.#pending ??= setTimeout(() => {
      this.#pending = null;
      this.#build();
    }, Math.max(0, wait));
  }

  destroy(): void {
    if (this.#pending) clearTimeout(this.#pending);
    this.#pending = null;
    if (this.#tray && !this.#tray.isDestroyed()) this.#tray.destroy();
    this.#tray = null;
  }

  #iconFor(s: TrayState): string {
    return trayIconPath(this.assetsDir, iconStateOf(s), this.platform, this.e.nativeTheme.shouldUseDarkColors);
  }

  #build(): void {
    const tray = this.#tray;
    if (!tray || tray.isDestroyed()) return;
    this.#lastBuildAt = this.now();
    this.builds++;
    const icon = this.#iconFor(this.#state);
    if (icon !== this.#lastIcon) {
      tray.setImage(this.e.nativeImage.createFromPath(icon));
      this.#lastIcon = icon;
    }
    tray.setToolTip(tooltipOf(this.#state));
    tray.setContextMenu(this.e.Menu.buildFromTemplate(buildTrayMenu(this.#state, this.actions)));
  }
}
