export { DirectEgress } from './direct-egress.js';
export { BULK_MIN_BYTES, BulkMeter, bulkRateBps, type BulkSample } from './bulk-meter.js';
export { mapSocketError } from './map-socket-error.js';
export { SingleEgressSource } from './single-egress-source.js';
export { UnavailableEgress } from './unavailable-egress.js';
export { TunnelEgress } from './tunnel-egress.js';
export type { LinkState, TunnelDiagnostics, TunnelEgressOptions } from './tunnel-types.js';
export { WorkerTunnelEgress, type WorkerTunnelOptions } from './worker/worker-tunnel-egress.js';
export { tunnelWorkerCounters } from './worker/worker-counters.js';
export { TunnelWorkerPool, tunnelThreadLimits, type TunnelWorkerPoolOptions } from './worker/worker-pool.js';
export { findWorkerScript } from './worker/worker-entry.js';
export { openTunnel, isTunnel, type OpenTunnelOptions, type Tunnel } from './open-tunnel.js';
export { tunnelStackOptions, stackOptionsOf } from './tunnel-stack-options.js';
export {
  TUNNEL_PROTOCOLS,
  describeLink,
  type TunnelProtocol,
  type LinkSpec,
  type OpenVpnLinkSpec,
  type SstpLinkSpec,
  type SeVpnLinkSpec,
  type LinkConfig,
  type LinkPhase,
  type TunnelLink,
  type OpenedLink,
} from './tunnel-link.js';
export { openLink } from './links/open-link.js';
export { OpenVpnLink, openVpnLinkConfig } from './links/openvpn-link.js';
export { SstpLink } from './links/sstp-link.js';
export { SeVpnLink, macForNode } from './links/sevpn-link.js';
export { HubMacs } from './links/hub-macs.js';
export { BALANCE_STRATEGIES, Balancer, type BalanceCandidate, type BalanceStrategy } from './balance.js';
export {
  EgressManager,
  type ActiveMember,
  type DrainingEgress,
  type EgressManagerEvent,
  type EgressManagerOptions,
  type EgressManagerStats,
} from './egress-manager.js';
export { egressDialer } from './egress-dialer.js';
