import { CARRIER_PATH_MTU, type TrustRule } from '../../reach/index.js';
import { parseProfile, TunnelClient, type PushedConfig } from '../../ovpn/index.js';
import type { LinkConfig, LinkPhase, OpenedLink, OpenVpnLinkSpec } from '../tunnel-link.js';
import { LinkBase, upstreamOf, type LinkOpenOptions } from './link-base.js';

/**
 * OpenVPN's most per datagram over UDP, IP and UDP headers included: 28, the opcode and peer-id (4),
 * a CBC cipher's IV (16) and padding (up to 16), HMAC-SHA1 (20), the packet id (4) and a
 * compression framing byte; AEAD ciphers take less (openvpn-protocol-notes §6.7).
 */
const UDP_CARRIER_OVERHEAD = 92;

/**
 * The link config of an OpenVPN tunnel. Over UDP the inner MTU keeps every carrier datagram within
 * CARRIER_PATH_MTU (core/reach/path-mtu.ts): the stack's packets, and through the MSS it offers in
 * each SYN the servers' too, so a path that drops longer packets unanswered does not stall a
 * transfer (#60). Over TCP the carrier's own MSS does that. The server's ping interval bounds its
 * silence.
 */
export function openVpnLinkConfig(c: PushedConfig, proto: 'tcp' | 'udp'): LinkConfig {
  return {
    address: c.address,
    netmask: c.netmask,
    gateway: c.gateway,
    dns: c.dns,
    mtu: Math.min(c.tunMtu ?? 1500, proto === 'udp' ? CARRIER_PATH_MTU - UDP_CARRIER_OVERHEAD : 1500),
    keepaliveS: c.pingS ?? 10,
    transport: proto,
  };
}

/** An OpenVPN client (core/ovpn) as a TunnelLink: the one protocol with an L1 reconnect and a legacy-TLS fallback. */
export class OpenVpnLink extends LinkBase {
  readonly protocol = 'openvpn' as const;

  constructor(readonly client: TunnelClient) {
    super();
    client.on('error', () => {}); // reported through 'state'
    client.on('state', (_s, reason) => this.changed(reason));
  }

  get phase(): LinkPhase {
    const s = this.client.state;
    return s === 'CONNECTED' ? 'up' : s === 'RECONNECTING' ? 'reconnecting' : 'down';
  }

  /** Only DISCONNECTED is the end: the handshake's steps (and an L1 reconnect's) are phase down too. */
  override get ended(): boolean {
    return this.client.state === 'DISCONNECTED';
  }

  get lastReceivedAt(): number {
    return this.client.lastReceivedAt;
  }

  get trustRule(): TrustRule | null {
    return this.client.trustRule;
  }

  override get weakTls(): boolean {
    return this.client.legacyTls;
  }

  override get counters(): { reconnects: number; decryptFailures: number } {
    return { reconnects: this.client.stats.reconnects, decryptFailures: this.client.stats.decryptFailures };
  }

  write(packet: Buffer): void {
    void this.client.write(packet);
  }

  close(): void {
    this.client.close();
  }

  onPackets(fn: (packets: Buffer[]) => void): void {
    this.client.on('packets', fn);
  }

  override onReconnected(fn: (e: { address: string; addressChanged: boolean }) => void): void {
    this.client.on('reconnected', ({ config, addressChanged }) => fn({ address: config.address, addressChanged }));
  }
}

export async function openOpenVpnLink(spec: OpenVpnLinkSpec, o: LinkOpenOptions): Promise<OpenedLink> {
  const profile = parseProfile(spec.profileText);
  // A short L1 window: a node that stays away is the egress manager's business (it fails over).
  const client = new TunnelClient({
    profile,
    logger: o.logger,
    reconnectForMs: 8_000,
    ...(spec.legacyTls ? { legacyTls: true } : {}),
    ...(spec.trust ? { trust: spec.trust } : {}),
    transport: { ...(spec.remoteHost ? { host: spec.remoteHost } : {}), upstream: upstreamOf(spec) },
  });
  const link = new OpenVpnLink(client);
  const config = await client.connect({ timeoutMs: o.timeoutMs, ...(o.signal ? { signal: o.signal } : {}) });
  return { link, config: openVpnLinkConfig(config, profile.remotes[0]!.proto) };
}
