import type { StackOptions } from '../netstack/index.js';
import type { PushedConfig } from '../ovpn/index.js';

/**
 * How a tunnel's netstack is set up from what the server pushed. Over UDP the inner MTU is 1400 so
 * carrier datagrams stay within 1500 bytes (openvpn-protocol-notes §6.7). ACKs go out for every
 * second segment and at the end of each batch of input, never on lwIP's timer: SoftEther's
 * SecureNAT is ACK-clocked and crawls (~1 MiB/s) when a lone segment waits for the delayed-ACK
 * timer, while an ACK per segment doubles our outgoing packets (measured in core/ovpn/README.md).
 */
export function tunnelStackOptions(config: PushedConfig, proto: 'tcp' | 'udp'): Omit<StackOptions, 'output'> {
  return {
    address: config.address,
    netmask: config.netmask,
    gateway: config.gateway ?? config.address,
    mtu: Math.min(config.tunMtu ?? 1500, proto === 'udp' ? 1400 : 1500),
    acks: 'per-batch',
  };
}
