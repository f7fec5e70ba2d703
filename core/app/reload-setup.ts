import type { SettingsAccess } from '../api/index.js';
import {
  ErrorCodes,
  formatEndpoint,
  GatehopError,
  parseEndpoint,
  type Endpoint,
  type Logger,
} from '../common/index.js';
import type { SystemProxy } from '../sysproxy/index.js';
import type { ConfigInput, GatehopConfig } from './config.js';
import { applyConfig, type ReloadOutcome, type ReloadTargets } from './reload.js';
import { resolveConfig, SettingsFile } from './settings-file.js';
import { proxyTarget } from './system-proxy-setup.js';

/** The config file's and the command line's layers a config was built from. */
export interface ConfigLayers {
  fromFile: ConfigInput;
  fromFlags: ConfigInput;
}

export interface ReloaderOptions {
  /** The layers the running config came from (absent: nothing to reload from, no settings). */
  layers: ConfigLayers | null;
  /** Reads the layers again (the CLI re-reads its config file); default: `layers` as they are. */
  readLayers?: (() => ConfigLayers) | undefined;
  /** The running config and where the proxy listens. */
  state: () => { config: GatehopConfig; proxyAt: Endpoint };
  /** A reload went through: the new config and where the proxy listens now. */
  commit: (next: GatehopConfig, proxyAt: Endpoint) => void;
  targets: () => ReloadTargets;
  systemProxy: SystemProxy;
  logger: Logger;
}

/**
 * Reloading the config (SIGHUP, `POST /reload`) and the window's settings, which apply like one:
 * one reload at a time, refused whole when the new config does not validate (the running one
 * stays), the OS proxy setting moved with the proxy, what cannot change live said as needing a
 * restart.
 */
export function configReloader(o: ReloaderOptions): {
  reload: () => Promise<ReloadOutcome>;
  settings: SettingsAccess | null;
} {
  const settingsFile = o.layers ? new SettingsFile(o.state().config, o.layers, o.logger) : null;
  let layers = o.layers;
  let reloading: Promise<unknown> = Promise.resolve();
  const reloadNow = async (): Promise<ReloadOutcome> => {
    const nextLayers = o.readLayers?.() ?? layers;
    if (!nextLayers)
      throw new GatehopError(
        ErrorCodes.CONFIG_INVALID,
        'this core was started without config layers; nothing to reload from',
      );
    const next = resolveConfig(nextLayers.fromFile, nextLayers.fromFlags, o.logger);
    const { config: current, proxyAt: before } = o.state();
    const out = await applyConfig(o.targets(), current, next, o.logger);
    const moved = out.listen !== formatEndpoint(before);
    const proxyAt = parseEndpoint(out.listen, 'listen');
    o.commit(next, proxyAt);
    layers = nextLayers;
    // The OS must follow the proxy to its new address, or the user is left pointing at a closed port.
    if (moved && (await o.systemProxy.status().catch(() => null))?.enabled) {
      await o.systemProxy
        .apply(proxyTarget(proxyAt, next))
        .catch((err: Error) => o.logger.error({ event: 'sysproxy-apply-failed', err: err.message }, err.message));
    }
    settingsFile?.rebase(next, nextLayers);
    return out;
  };
  const reload = (): Promise<ReloadOutcome> => {
    const run = reloading.then(reloadNow, reloadNow);
    reloading = run.catch(() => undefined);
    return run.catch((err: unknown) => {
      o.logger.warn(
        { event: 'config-reload-refused', err: (err as Error).message },
        `config reload refused, the running config stays: ${(err as Error).message}`,
      );
      throw err;
    });
  };
  // Settings saved in the window apply like a reload; what still differs needs a restart.
  const settings: SettingsAccess | null = settingsFile && {
    get: () => settingsFile.get(),
    update: async (patch) => {
      const saved = settingsFile.update(patch);
      // Saved either way; a value the running core cannot take now (a port in use) waits for a restart.
      await reload().catch(() => undefined);
      return {
        settings: saved.settings,
        restartRequired: settingsFile.restartRequiredFor(Object.keys(patch) as Array<keyof typeof patch>),
      };
    },
  };
  return { reload, settings };
}
