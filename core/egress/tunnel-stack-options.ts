import type { StackOptions } from '../netstack/index.js';
import type { PushedConfig } from '../ovpn/index.js';
import { openVpnLinkConfig } from './links/openvpn-link.js';
import type { LinkConfig } from './tunnel-link.js';

/**
 * How a tunnel's netstack is set up from its link. ACKs go out for every second segment and at
 * the end of each batch of input (UDP) or of each event-loop turn (TCP and TLS carriers, whose
 * reads bring one record each, several a turn, and for which every ACK is a write), never on
 * lwIP's timer: SoftEther's SecureNAT is ACK-clocked and crawls (~1 MiB/s) when a lone segment
 * waits for the delayed-ACK timer, while an ACK per segment doubles our outgoing packets (measured
 * in core/ovpn/README.md; per turn against per batch in core/softether/README.md).
 */
export function stackOptionsOf(config: LinkConfig): Omit<StackOptions, 'output'> {
  if (config.ethernet) return { ethernet: config.ethernet, mtu: config.mtu, acks: 'per-turn' };
  return {
    address: config.address,
    netmask: config.netmask,
    // lwIP needs a gateway; a link without one (a point-to-point peer that gave none) routes via itself.
    gateway: config.gateway ?? config.address,
    mtu: config.mtu,
    acks: config.transport === 'udp' ? 'per-batch' : 'per-turn',
  };
}

/** The same for an OpenVPN client used directly (tests, benches). */
export function tunnelStackOptions(config: PushedConfig, proto: 'tcp' | 'udp'): Omit<StackOptions, 'output'> {
  return stackOptionsOf(openVpnLinkConfig(config, proto));
}
