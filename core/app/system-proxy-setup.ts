import { join } from 'node:path';
import type { SystemProxyControl } from '../api/index.js';
import { isGatehopError, type Endpoint, type Logger } from '../common/index.js';
import type { Store } from '../store/index.js';
import {
  detectBackend,
  execRunner,
  SnapshotKeeper,
  SystemProxy,
  pacUrlOf,
  type ProxyTarget,
  type RecoverOutcome,
  type SnapshotMirror,
  type SysProxySnapshot,
} from '../sysproxy/index.js';
import type { GatehopConfig } from './config.js';

/** The snapshot's second copy lives in the store's system_proxy_snapshot table. */
function storeMirror(store: Store): SnapshotMirror {
  return {
    save: (s: SysProxySnapshot) => store.saveProxySnapshot(s),
    load: () => store.loadProxySnapshot<unknown>(),
    clear: () => store.clearProxySnapshot(),
  };
}

/** The address other programs use to reach the proxy: a wildcard listen address means loopback. */
export function proxyTarget(listen: Endpoint, config: GatehopConfig): ProxyTarget {
  const host = listen.host === '0.0.0.0' ? '127.0.0.1' : listen.host === '::' ? '::1' : listen.host;
  return {
    host,
    port: listen.port,
    bypass: config.systemProxy.bypass,
    ...(config.systemProxy.pac ? { pacUrl: pacUrlOf(host, listen.port) } : {}),
  };
}

/** One SystemProxy for this platform (backend null where none exists: its calls say why). */
export function createSystemProxy(
  config: GatehopConfig,
  logger: Logger,
  store: Store | null,
  killSwitch: () => boolean = () => config.systemProxy.killSwitch,
): SystemProxy {
  const keeper = new SnapshotKeeper(
    join(config.dataDir, 'sysproxy-snapshot.json'),
    logger,
    store ? storeMirror(store) : null,
  );
  const guard = { intervalMs: config.systemProxy.guardIntervalMs, reapply: config.systemProxy.guard };
  try {
    return new SystemProxy({
      backend: detectBackend(execRunner, proxyTarget(config.listen, config)),
      keeper,
      logger,
      guard,
      killSwitch,
    });
  } catch (err) {
    if (!isGatehopError(err)) throw err;
    return new SystemProxy({ backend: null, unsupported: err, keeper, logger, guard, killSwitch });
  }
}

/**
 * Crash recovery at start; a failure is logged, never fatal (the proxy itself still works).
 * 'held': the kill switch kept what a Gatehop before this one left; the caller points it here.
 */
export async function recoverSystemProxy(
  sp: SystemProxy,
  config: GatehopConfig,
  logger: Logger,
): Promise<RecoverOutcome | 'failed'> {
  if (!sp.supported) return 'nothing';
  try {
    return await sp.recover(proxyTarget(config.listen, config));
  } catch (err) {
    logger.error(
      { event: 'sysproxy-recover-failed', err: (err as Error).message },
      `could not check the system proxy at start: ${(err as Error).message}`,
    );
    return 'failed';
  }
}

/** The admin API's view of the OS proxy: its state, and on/off (apply / restore). */
export function systemProxyControl(sp: SystemProxy, target: () => ProxyTarget): SystemProxyControl {
  const state = async () => {
    const st = await sp.status();
    return { supported: st.supported, backend: st.backend, current: st.current, enabled: st.enabled, error: st.error };
  };
  return {
    state,
    async setEnabled(enabled) {
      if (enabled) await sp.apply(target());
      else await sp.restore({ onlyOwn: true });
      return state();
    },
    onEvent: (fn) =>
      sp.onEvent((e) => {
        const message =
          e.type === 'applied'
            ? `system proxy set to ${e.target}`
            : e.type === 'restored'
              ? `system proxy restored to: ${e.to}`
              : e.type === 'left-alone'
                ? `the system proxy was changed by someone else; left as it is (${e.current})`
                : e.type === 'recovered'
                  ? `system proxy recovered after a crash: ${e.to}`
                  : e.type === 'held'
                    ? `kill switch: the system proxy stays pointed at Gatehop (${e.target})`
                    : `another program changed the system proxy (${e.current})${e.reapplied ? '; set it back' : ''}`;
        fn({ type: e.type, message });
      }),
  };
}
