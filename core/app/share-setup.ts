import type { Logger } from '../common/index.js';
import type { ProxyOptions, ProxyServer } from '../proxy/index.js';
import { ShareService, type DeviceKeeper } from '../share/index.js';
import type { Store } from '../store/index.js';
import type { GatehopConfig } from './config.js';

/** The store key of the window's share switch (over config share.enabled once used). */
const SHARE_SWITCH_KEY = 'share.enabled';

/**
 * "Share with this network" (#63) for this core: its devices kept in the store (memory only
 * without one: `--egress direct`), its switch remembered there, its listener a ProxyServer on the
 * same egress and routing as the main one, with the main one's limits. Turned on here when the
 * switch (or the config) says so; a port that cannot be bound is said in its view and the log,
 * and does not stop the core.
 */
export async function startShare(
  config: GatehopConfig,
  current: () => GatehopConfig,
  store: Store | null,
  makeServer: (options: ProxyOptions) => ProxyServer,
  logger: Logger,
): Promise<ShareService> {
  const keeper: DeviceKeeper | null = store
    ? {
        load: () => store.shareDevices(),
        save: (d) => store.saveShareDevice(d),
        remove: (id) => store.removeShareDevice(id),
      }
    : null;
  const share = new ShareService({
    port: config.share.port,
    keeper,
    makeServer,
    limits: () => {
      const { allowFrom: _allowFrom, ...limits } = current().proxy;
      return limits;
    },
    onEnabledChange: (on) => store?.setSetting(SHARE_SWITCH_KEY, on ? '1' : '0'),
    logger,
  });
  const remembered = store?.setting(SHARE_SWITCH_KEY) ?? null;
  if (remembered === null ? config.share.enabled : remembered === '1') await share.setEnabled(true);
  return share;
}
