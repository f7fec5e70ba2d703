import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, errorToJson } from '../../common/index.js';
import { Store } from '../../store/index.js';
import { createSystemProxy } from '../system-proxy-setup.js';
import { fail, subcommandConfig } from './cli-support.js';

/** `gatehop sysproxy status|restore`: what the OS proxy setting is, and the one Gatehop saved before changing it. */
export async function sysproxyCommand(
  action: 'status' | 'restore',
  opts: { dataDir?: string; config?: string; listen?: string },
): Promise<void> {
  const config = subcommandConfig(opts);
  const logger = createLogger({ level: 'warn', file: null });
  const store = existsSync(join(config.dataDir, 'gatehop.db'))
    ? new Store({ path: join(config.dataDir, 'gatehop.db'), logger })
    : null;
  const sp = createSystemProxy(config, logger, store);
  try {
    if (action === 'status') {
      const st = await sp.status();
      const lines = [
        `backend:  ${st.backend ?? 'none'}`,
        `now:      ${st.current ?? `unknown${st.error ? ` (${st.error})` : ''}`}`,
        `gatehop:  ${st.enabled ? 'the system proxy is Gatehop' : 'the system proxy is not Gatehop'}`,
        st.snapshot
          ? `snapshot: saved ${new Date(st.snapshot.savedAt).toISOString()} by pid ${st.snapshot.pid}; restores to: ${st.snapshot.original}; Gatehop set: ${st.snapshot.applied}`
          : 'snapshot: none',
      ];
      if (!st.supported && st.error) lines.push(st.error);
      process.stdout.write(`${lines.join('\n')}\n`);
      return;
    }
    if (!sp.supported) fail((await sp.status()).error ?? 'not supported', 1);
    const outcome = await sp.restore();
    const said = {
      restored: 'gatehop: system proxy restored to the settings saved before Gatehop changed them',
      'left-alone': 'gatehop: the system proxy was changed since Gatehop set it; left as it is (snapshot dropped)',
      'nothing-to-restore': 'gatehop: no saved settings to restore',
    }[outcome];
    process.stdout.write(`${said}\n`);
  } catch (err) {
    fail(errorToJson(err).message, 1);
  } finally {
    sp.close();
    store?.close();
  }
}
