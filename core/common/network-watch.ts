import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import type { Logger } from './logger.js';
import { Listeners } from './listeners.js';
import { wifiNamesOf } from './wifi-name.js';

/** What the machine's network looks like right now, as far as a user-space process can tell. */
export interface NetworkSnapshot {
  /** Non-internal interface addresses ("eth0 192.0.2.4"), sorted. */
  addresses: string[];
  /** A default route exists (Linux: /proc/net/route and /proc/net/ipv6_route; elsewhere: unknown → null). */
  defaultRoute: boolean | null;
  /**
   * The interfaces a default route leaves by (IPv4 or IPv6), sorted: the machine's way out, where
   * the nodes are. Absent where it cannot be told (not Linux).
   */
  defaultInterfaces?: string[];
  /** The Wi-Fi network (SSID) of each interface that counts and has one, where the OS tells (wifi-name.ts). */
  wifi?: Record<string, string>;
}

export type NetworkChangeReason = 'interface' | 'route' | 'resume' | 'nudge';

export interface NetworkChange {
  reason: NetworkChangeReason;
  online: boolean;
  snapshot: NetworkSnapshot;
}

export interface NetworkWatchOptions {
  /** How often the interfaces are looked at (default 2 s). */
  intervalMs?: number;
  /** A tick this much later than planned means the machine slept (default 10 s). */
  resumeGapMs?: number;
  /** Injectable for tests; defaults to the OS. */
  read?: () => NetworkSnapshot;
  now?: () => number;
  logger: Logger;
}

/** The interfaces and default route of this machine (pure apart from reading the OS). */
export function readNetworkSnapshot(): NetworkSnapshot {
  const addresses: string[] = [];
  for (const [name, list] of Object.entries(networkInterfaces())) {
    for (const a of list ?? []) if (!a.internal) addresses.push(`${name} ${a.address}`);
  }
  addresses.sort();
  const defaultInterfaces = readDefaultInterfaces();
  const base: NetworkSnapshot = defaultInterfaces
    ? { addresses, defaultRoute: defaultInterfaces.length > 0, defaultInterfaces }
    : { addresses, defaultRoute: null };
  const wifi = cachedWifiNames([...new Set(countedAddresses(base).map((a) => a.iface))].sort(), addresses);
  return Object.keys(wifi).length ? { ...base, wifi } : base;
}

/** An IPv4 address that names the network (its key and its label): its interface, its /24, its Wi-Fi network's name where known. */
export interface CountedAddress {
  iface: string;
  /** "192.168.1": a new DHCP lease on the same network keeps it. */
  net24: string;
  ssid?: string;
}

/** The IPv4 addresses that name the network: those on an interface a default route leaves by (every interface's, without such a route). */
export function countedAddresses(s: NetworkSnapshot): CountedAddress[] {
  const wayOut = s.defaultInterfaces?.length ? new Set(s.defaultInterfaces) : null;
  const out: CountedAddress[] = [];
  for (const a of s.addresses) {
    const [iface, addr] = a.split(' ');
    if (!iface || !addr || !/^\d+\.\d+\.\d+\.\d+$/.test(addr) || (wayOut && !wayOut.has(iface))) continue;
    const ssid = s.wifi?.[iface];
    out.push({ iface, net24: addr.split('.').slice(0, 3).join('.'), ...(ssid ? { ssid } : {}) });
  }
  return out;
}

/** Wi-Fi names are asked of a tool (a process each): again only when the interfaces change, or every 30 s (roaming). */
const WIFI_NAMES_MS = 30_000;
let wifiCache: { key: string; at: number; names: Record<string, string> } | null = null;
function cachedWifiNames(ifaces: string[], addresses: string[]): Record<string, string> {
  const key = `${ifaces.join(',')}|${addresses.join(',')}`;
  if (wifiCache && wifiCache.key === key && Date.now() - wifiCache.at < WIFI_NAMES_MS) return wifiCache.names;
  const names = wifiNamesOf(ifaces);
  wifiCache = { key, at: Date.now(), names };
  return names;
}

/** The interfaces of the default routes (Linux), or null where the routing table cannot be read. */
function readDefaultInterfaces(): string[] | null {
  if (process.platform !== 'linux') return null;
  try {
    const out = new Set<string>();
    // /proc/net/route: Iface Destination Gateway Flags …; a default route has Destination 00000000.
    for (const l of readFileSync('/proc/net/route', 'utf8').split('\n').slice(1)) {
      const [iface, destination] = l.split('\t');
      if (iface && destination === '00000000') out.add(iface.trim());
    }
    // /proc/net/ipv6_route: destination (32 hex) and prefix length first, the device last; ::/0 is
    // the default (the kernel's unreachable one on lo is not a way out).
    for (const l of readFileSync('/proc/net/ipv6_route', 'utf8').split('\n')) {
      if (!l.startsWith('00000000000000000000000000000000 00 ')) continue;
      const iface = l.trim().split(/\s+/).at(-1);
      if (iface && iface !== 'lo') out.add(iface);
    }
    return [...out].sort();
  } catch {
    return null;
  }
}

