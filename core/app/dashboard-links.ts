import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { isWildcardHost, type Endpoint } from '../common/index.js';

/**
 * The dashboard's links for the other devices of the network, when the admin API listens on every
 * interface (`--admin 0.0.0.0:9090` on a home server): one per IPv4 address of this machine that is
 * not loopback or link-local. The API accepts these addresses as its Host (core/api/access.ts), so
 * the printed link is one a phone's browser can open as it is.
 */
export function lanDashboardUrls(
  dashboardUrl: string | null,
  admin: Endpoint | null,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): string[] {
  if (!dashboardUrl || !admin || !isWildcardHost(admin.host)) return [];
  const url = new URL(dashboardUrl);
  const out: string[] = [];
  for (const list of Object.values(interfaces))
    for (const a of list ?? []) {
      if (a.family !== 'IPv4' || a.internal || a.address.startsWith('169.254.')) continue;
      url.hostname = a.address;
      out.push(url.toString());
    }
  return out;
}
