import { networkInterfaces } from 'node:os';

export interface LanAddress {
  readonly address: string;
  readonly family: 4 | 6;
  /** The interface's name (wlan0, eth0, Wi-Fi). */
  readonly interface: string;
  /** Its network as ADDRESS/PREFIX. */
  readonly cidr: string;
}

type Interfaces = () => ReturnType<typeof networkInterfaces>;

/** IPv4 blocks a home or office LAN uses: RFC 1918's three and the carrier-grade NAT block. */
const PRIVATE_V4 = [/^10\./, /^192\.168\./, /^172\.(1[6-9]|2\d|3[01])\./, /^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\./];

/**
 * The addresses a phone on this computer's networks can reach it at: IPv4 first (private blocks
 * before public ones), then IPv6 unique-local and global; never loopback or link-local (a phone's
 * settings cannot take a zone). Interfaces named like containers' and VPNs' bridges come last.
 */
export function lanAddresses(interfaces: Interfaces = networkInterfaces): LanAddress[] {
  const found: Array<LanAddress & { rank: number }> = [];
  for (const [name, addrs] of Object.entries(interfaces())) {
    for (const a of addrs ?? []) {
      if (a.internal || !a.cidr) continue;
      const family = a.family === 'IPv6' ? 6 : 4;
      if (family === 6 && /^fe[89ab]/i.test(a.address)) continue;
      const virtual = /^(docker|br-|veth|virbr|tun|tap|wg|lxc|vboxnet|vmnet|zt)/.test(name) ? 10 : 0;
      const rank =
        family === 4 ? (PRIVATE_V4.some((r) => r.test(a.address)) ? 0 : 1) : /^f[cd]/i.test(a.address) ? 2 : 3;
      found.push({
        address: a.address,
        family,
        interface: name,
        cidr: networkOf(a.cidr, family),
        rank: rank + virtual,
      });
    }
  }
  return found.sort((x, y) => x.rank - y.rank).map(({ rank: _rank, ...a }) => a);
}

/** An IPv4 CIDR as its network (`192.168.1.5/24` → `192.168.1.0/24`), what a firewall rule names; IPv6 as given. */
function networkOf(cidr: string, family: 4 | 6): string {
  if (family !== 4) return cidr;
  const [address, prefixText] = cidr.split('/') as [string, string];
  const prefix = Number(prefixText);
  const n = address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  const net = (n & mask) >>> 0;
  return `${[24, 16, 8, 0].map((s) => (net >>> s) & 255).join('.')}/${prefix}`;
}