/**
 * A name for the network the machine is on, stable while it stays there: each interface with the
 * /24 of its IPv4 addresses (a new DHCP lease on the same network keeps it; IPv6 privacy
 * addresses, which rotate, are left out) and, where the OS gives it, its Wi-Fi network's name. What a network taught (which protocol gets through, how
 * nodes are reached) is kept under this name.
 *
 * Only the interfaces a default route leaves by count where there are any (#58): they are the way
 * to the nodes. A bridge or veth that comes and goes beside them (a container, a VM, a test rig)
 * is not another network, and must not make Gatehop forget that OpenVPN is blocked here and send
 * it again. Without a default route (offline, or a table that cannot be read), every interface.
 */
export function networkKeyOf(s: NetworkSnapshot): string {
  // A Wi-Fi network's name where the OS gives it: two cafés whose routers both hand out 192.168.1.x differ.
  const parts = new Set(countedAddresses(s).map((a) => `${a.iface} ${a.net24}${a.ssid ? ` ssid:${a.ssid}` : ''}`));
  const list = [...parts].sort().join(',');
  return list ? createHash('sha256').update(list).digest('hex').slice(0, 16) : 'offline';
}

/** Online = some non-internal address and, where we can tell, a default route. */
export function isOnline(s: NetworkSnapshot): boolean {
  return s.addresses.length > 0 && s.defaultRoute !== false;
}

/**
 * Tells when the network probably came back: an interface gained or lost an address, a default
 * route appeared or went, or the machine resumed from sleep (a timer firing far later than it was
 * due). Polling is the one mechanism that works the same in plain Node on every platform; the
 * desktop shell adds the OS's own signals (Electron's powerMonitor) through nudge().
 */
export class NetworkWatch {
  #timer: NodeJS.Timeout | null = null;
  #last: NetworkSnapshot | null = null;
  #lastTickAt = 0;
  readonly #listeners: Listeners<NetworkChange>;
  readonly #intervalMs: number;
  readonly #resumeGapMs: number;
  readonly #read: () => NetworkSnapshot;
  readonly #now: () => number;
  readonly #log: Logger;

  constructor(opts: NetworkWatchOptions) {
    this.#log = opts.logger.child({ component: 'network-watch' });
    this.#listeners = new Listeners(this.#log, 'network change');
    this.#intervalMs = opts.intervalMs ?? 2_000;
    this.#resumeGapMs = opts.resumeGapMs ?? 10_000;
    this.#read = opts.read ?? readNetworkSnapshot;
    this.#now = opts.now ?? Date.now;
  }

  get online(): boolean {
    return this.#last ? isOnline(this.#last) : true;
  }

  get snapshot(): NetworkSnapshot | null {
    return this.#last;
  }

  onChange(fn: (c: NetworkChange) => void): () => void {
    return this.#listeners.add(fn);
  }

  start(): void {
    if (this.#timer) return;
    this.#last = this.#safeRead();
    this.#lastTickAt = this.#now();
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
    this.#timer.unref();
  }

  /** Another source (the OS's resume or network event) says the network may have changed. */
  nudge(): void {
    const snapshot = this.#safeRead() ?? this.#last ?? { addresses: [], defaultRoute: null };
    this.#last = snapshot;
    this.#emit('nudge', snapshot);
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  #tick(): void {
    const now = this.#now();
    const late = now - this.#lastTickAt - this.#intervalMs;
    this.#lastTickAt = now;
    const next = this.#safeRead();
    if (!next) return;
    const prev = this.#last;
    this.#last = next;
    if (late > this.#resumeGapMs) return this.#emit('resume', next);
    if (!prev) return;
    if (
      prev.defaultRoute !== next.defaultRoute ||
      (prev.defaultInterfaces ?? []).join(',') !== (next.defaultInterfaces ?? []).join(',')
    )
      return this.#emit('route', next);
    if (
      prev.addresses.join(',') !== next.addresses.join(',') ||
      JSON.stringify(prev.wifi ?? {}) !== JSON.stringify(next.wifi ?? {})
    )
      this.#emit('interface', next);
  }

  #emit(reason: NetworkChangeReason, snapshot: NetworkSnapshot): void {
    const online = isOnline(snapshot);
    this.#log.info(
      {
        event: 'network-change',
        reason,
        online,
        addresses: snapshot.addresses.length,
        defaultRoute: snapshot.defaultRoute,
      },
      `network changed (${reason}); ${online ? 'online' : 'offline'}`,
    );
    this.#listeners.emit({ reason, online, snapshot });
  }

  #safeRead(): NetworkSnapshot | null {
    try {
      return this.#read();
    } catch (err) {
      this.#log.debug(
        { event: 'network-read-failed', err: (err as Error).message },
        'could not read the network interfaces',
      );
      return null;
    }
  }
}
