import { createHash } from 'node:crypto';
import type { TrustRule } from '../../reach/index.js';
import { dialSeVpn, dialSeVpnAdditional, SeSession } from '../../softether/index.js';
import type { LinkConfig, LinkPhase, OpenedLink, SeVpnLinkSpec } from '../tunnel-link.js';
import { LinkBase, upstreamOf, type LinkOpenOptions } from './link-base.js';

/**
 * A node's stable MAC on its hub: locally administered, unicast, from the node's name, so the
 * hub's ARP table and SecureNAT's DHCP lease follow us from one session to the next.
 */
export function macForNode(nodeId: string): Buffer {
  const mac = createHash('sha256').update(`gatehop-sevpn:${nodeId}`).digest().subarray(0, 6);
  mac[0] = (mac[0]! & 0xfc) | 0x02;
  return Buffer.from(mac);
}

/**
 * An SE-VPN session (core/softether) as a TunnelLink carrying Ethernet frames. No L1 reconnect and
 * no TLS fallback (SE-VPN runs on the OS's TLS defaults).
 */
export class SeVpnLink extends LinkBase {
  readonly protocol = 'sevpn' as const;
  #up = true;

  constructor(
    readonly session: SeSession,
    readonly trustRule: TrustRule,
  ) {
    super(true); // made from a session that is already up
    session.on('down', (err) => {
      this.#up = false;
      this.changed(err.message);
    });
  }

  get phase(): LinkPhase {
    return this.#up ? 'up' : 'down';
  }

  get lastReceivedAt(): number {
    return this.session.lastReceivedAt;
  }

  write(frame: Buffer): void {
    this.session.send([frame]);
  }

  close(): void {
    this.#up = false;
    this.session.close();
  }

  onPackets(fn: (frames: Buffer[]) => void): void {
    this.session.onFrames(fn);
  }
}

export async function openSeVpnLink(spec: SeVpnLinkSpec, o: LinkOpenOptions): Promise<OpenedLink> {
  const deadline = AbortSignal.timeout(o.timeoutMs);
  const connections = Math.max(1, Math.min(32, spec.connections ?? 1));
  const to = {
    host: spec.host,
    port: spec.port,
    trust: spec.trust,
    ...(spec.sni !== undefined ? { sni: spec.sni } : {}),
    upstream: upstreamOf(spec),
  };
  const conn = await dialSeVpn({
    ...to,
    hub: spec.hub ?? 'VPNGATE',
    username: spec.username ?? 'vpn',
    password: spec.password ?? 'vpn',
    maxConnection: connections,
    signal: o.signal ? AbortSignal.any([o.signal, deadline]) : deadline,
  });
  // More connections join in the background; each has the open timeout of its own.
  const session = new SeSession(conn, o.logger, {
    connections,
    join: (signal) =>
      dialSeVpnAdditional(
        { ...to, signal: AbortSignal.any([signal, AbortSignal.timeout(o.timeoutMs)]) },
        conn.welcome.sessionKey,
      ),
  });
  if (conn.welcome.message)
    o.logger.info({ event: 'sevpn-hub-message', text: conn.welcome.message.slice(0, 500) }, 'the hub says');
  const config: LinkConfig = {
    // The address, gateway and DNS come from the hub's DHCP once the stack is up (ethernet).
    address: '0.0.0.0',
    netmask: '255.255.255.0',
    gateway: null,
    dns: [],
    mtu: 1500,
    // SoftEther's own keep-alives arrive within half its timeout.
    keepaliveS: Math.ceil(conn.welcome.timeoutMs / 2000),
    transport: 'tls',
    ethernet: { mac: Buffer.from(spec.mac, 'hex') },
  };
  return { link: new SeVpnLink(session, conn.trustRule), config };
}
