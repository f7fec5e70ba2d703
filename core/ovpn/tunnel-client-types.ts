import type { Logger } from '../common/index.js';
import type { UpstreamProxy } from '../reach/index.js';
import type { OvpnProfile } from './profile.js';

export type TunnelState = 'CONNECTING' | 'WAIT' | 'AUTH' | 'GET_CONFIG' | 'CONNECTED' | 'RECONNECTING' | 'DISCONNECTED';

export interface TunnelClientOptions {
  profile: OvpnProfile;
  logger: Logger;
  /** For profiles with auth-user-pass. */
  credentials?: { username: string; password: string };
  remoteIndex?: number;
  /**
   * L1 self-healing: after an established tunnel loses its transport or hits ping-restart, reconnect
   * to the same server for this long (fresh session ids, same packet interface). 0 turns it off.
   */
  reconnectForMs?: number;
  /** How to reach the server when not straight at the profile's remote. */
  transport?: TunnelTransportOptions;
  /**
   * Renegotiations the server may start in any 60 s (default 6). Each costs a TLS handshake here;
   * a server past this is dropped (GH_ERR_OVPN_PROTOCOL): OpenVPN's default is one an hour, VPN
   * Gate's servers one every few hours.
   */
  maxServerRenegotiationsPerMinute?: number;
  /**
   * Start on legacy TLS (TLS 1.0+, SECLEVEL 0): this node refused modern TLS before and that was
   * remembered. Without it, legacy TLS follows only a refusal in this client's own handshake.
   */
  legacyTls?: boolean;
  /** How long a TLS handshake may take before it counts as unanswered (default 8 s; tests shorten it). */
  tlsHandshakeMs?: number;
  /**
   * Whom the server's certificate may come from (core/reach/node-trust). A listed node's: its
   * DDNS name and the user's extra roots, so a public `<ca>` vouches only under that name.
   * Without it the profile alone decides, as OpenVPN does (its `<ca>`, `verify-x509-name`).
   */
  trust?: { serverName: string | null; extraRoots?: readonly string[]; profileCaInClear?: boolean };
}

export interface TunnelTransportOptions {
  /** Connect to this host instead of the profile's (a node's DDNS name, `vpngate.connectBy: hostname`). */
  host?: string;
  /**
   * Through the user's proxy, as OpenVPN's `socks-proxy`/`http-proxy` do: TCP by CONNECT; UDP by
   * the SOCKS5 proxy's UDP relay (UDP ASSOCIATE), which an HTTP proxy does not have.
   */
  upstream?: UpstreamProxy | null;
}

export interface TunnelStats {
  bytesIn: number;
  bytesOut: number;
  packetsIn: number;
  packetsOut: number;
  decryptFailures: number;
  replays: number;
  droppedOut: number;
  malformed: number;
}

/** An OpenVPN client's own counters beside the tunnel's. */
export type TunnelClientStats = TunnelStats & {
  reconnects: number;
  exitNotified: 'control' | 'occ' | null;
  compressedDropped: number;
};

export function newTunnelClientStats(): TunnelClientStats {
  return {
    bytesIn: 0,
    bytesOut: 0,
    packetsIn: 0,
    packetsOut: 0,
    decryptFailures: 0,
    replays: 0,
    droppedOut: 0,
    malformed: 0,
    reconnects: 0,
    exitNotified: null,
    compressedDropped: 0,
  };
}
