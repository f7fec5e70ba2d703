import { join } from 'node:path';
import type { TrayIconState } from './tray-menu.js';

/**
 * The tray image for a state, per platform: macOS takes monochrome template images (the OS tints
 * them; "Template" in the name), Windows a light or dark variant by the taskbar's theme, Linux a
 * 32 px colour PNG (@2x files sit beside each for HiDPI). Generated from assets/*.svg by
 * scripts/make-icons.mjs and committed.
 */
export function trayIconPath(
  assetsDir: string,
  state: TrayIconState,
  platform: NodeJS.Platform,
  dark: boolean,
): string {
  if (platform === 'darwin') return join(assetsDir, 'tray', `tray-${state}Template.png`);
  if (platform === 'win32') return join(assetsDir, 'tray', `tray-${state}-${dark ? 'dark' : 'light'}.ico`);
  return join(assetsDir, 'tray', `tray-${state}-32.png`);
}
