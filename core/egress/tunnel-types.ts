/**
 * The types a tunnel egress and its worker thread share (what opens one, what it reports), in a
 * file of their own so that neither side imports the other for them.
 */
import type { Logger } from '../common/index.js';
import type { TrustRule } from '../reach/index.js';
import type { DohEndpoint } from '../netstack/index.js';
import type { LinkSpec } from './tunnel-link.js';

export interface TunnelEgressOptions {
  id: string;
  nodeId: string;
  /** What carries the tunnel and how to reach the node (OpenVPN profile, or the SSTP or SE-VPN host and name). */
  link: LinkSpec;
  logger: Logger;
  /** Resolvers tried after the tunnel's pushed ones (still through the tunnel). */
  dnsFallback?: string[];
  /**
   * privacy.encryptedDns: every name resolved by DNS over HTTPS through the tunnel to these
   * resolvers (by address), never by the node's resolver.
   */
  doh?: DohEndpoint[];
  connectTimeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Quiet this long (nothing from the server, though we asked) makes the tunnel 'unresponsive', well
   * before the protocol's own keepalive declares it dead; longer for a slow node (SilenceLimits).
   * 0 turns the watch off. Default 2 s.
   */
  unresponsiveMs?: number;
  /** The name the health monitor's DNS samples ask for (uncached). */
  healthDnsName?: string;
}

export type LinkState = 'up' | 'reconnecting' | 'down';

/** What the worker reports about its tunnel, with every heartbeat. */
export interface TunnelDiagnostics {
  link: LinkState;
  responsive: boolean;
  reconnects: number;
  decryptFailures: number;
  segmentsOut: number;
  retransmissions: number;
  /** Window updates announced again to a sender silent since the window reopened (netstack glue.c). */
  windowUpdatesResent: number;
  dnsHits: number;
  dnsMisses: number;
  /** The control channel runs on legacy TLS (the server refused modern TLS): shown as weak. */
  weakTls: boolean;
  /** Which rule of the node trust rule accepted the server's certificate (core/reach/node-trust). */
  trustRule: TrustRule | null;
  /** Names are resolved by DNS over HTTPS through the tunnel (privacy.encryptedDns when it opened). */
  encryptedDns: boolean;
  /** lwIP's WebAssembly memory and the JS heap of the thread the tunnel runs in. */
  wasmMemoryBytes: number;
  heapUsedBytes: number;
}
