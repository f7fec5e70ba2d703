import { join } from 'node:path';
import { detach, readNetworkSnapshot, type Logger, type NetworkWatch } from '../common/index.js';
import type { SettingsAccess } from '../api/index.js';
import { NetworkProfiles, type ProfileTarget } from '../profiles/index.js';
import { networkSeenOf } from './network-seen.js';

/**
 * A profile's choices are the user's settings (the route mode, HTTPS only, the protocol order):
 * read from what the window shows, and put in force as a change there is (saved, then applied live).
 */
function settingsTarget(settings: SettingsAccess): ProfileTarget {
  return {
    read: () => {
      const s = settings.get();
      return { mode: s.mode, httpsOnly: s.privacy.httpsOnly, protocols: [...s.protocols] };
    },
    apply: async (c) => {
      const s = settings.get();
      await settings.update({
        ...(c.mode !== undefined ? { mode: c.mode } : {}),
        ...(c.protocols !== undefined ? { protocols: c.protocols } : {}),
        ...(c.httpsOnly !== undefined ? { privacy: { ...s.privacy, httpsOnly: c.httpsOnly } } : {}),
      });
    },
  };
}

/**
 * The profiles per network (#64), looked at again on every change the network watch sees (its
 * poll, and the desktop's resume) and once at start (a stop on one network and a start on another
 * puts the user's own settings back). Without settings to change (an embedding without config
 * layers), none.
 */
export function startProfiles(
  dataDir: string,
  settings: SettingsAccess | null,
  network: NetworkWatch,
  logger: Logger,
): NetworkProfiles | null {
  if (!settings) return null;
  const profiles = new NetworkProfiles({
    file: join(dataDir, 'network-profiles.json'),
    target: settingsTarget(settings),
    network: () => networkSeenOf(network.snapshot ?? readNetworkSnapshot()),
    logger,
  });
  network.onChange(() => detach(logger, 'profile-network-change', profiles.networkChanged()));
  detach(logger, 'profile-start', profiles.networkChanged());
  return profiles;
}
