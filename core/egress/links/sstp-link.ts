import type { TrustRule } from '../../reach/index.js';
import { SstpClient } from '../../sstp/index.js';
import type { LinkConfig, LinkPhase, OpenedLink, SstpLinkSpec } from '../tunnel-link.js';
import { LinkBase, upstreamOf, type LinkOpenOptions } from './link-base.js';

/** SoftEther sends an SSTP Echo Request every 2.5–4.8 s, and a PPP echo every 4.8 s. */
const SERVER_KEEPALIVE_S = 5;

/**
 * An SSTP client (core/sstp) as a TunnelLink. There is no L1 reconnect (a lost call is a lost
 * tunnel), and no TLS fallback (SSTP is TLS 1.2+ with the OS's defaults).
 */
export class SstpLink extends LinkBase {
  readonly protocol = 'sstp' as const;

  constructor(readonly client: SstpClient) {
    super();
    client.on('error', () => {}); // reported through 'state'
    client.on('state', (_s, reason) => this.changed(reason));
  }

  get trustRule(): TrustRule | null {
    return this.client.trustRule;
  }

  get phase(): LinkPhase {
    return this.client.state === 'CONNECTED' ? 'up' : 'down';
  }

  /** Only DISCONNECTED is the end: CONNECTING (the handshake) is phase down too. */
  override get ended(): boolean {
    return this.client.state === 'DISCONNECTED';
  }

  get lastReceivedAt(): number {
    return this.client.lastReceivedAt;
  }

  write(packet: Buffer): void {
    this.client.write(packet);
  }

  close(): void {
    this.client.close();
  }

  onPackets(fn: (packets: Buffer[]) => void): void {
    this.client.on('packets', fn);
  }
}

export async function openSstpLink(spec: SstpLinkSpec, o: LinkOpenOptions): Promise<OpenedLink> {
  const client = new SstpClient({
    host: spec.host,
    port: spec.port,
    trust: spec.trust,
    ...(spec.sni !== undefined ? { sni: spec.sni } : {}),
    ...(spec.username ? { username: spec.username } : {}),
    ...(spec.password ? { password: spec.password } : {}),
    upstream: upstreamOf(spec),
    logger: o.logger,
  });
  const link = new SstpLink(client);
  const c = await client.connect({ timeoutMs: o.timeoutMs, ...(o.signal ? { signal: o.signal } : {}) });
  const config: LinkConfig = {
    address: c.address,
    // A point-to-point link: everything goes to the peer; lwIP needs a gateway on its subnet.
    netmask: '255.255.255.255',
    gateway: c.gateway,
    dns: c.dns,
    mtu: Math.min(c.mtu, 1500),
    keepaliveS: SERVER_KEEPALIVE_S,
    transport: 'tls',
  };
  return { link, config };
}
