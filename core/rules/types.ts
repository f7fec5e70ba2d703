/**
 * Where a flow goes. `TUNNEL` is today's group (pinned node, URL test, balancer); `DIRECT` the host's
 * own network; `REJECT` refused (SOCKS5 reply 0x02, HTTP 403, a UDP packet dropped).
 */
export type RouteTarget = 'TUNNEL' | 'DIRECT' | 'REJECT';
export const ROUTE_TARGETS: readonly RouteTarget[] = ['TUNNEL', 'DIRECT', 'REJECT'];

/** Clash's modes: `rule` asks the table; `global` sends everything through the tunnel (LAN too); `direct` nothing. */
export type RouteMode = 'rule' | 'global' | 'direct';
export const ROUTE_MODES: readonly RouteMode[] = ['rule', 'global', 'direct'];

/** What the table knows of a flow when it is asked. */
export interface Flow {
  readonly network: 'tcp' | 'udp';
  /** The destination as the client named it: a domain name or an IP address. */
  readonly host: string;
  readonly port: number;
  /**
   * The destination's address when known: the host itself when it is an IP, or what the tunnel's
   * resolver answered for a name. Undefined: not resolved (yet).
   */
  readonly ip?: string | null;
  /** The name a flow addressed by IP announced in its first bytes (TLS SNI, HTTP Host). */
  readonly sniffedName?: string | null;
  /** The local program that opened the connection, when a rule needs it and it could be found. */
  readonly process?: { readonly name: string; readonly path: string } | null;
  /** The client's end of the connection (SRC-IP-CIDR, SRC-PORT); absent where the front end has none. */
  readonly src?: { readonly ip: string; readonly port: number };
  /** The local port the client reached Gatehop on (IN-PORT). */
  readonly inPort?: number;
  /** How the client asked (IN-TYPE): SOCKS5, plain HTTP proxying, or HTTP CONNECT (`HTTPS`, as mihomo names it). */
  readonly inType?: InboundType;
  /** The proxy user the client authenticated as (IN-USER); absent without authentication. */
  readonly inUser?: string;
}

export type InboundType = 'SOCKS5' | 'HTTP' | 'HTTPS' | 'TUN';

/** The table's answer: the target, and the rule that chose it as Clash shows it (`DOMAIN-SUFFIX` / `ir`). */
export interface Decision {
  readonly target: RouteTarget;
  /** The rule's type (`MATCH` for the final rule, `GLOBAL`/`DIRECT` for a mode). */
  readonly rule: string;
  readonly payload: string;
  /**
   * The address a named flow was decided with, when a rule needed it and the tunnel's resolver gave
   * it: a DIRECT flow is dialled there, never looked up again by name in clear (#45).
   */
  readonly address?: string;
  /** The local program found while deciding (only when a PROCESS-NAME rule asked for it). */
  readonly program?: string;
}

/** A rule needs what the flow does not carry yet: its address (resolved inside the tunnel) or its program. */
export type Need = 'address' | 'process';
