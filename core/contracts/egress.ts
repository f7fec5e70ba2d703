import type { Duplex } from 'node:stream';

export type EgressState = 'connecting' | 'ready' | 'draining' | 'closed';

export interface ConnectTcpOptions {
  /** Deadline for the whole connect, name resolution included. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Gatehop's own check, not a user's flow (the honesty checks, whose targets are chosen to look
   * ordinary and may not answer): its outcome is the check's to judge, so it counts neither in the
   * node's health (ConnectHosts) nor in the egress's failures.
   */
  check?: boolean;
}

/**
 * A connected TCP stream through an egress. `stream` supports half-close: `end()` sends FIN while
 * reading continues, and the readable side ends when the peer's FIN arrives.
 */
export interface EgressTcpConnection {
  readonly stream: Duplex;
  readonly localAddress: string;
  readonly localPort: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
}

export interface UdpDatagram {
  readonly data: Buffer;
  readonly address: string;
  readonly port: number;
}

/** A datagram socket on an egress; it sends to IP addresses only (resolve names first). */
export interface EgressUdpSocket {
  send(data: Buffer, address: string, port: number): void;
  onMessage(handler: (datagram: UdpDatagram) => void): void;
  /** Called once when the socket fails or closes. */
  onClose(handler: (err?: Error) => void): void;
  close(): void;
}

export interface EgressStats {
  bytesUp: number;
  bytesDown: number;
  /** Open TCP connections and UDP sockets. */
  sessionsActive: number;
  sessionsTotal: number;
  failures: number;
}

/**
 * Where proxied traffic leaves: the host network (DirectEgress) or an OpenVPN tunnel. Hostnames are
 * resolved by the egress itself, never by the proxy front end, so no lookup leaks to the local
 * resolver when the egress is a tunnel.
 */
export interface Egress {
  readonly id: string;
  /** The VPN Gate node a tunnel egress runs through (absent for the host's own network). */
  readonly nodeId?: string;
  readonly state: EgressState;
  readonly stats: Readonly<EgressStats>;
  connectTcp(host: string, port: number, opts?: ConnectTcpOptions): Promise<EgressTcpConnection>;
  bindUdp(): Promise<EgressUdpSocket>;
  resolve(host: string, opts?: { signal?: AbortSignal }): Promise<string[]>;
  /** Closes every connection and socket opened through this egress. Idempotent. */
  close(): Promise<void>;
}

/**
 * Why a lease's egress stopped taking new sessions: `replaced` (a switch or a new member; the egress
 * still works and drains) or `down` (found dead or failing: what is still connecting will not make it).
 */
export type RetireReason = 'replaced' | 'down';

/** A session's hold on an egress: taken when the session starts, released exactly once at its end. */
export interface EgressLease {
  readonly egress: Egress;
  release(): void;
  /**
   * `handler` runs once if this lease's egress stops taking new sessions while the lease is held
   * (a switch made it draining). A session that has moved no bytes yet may then release this lease
   * and re-dial on the new active egress. Returns an unsubscribe function.
   */
  onRetire(handler: (why: RetireReason) => void): () => void;
}

/** Hands out leases on the egress that new sessions should use (the active one). */
export interface EgressSource {
  acquire(): EgressLease;
}
