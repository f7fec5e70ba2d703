import { classifyAddress } from '../reach/index.js';
import { normalizeName } from './domain-set.js';
import type { Flow, Need } from './types.js';

/** The name domain rules see: the destination's name, or the one its first bytes announced. */
export function nameOf(flow: Flow): string | null {
  if (classifyAddress(flow.host) === null) return normalizeName(flow.host);
  return flow.sniffedName ? normalizeName(flow.sniffedName) : null;
}

/** The address IP rules see: undefined when a name was not resolved yet, null when it cannot be. */
export function addressOf(flow: Flow): string | null | undefined {
  if (classifyAddress(flow.host) !== null) return flow.host;
  return flow.ip;
}

/** An IP condition: the address, or the need to resolve it (unless no-resolve). */
export function ipMatch(flow: Flow, noResolve: boolean, test: (ip: string) => boolean): boolean | Need {
  const ip = addressOf(flow);
  if (ip === undefined) return noResolve ? false : 'address';
  return ip !== null && test(ip);
}

/** LAN for GEOIP: private, loopback, link-local and unspecified addresses (and multicast/broadcast on the link). */
export function isLan(ip: string): boolean {
  const c = classifyAddress(ip);
  return c !== null && c !== 'public' && c !== 'reserved';
}
