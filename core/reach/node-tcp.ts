import { connect as tcpConnect, type Socket } from 'node:net';
import { abortReason, ErrorCodes, GatehopError, isGatehopError, type ErrorCode, settleFirst } from '../common/index.js';
import { clampedTcpSocket } from './path-mtu.js';
import { dialThroughUpstream, type UpstreamProxy } from './upstream-proxy.js';

export interface NodeTcpOptions {
  host: string;
  port: number;
  /** Through the user's proxy (CONNECT or SOCKS5), as OpenVPN's socks-proxy/http-proxy do. */
  upstream?: UpstreamProxy | null;
  signal?: AbortSignal;
  /** What the connection is for, in errors ("SSTP to vpn123.opengw.net (1.2.3.4:443)"). */
  what: string;
}

/**
 * A TCP connection to a node, straight or through the upstream proxy: the one way every tunnel
 * protocol (OpenVPN over TCP, SSTP, SE-VPN) reaches a node's TCP port. Nagle is off: SoftEther and
 * Nagle stall each other on small frames (shared/docs/machine-notes.md). Straight to a node, the
 * SYN offers an MSS that fits CARRIER_PATH_MTU (path-mtu.ts), so an MTU black hole on the way does
 * not stall the carrier. Errors carry stable codes:
 * refused, unreachable, failed; the upstream's own (GH_ERR_UPSTREAM_*) pass through.
 */
export async function dialNodeTcp(o: NodeTcpOptions): Promise<Socket> {
  o.signal?.throwIfAborted();
  if (o.upstream) {
    try {
      const s = await dialThroughUpstream(o.upstream, o.host, o.port, o.signal ? { signal: o.signal } : {});
      s.setNoDelay(true);
      return s;
    } catch (err) {
      if (o.signal?.aborted) throw abortReason(o.signal, o.what);
      if (isGatehopError(err)) throw err;
      throw new GatehopError(
        ErrorCodes.UPSTREAM_FAILED,
        `${o.what} through ${o.upstream.display}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
  return settleFirst<Socket>({ signal: o.signal, what: o.what }, (settle) => {
    // Segments from the node sized for CARRIER_PATH_MTU, where the socket can be made so (path-mtu.ts).
    const clamped = clampedTcpSocket(o.host);
    const s = clamped
      ? clamped.setNoDelay(true).connect({ host: o.host, port: o.port })
      : tcpConnect({ host: o.host, port: o.port, noDelay: true });
    s.once('connect', () => settle.resolve(s));
    s.once('error', (err: NodeJS.ErrnoException) =>
      settle.reject(new GatehopError(tcpErrorCode(err), `${o.what}: ${err.message}`, { cause: err })),
    );
    return (resolved) => {
      if (resolved) s.removeAllListeners('error');
      else s.destroy();
    };
  });
}

/** The stable code for a socket error: refused, unreachable, reset, or failed. */
export function tcpErrorCode(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'ECONNREFUSED') return ErrorCodes.EGRESS_CONNECT_REFUSED;
  if (err.code === 'EHOSTUNREACH' || err.code === 'ENETUNREACH') return ErrorCodes.EGRESS_HOST_UNREACHABLE;
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return ErrorCodes.EGRESS_CONNECTION_RESET;
  return ErrorCodes.EGRESS_FAILED;
}

/**
 * A failure of the network on the way, not an answer of the node (#44: what the protocol ladder
 * learns from): silence (a timeout), a reset, a refused port, no route.
 */
export function isNetworkFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    code === ErrorCodes.EGRESS_CONNECT_TIMEOUT ||
    code === ErrorCodes.EGRESS_CONNECT_REFUSED ||
    code === ErrorCodes.EGRESS_HOST_UNREACHABLE ||
    code === ErrorCodes.EGRESS_NETWORK_UNREACHABLE ||
    code === ErrorCodes.EGRESS_CONNECTION_RESET
  );
}
