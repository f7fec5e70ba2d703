import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildConfig,
  loadSavedSettings,
  readConfigFile,
  resolveConfig,
  startApp,
  type ConfigInput,
  type RunningApp,
} from '../core/app/index.js';
import type { DesktopAccess, Settings } from '../core/api/index.js';
import { translate, type Language } from '../core/api/catalog/index.js';
import { openLogger, ErrorCodes, errorToJson, GatehopError, type LogTap } from '../core/common/index.js';
import type { ElectronApi } from './electron-api.js';

/** The desktop app's config file: the same YAML as `gatehop --config`, in the data folder. */
export function desktopConfigPath(dataDir: string): string {
  return join(dataDir, 'gatehop.yaml');
}

/** Why a start failed, as far as the user can do something about it. */
export type StartFailure = 'port-in-use' | 'settings' | 'other';

/**
 * `saved`: the settings the user saved in the window. Only what they saved can be reset away: an
 * auth file they chose that cannot be read, a config their settings made invalid. A corrupt
 * database, a permission error or a full disk is not fixed by deleting their settings.
 */
export function classifyStartError(err: unknown, saved: Partial<Settings>): StartFailure {
  const { code, message } = errorToJson(err);
  if (code === ErrorCodes.LISTEN_FAILED || /EADDRINUSE|address already in use/.test(message)) return 'port-in-use';
  // The user's own gatehop.yaml is theirs to fix (Open data folder shows it), not a reason to reset the window's settings.
  if (code === ErrorCodes.CONFIG_INVALID && message.includes('gatehop.yaml')) return 'other';
  if (code === ErrorCodes.AUTH_FILE_INVALID && typeof saved.authFile === 'string') return 'settings';
  if (code === ErrorCodes.CONFIG_INVALID && Object.keys(saved).length > 0) return 'settings';
  return 'other';
}

/**
 * startApp with the desktop defaults (VPN Gate, the admin API on loopback for the dashboard, the
 * data directory in userData). A core that cannot start says what failed and offers what fixes
 * it: another port when the port is taken, a reset only when the saved settings are to blame, and
 * otherwise the data folder (where the log is). Returns null when the user quits.
 */
export async function startCore(
  e: Pick<ElectronApi, 'dialog' | 'shell'>,
  dataDir: string,
  logTap: LogTap,
  extra: ConfigInput,
  language: () => Language,
  desktop: DesktopAccess | null = null,
): Promise<RunningApp | null> {
  let fromFlags: ConfigInput = { dataDir, egress: 'vpngate', ...extra };
  const settingsFile = join(dataDir, 'settings.json');
  const configFile = desktopConfigPath(dataDir);
  const t = (key: string): string => translate(language(), `shell.dialog.${key}`);
  for (;;) {
    try {
      // What the window has no setting for (an upstream proxy, rule providers, honesty pages …)
      // goes in gatehop.yaml in the data folder, read at every start; one that does not validate
      // is reported with its line, and "Open data folder" shows the file.
      const fromFile: ConfigInput = existsSync(configFile) ? readConfigFile(configFile) : {};
      try {
        buildConfig(fromFile, { dataDir });
      } catch (err) {
        throw new GatehopError(ErrorCodes.CONFIG_INVALID, `${configFile}: ${errorToJson(err).message}`, { cause: err });
      }
      const config = resolveConfig(fromFile, fromFlags);
      const logger = await openLogger({ level: config.logLevel, file: config.logFile, tap: logTap, pretty: false });
      // Crash recovery of the system proxy runs first thing inside startApp, before the tray exists.
      return await startApp(
        config.admin ? config : buildConfig(fromFile, { ...fromFlags, admin: '127.0.0.1:0' }),
        logger,
        { logTap, layers: { fromFile, fromFlags }, desktop },
      );
    } catch (err) {
      const why = classifyStartError(err, loadSavedSettings(dataDir));
      const buttons =
        why === 'port-in-use'
          ? [t('otherPort'), t('quit')]
          : why === 'settings'
            ? [t('resetSettings'), t('quit')]
            : [t('openDataFolder'), t('quit')];
      const lead = why === 'port-in-use' ? t('portInUse') : why === 'settings' ? t('settingsInvalid') : t('otherError');
      const { response } = await e.dialog.showMessageBox({
        type: 'error',
        title: t('startFailed'),
        message: t('startFailed'),
        detail: `${lead}\n\n${errorToJson(err).message}`,
        buttons,
        defaultId: 0,
        cancelId: 1,
      });
      if (response !== 0) return null;
      if (why === 'port-in-use') fromFlags = { ...fromFlags, listen: '127.0.0.1:0', admin: '127.0.0.1:0' };
      // Set aside, not deleted: what the user had is still there to look at.
      else if (why === 'settings') renameSync(settingsFile, `${settingsFile}.reset-${Date.now()}`);
      else {
        await e.shell.openPath(dataDir);
        return null;
      }
    }
  }
}
