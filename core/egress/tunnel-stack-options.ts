import type { StackOptions } from '../netstack/index.js';
import type { PushedConfig } from '../ovpn/index.js';

/**
 * How a tunnel's netstack is set up from what the server pushed. Over UDP the inner MTU is 1400 so
 * carrier datagrams stay within 1500 bytes (openvpn-protocol-notes §6.7). ACK policy: SoftEther's
 * SecureNAT terminates our TCP in a user-mode stack that is ACK-clocked and stalls behind delayed
 * ACKs (~1 MiB/s), so every segment is acked at once; a stock OpenVPN server (it pushes a peer-id,
 * SoftEther never does) routes to real TCP stacks, where delayed ACKs halve our outgoing packets
 * (+40 % throughput measured over UDP, core/ovpn/README.md).
 */
export function tunnelStackOptions(config: PushedConfig, proto: 'tcp' | 'udp'): Omit<StackOptions, 'output'> {
  return {
    address: config.address,
    netmask: config.netmask,
    gateway: config.gateway ?? config.address,
    mtu: Math.min(config.tunMtu ?? 1500, proto === 'udp' ? 1400 : 1500),
    quickAck: config.peerId === null,
  };
}
