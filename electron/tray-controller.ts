import type { ElectronApi, MenuItemOptions, TrayApi } from './electron-api.js';
import { trayIconPath } from './icons.js';
import { buildTrayMenu, iconStateOf, tooltipOf, type TrayActions, type TrayState } from './tray-menu.js';

/** Rebuilds at most this often: rapid setContextMenu/setImage calls are dropped by some shells. */
export const TRAY_MIN_INTERVAL_MS = 500;

/** A menu template as data (its click handlers left out): two equal keys are the same menu to the user. */
export function templateKey(items: readonly MenuItemOptions[]): string {
  return JSON.stringify(items, (k, v: unknown) => (k === 'click' ? undefined : v));
}

/**
 * Owns the Tray: its image per state, tooltip and menu. The menu is replaced only when what it
 * shows changed (on Linux and Windows a menu replaced while open flickers or closes under the
 * pointer, and a status event comes every 2 s), at most twice a second, the latest state winning.
 * Tooltip and image likewise. The context menu is always attached, so no action depends on a click
 * on the icon (AppIndicator on Linux drops those); on Windows a left click opens the window, as
 * Windows tray icons do.
 */
export class TrayController {
  #tray: TrayApi | null = null;
  #state: TrayState;
  #lastBuildAt = 0;
  #pending: NodeJS.Timeout | null = null;
  #lastIcon = '';
  #lastTooltip = '';
  #lastMenu = '';
  /** Rebuild passes (rate-limited). */
  builds = 0;
  /** Menus actually handed to the OS (only when the template changed). */
  menus = 0;

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
    if (this.platform === 'win32') this.#tray.on('click', () => this.actions.openWindow());
    // The taskbar's theme can change while we run (Windows), and with it the icon that shows on it.
    this.e.nativeTheme.on('updated', () => this.update({}));
    this.#build();
  }

  update(patch: Partial<TrayState>): void {
    this.#state = { ...this.#state, ...patch };
    if (!this.#tray) return;
    const wait = this.#lastBuildAt + TRAY_MIN_INTERVAL_MS - this.now();
    if (wait <= 0 && !this.#pending) return this.#build();
    this.#pending ??= setTimeout(
      () => {
        this.#pending = null;
        this.#build();
      },
      Math.max(0, wait),
    );
  }

  destroy(): void {
    if (this.#pending) clearTimeout(this.#pending);
    this.#pending = null;
    if (this.#tray && !this.#tray.isDestroyed()) this.#tray.destroy();
    this.#tray = null;
  }

  /**
   * Windows: the icon sits on the taskbar, whose theme can differ from the apps' (a dark taskbar
   * with light apps is the default): it follows the taskbar. Elsewhere the system's colours.
   */
  #dark(): boolean {
    const t = this.e.nativeTheme;
    return this.platform === 'win32' ? t.shouldUseDarkColorsForSystemIntegratedUI : t.shouldUseDarkColors;
  }

  #iconFor(s: TrayState): string {
    return trayIconPath(this.assetsDir, iconStateOf(s), this.platform, this.#dark());
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
    const tooltip = tooltipOf(this.#state);
    if (tooltip !== this.#lastTooltip) {
      tray.setToolTip(tooltip);
      this.#lastTooltip = tooltip;
    }
    const template = buildTrayMenu(this.#state, this.actions, this.platform);
    const key = templateKey(template);
    if (key === this.#lastMenu) return;
    this.#lastMenu = key;
    this.menus++;
    tray.setContextMenu(this.e.Menu.buildFromTemplate(template));
  }
}
