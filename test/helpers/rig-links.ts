import { readFileSync } from 'node:fs';
import { macForNode, type SeVpnLinkSpec } from '../../core/egress/index.js';
import type { Rig } from '../rig/rig.js';

/**
 * An SE-VPN link to one of the rig's SoftEther nodes: its lan address and TLS port, the rig's CA
 * for the chain (as a node's profile carries it), the rig's hub (not VPNGATE: SoftEther keeps that
 * name for VPN Gate's own module), the node's stable MAC.
 */
export function sevpnLinkOf(rig: Rig, nodeName: string, connections = 1): SeVpnLinkSpec {
  const n = rig.node(nodeName);
  return {
    protocol: 'sevpn',
    host: n.vpnAddress,
    port: 443,
    trust: { profileCa: [readFileSync(rig.state.caFile, 'utf8')], serverName: null },
    hub: 'RIG',
    mac: macForNode(n.name).toString('hex'),
    connections,
  };
}
