/**
 * The one interface TunnelEgress sees of a tunnel, whatever carries it (OpenVPN, SSTP, SE-VPN):
 * IPv4 packets (Ethernet frames on an SE-VPN hub port) in and out, when the server was last heard from, whether the link is up, and close.
 * Each protocol's client is wrapped once, in links/; nothing in egress branches on the protocol
 * after links/open-link.ts picked the client.
 */
import type { NodeTrust, TrustRule } from '../reach/index.js';
import type { SstpClientOptions } from '../sstp/index.js';

export type TunnelProtocol = 'openvpn' | 'sstp' | 'sevpn';
/** Every protocol a node can be reached with, in the default order (config tunnel.protocols). */
export const TUNNEL_PROTOCOLS: readonly TunnelProtocol[] = ['openvpn', 'sevpn', 'sstp'];

export type LinkPhase = 'up' | 'reconnecting' | 'down';

/** What the server gave the tunnel, in the terms the netstack needs. */
export interface LinkConfig {
  address: string;
  netmask: string;
  /** The tunnel's gateway (answers ICMP on SoftEther), if the server named one. */
  gateway: string | null;
  dns: string[];
  /** The stack's MTU: what the carrier fits without fragmenting. */
  mtu: number;
  /** How often a quiet server still sends something of its own (s): the liveness limit when the gateway does not answer pings. */
  keepaliveS: number;
  /** For /status: how the tunnel travels ("udp", "tcp", "tls"). */
  transport: string;
  /**
   * The link carries Ethernet frames (an SE-VPN hub port): the stack runs ARP and DHCP with this
   * MAC, and the address, gateway and DNS above are the lease's once it comes.
   */
  ethernet?: { mac: Buffer };
}

export interface TunnelLink {
  readonly protocol: TunnelProtocol;
  readonly phase: LinkPhase;
  readonly lastReceivedAt: number;
  readonly counters: { reconnects: number; decryptFailures: number };
  /** The control channel runs on legacy TLS (TLS 1.0+, weak ciphers) because the server refused ours. */
  readonly weakTls: boolean;
  /** Which rule of the node trust rule accepted the server's certificate (core/reach/node-trust). */
  readonly trustRule: TrustRule | null;
  write(packet: Buffer): void;
  close(): void;
  /**
   * IP packets that arrived together (one read of the carrier), in order: a stack takes them as one
   * batch. They may be views into the carrier's read buffer: a listener that keeps one past the
   * call copies it (the stack copies each into lwIP's memory at once).
   */
  onPackets(fn: (packets: Buffer[]) => void): void;
  /** Called once when the link is gone for good (not an L1 reconnect). */
  onDown(fn: (reason: string) => void): void;
  /** Phase changes (reconnecting while an L1 reconnect runs). */
  onPhase(fn: (phase: LinkPhase) => void): void;
  /** After an L1 reconnect: a new address means connections on the old one are lost. */
  onReconnected(fn: (e: { address: string; addressChanged: boolean }) => void): void;
}

export interface OpenedLink {
  link: TunnelLink;
  config: LinkConfig;
}

/** How to reach a node with OpenVPN: its profile, and where to dial instead of the profile's remote. */
export interface OpenVpnLinkSpec {
  protocol: 'openvpn';
  profileText: string;
  /** Connect to this host instead of the profile's remote (the node's DDNS name). */
  remoteHost?: string;
  /** Through the user's upstream proxy (socks5:// or http:// URL; a string so it crosses into a worker). */
  upstreamUrl?: string;
  /** The node refused modern TLS before (remembered per node): start on legacy TLS. */
  legacyTls?: boolean;
  /**
   * A listed node's name and the user's extra CAs (core/reach/node-trust): the profile's `<ca>`
   * then vouches under that name when it is a public root; whether its row came in clear (a
   * private `<ca>` is then not trusted). Absent: the profile alone decides.
   */
  trust?: { serverName: string | null; extraRoots?: string[]; profileCaInClear?: boolean };
}

/**
 * How to reach a node with SSTP: the client's own options (its address, its TLS port, the DDNS name
 * its certificate is for, the account), plus the upstream as a URL so the spec crosses into a worker.
 */
export type SstpLinkSpec = Pick<SstpClientOptions, 'host' | 'port' | 'trust' | 'sni' | 'username' | 'password'> & {
  protocol: 'sstp';
  upstreamUrl?: string;
};

/** How to reach a node with SE-VPN: its address, its TLS port, whom its certificate may come from, the hub. */
export interface SeVpnLinkSpec {
  protocol: 'sevpn';
  host: string;
  port: number;
  /** Whom its certificate may come from (its DDNS name null for the user's own profile). */
  trust: NodeTrust;
  sni?: boolean;
  /** VPN Gate's `VPNGATE` / `vpn` / `vpn` by default. */
  hub?: string;
  username?: string;
  password?: string;
  /** The stable MAC for this node's hub (hex, 12 digits; links/sevpn-link.ts macForNode). */
  mac: string;
  /** TCP connections for the session, 1 to 32 (the hub's policy may allow fewer); default 1. */
  connections?: number;
  upstreamUrl?: string;
}

export type LinkSpec = OpenVpnLinkSpec | SstpLinkSpec | SeVpnLinkSpec;

/** The same spec with its secrets and certificates left out, for logs and errors. */
export function describeLink(spec: LinkSpec): string {
  if (spec.protocol === 'sstp') return `sstp ${spec.trust.serverName} (${spec.host}:${spec.port})`;
  if (spec.protocol === 'sevpn') return `sevpn ${spec.trust.serverName ?? spec.host} (${spec.host}:${spec.port})`;
  return `openvpn${spec.remoteHost ? ` via ${spec.remoteHost}` : ''}`;
}
