import type { OvpnProto } from '../ovpn/index.js';

/** One VPN Gate node (or a static node from the user's own profile). */
export interface VpnGateNode {
  /** HostName from the list; for static nodes "file:<name>". */
  readonly id: string;
  readonly ip: string;
  readonly port: number;
  readonly proto: OvpnProto;
  readonly countryLong: string;
  readonly countryShort: string;
  /** The list's own figures (measured from Japan, often stale); null for static nodes. */
  readonly score: number | null;
  readonly pingMs: number | null;
  readonly speedBps: number | null;
  readonly numVpnSessions: number | null;
  readonly uptimeMs: number | null;
  readonly totalUsers: number | null;
  readonly totalTrafficBytes: number | null;
  readonly operator: string;
  readonly profile: string;
  readonly source: 'list' | 'static';
  /**
   * When a list (fetched or imported) last named this node. The pool keeps nodes for
   * `vpngate.keepDays`, so an older one may be in use; null for static nodes.
   */
  readonly lastListedAt?: number | null;
  /**
   * What vouches that the `<ca>` in `profile` is this node's (#59): a list fetched over HTTPS
   * (`https`: or a list fetched in clear that gave the same CA as an earlier HTTPS list), or a
   * file the user imported (`file`). Null or absent when only a list fetched in clear says so:
   * anyone on its path could have written the row, so a private CA in it is not trusted (a
   * public CA still vouches for the node under its DDNS name). Static nodes are the user's own.
   */
  readonly caVouchedBy?: 'https' | 'file' | null;
}
