import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { unmapIpv4 } from './socks5-codec.js';

/** How long the machine's own networks are taken as read (a new DHCP lease counts within this). */
const INTERFACES_TTL_MS = 5_000;

/** `local`, or an address block `ADDRESS/PREFIX` (IPv4 or IPv6): what `proxy.allowFrom` lists. */
export function allowFromEntryProblem(entry: string): string | null {
  if (entry === 'local') return null;
  const m = /^([^/]+)\/(\d{1,3})$/.exec(entry);
  const family = m ? isIP(m[1]!) : 0;
  if (!m || family === 0) return `"${entry}" is neither local nor ADDRESS/PREFIX`;
  if (Number(m[2]) > (family === 4 ? 32 : 128)) return `"${entry}": prefix too long`;
  return null;
}

type Interfaces = () => ReturnType<typeof networkInterfaces>;

/**
 * Who may open a connection to the proxy (#63), judged on the peer's address before a byte of it
 * is read: `local` is this machine and the networks its interfaces are on (each address with its
 * netmask, re-read every few seconds), other entries are address blocks the user names (a routed
 * second LAN, a VPN's range). A LAN proxy with a password is still one that anyone on the Internet
 * could try, if a router forwards the port: such a peer is refused unheard.
 */
export class ClientFilter {
  readonly #fixed = new BlockList();
  readonly #local: boolean;
  /** `lan` (the shared listener's): the networks this machine is on, but never this machine's loopback. */
  readonly #lanOnly: boolean;
  #localList: BlockList | null = null;
  #localAt = 0;

  constructor(
    entries: readonly string[],
    private readonly interfaces: Interfaces = networkInterfaces,
    private readonly now: () => number = Date.now,
  ) {
    this.#lanOnly = entries.includes('lan');
    this.#local = entries.includes('local') || this.#lanOnly;
    for (const e of entries) {
      if (e === 'local' || e === 'lan') continue;
      const [address, prefix] = e.split('/') as [string, string];
      this.#fixed.addSubnet(address, Number(prefix), isIP(address) === 6 ? 'ipv6' : 'ipv4');
    }
  }

  /** Whether a peer at `address` (as the socket reports it) may connect. */
  allows(address: string | undefined): boolean {
    if (!address) return false;
    const ip = unmapIpv4(address.split('%')[0]!);
    // This machine, as nearly every client of a desktop proxy is: no list walked (the hot path).
    if (ip.startsWith('127.') || ip === '::1') {
      if (this.#lanOnly) return false;
      if (this.#local) return true;
    }
    const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (this.#fixed.check(ip, type)) return true;
    return this.#local && this.#localNetworks().check(ip, type);
  }

  #localNetworks(): BlockList {
    if (this.#localList && this.now() - this.#localAt < INTERFACES_TTL_MS) return this.#localList;
    const list = new BlockList();
    list.addSubnet('127.0.0.0', 8, 'ipv4');
    list.addAddress('::1', 'ipv6');
    for (const addrs of Object.values(this.interfaces()))
      for (const a of addrs ?? []) {
        if (!a.cidr) continue;
        const [network, prefix] = a.cidr.split('/') as [string, string];
        list.addSubnet(network.split('%')[0]!, Number(prefix), a.family === 'IPv6' ? 'ipv6' : 'ipv4');
      }
    this.#localList = list;
    this.#localAt = this.now();
    return list;
  }
}
