/**
 * IP addresses in one place (#47): IPv6 expanded and written back (RFC 5952), IPv4-mapped
 * addresses unmapped, brackets and zones stripped, and the class of an address (where a dial may
 * go). Routing (CIDR sets, IP-SUFFIX), the SOCKS5 codec and every check of where a dial goes use
 * these; there were three expanders and two bracket strippers.
 */
import { isIP } from 'node:net';
import { unbracket } from '../common/index.js';

/**
 * An IPv6 literal's eight 16-bit groups, `::` filled and a dotted IPv4 tail (`::ffff:1.2.3.4`,
 * `64:ff9b::1.2.3.4`) taken as the last two; null for anything that is not one. Brackets and a
 * zone (`[fe80::1%eth0]`) are the caller's to strip (`bareAddress`).
 */
export function ipv6Groups(ip: string): number[] | null {
  let s = ip.toLowerCase();
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (dotted) {
    const o = dotted.slice(1).map(Number);
    if (o.some((x) => x > 255)) return null;
    s = `${s.slice(0, dotted.index)}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const [head, tail] = halves as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail !== undefined ? 8 - h.length - t.length : 0;
  if (fill < 0 || (tail !== undefined && fill === 0)) return null;
  const groups = [...h, ...Array<string>(fill).fill('0'), ...t];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}

/** An address as written in a URL or a socket's report, without brackets or a zone: `[fe80::1%eth0]` → `fe80::1`. */
export function bareAddress(ip: string): string {
  return unbracket(ip).replace(/%.*$/, '');
}

export function unmapIpv4(host: string): string {
  return host.toLowerCase().startsWith('::ffff:') && isIP(host.slice(7)) === 4 ? host.slice(7) : host;
}

/** An IPv6 literal's 16 bytes, a dotted IPv4 tail (`::ffff:1.2.3.4`, `64:ff9b::1.2.3.4`) included; zeros if it is not one. */
export function ipv6ToBytes(host: string): Buffer {
  const out = Buffer.alloc(16);
  (ipv6Groups(host) ?? []).forEach((w, i) => out.writeUInt16BE(w, i * 2));
  return out;
}

/** RFC 5952 text form: the longest run of two or more zero groups becomes `::`. */
export function compressIpv6(groups: string[]): string {
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestLen < 2) return groups.join(':');
  return `${groups.slice(0, bestStart).join(':')}::${groups.slice(bestStart + bestLen).join(':')}`;
}

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

/**
 * Why a node's address may not be dialled (a reason such as `loopback`), or null when it may. The
 * default refuses this machine, its link, multicast, broadcast, reserved and private ranges; the
 * app allows private ones with `vpngate.allowPrivateNodes`.
 */
export type AddressPolicy = (ip: string) => string | null;

export const defaultAddressPolicy: AddressPolicy = (ip) => refusedAddress(ip, false);
