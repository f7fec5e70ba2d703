import { isIP } from 'node:net';
import { bareAddress, ipv6Groups } from '../common/index.js';

/**
 * What kind of destination an IP address is, as far as whether Gatehop may be sent there by
 * someone else's data (a list row, a mirror page, a rule-set URL):
 *   - `public`: anywhere on the Internet;
 *   - `private`: the user's LAN or their ISP's (RFC 1918, CGNAT 100.64/10, IPv6 ULA fc00::/7);
 *   - `loopback`, `unspecified`, `link-local`, `multicast`, `broadcast`: this machine, its link, or
 *     many hosts at once;
 *   - `reserved`: 0/8 ("this network": Linux dials 0.x as this machine) and 240/4.
 * IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is classed as its IPv4 address.
 */
export type AddressClass =
  'public' | 'private' | 'loopback' | 'unspecified' | 'link-local' | 'multicast' | 'broadcast' | 'reserved';

/** The class of `ip`, or null when it is not an IP address. */
export function classifyAddress(ip: string): AddressClass | null {
  const bare = bareAddress(ip);
  const v = isIP(bare);
  if (v === 4) return classifyV4(v4Octets(bare));
  if (v === 6) return classifyV6(bare.toLowerCase());
  return null;
}

/**
 * Why an address someone else chose may not be dialled, or null when it may: never this machine,
 * its link, multicast, broadcast or reserved ranges; private ranges only when `allowPrivate`.
 */
export function refusedAddress(ip: string, allowPrivate: boolean): Exclude<AddressClass, 'public'> | null {
  const c = classifyAddress(ip);
  if (c === null || c === 'public') return null;
  if (c === 'private' && allowPrivate) return null;
  return c;
}

/** True for names that mean this machine whatever DNS says (RFC 6761). */
export function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === 'localhost.localdomain';
}

function v4Octets(ip: string): number[] {
  return ip.split('.').map(Number);
}

function classifyV4([a, b, c, d]: number[]): AddressClass {
  if (a === 0) return b === 0 && c === 0 && d === 0 ? 'unspecified' : 'reserved';
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b! >= 64 && b! <= 127) return 'private';
  if (a === 169 && b === 254) return 'link-local';
  if (a! >= 224 && a! <= 239) return 'multicast';
  if (a === 255) return 'broadcast';
  if (a! >= 240) return 'reserved';
  // Documentation and benchmarking ranges reach no host of the user's: public as far as harm goes.
  return 'public';
}

function classifyV6(ip: string): AddressClass {
  const words = ipv6Groups(ip);
  if (!words) return 'reserved';
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff)
    return classifyV4([words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff]);
  if (words.every((w) => w === 0)) return 'unspecified';
  if (words.slice(0, 7).every((w) => w === 0) && words[7] === 1) return 'loopback';
  const w0 = words[0]!;
  if ((w0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((w0 & 0xff00) === 0xff00) return 'multicast';
  if ((w0 & 0xfe00) === 0xfc00) return 'private';
  return 'public';
}
