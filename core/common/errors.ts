/**
 * Every error Gatehop raises carries a stable `code`. Callers branch on `code`, never on message
 * text; each layer wraps with context and keeps the original as `cause`.
 */
export const ErrorCodes = {
  CONFIG_INVALID: 'GH_ERR_CONFIG_INVALID',
  LISTEN_FAILED: 'GH_ERR_LISTEN_FAILED',
  /** `gatehop run` cannot capture here (not Linux, or the capture socket is not listening). */
  CAPTURE_UNAVAILABLE: 'GH_ERR_CAPTURE_UNAVAILABLE',
  /** A shared device's name is not acceptable, or there are too many devices. */
  SHARE_DEVICE_INVALID: 'GH_ERR_SHARE_DEVICE_INVALID',
  /** Letting the shared port in through the firewall failed or was refused (pkexec, the firewall's own tool). */
  SHARE_FIREWALL_FAILED: 'GH_ERR_SHARE_FIREWALL_FAILED',
  /** A network profile's name or choices are not acceptable, there are too many, or there is no network to save one for. */
  NETWORK_PROFILE_INVALID: 'GH_ERR_NETWORK_PROFILE_INVALID',
  ABORTED: 'GH_ERR_ABORTED',
  EGRESS_CONNECT_TIMEOUT: 'GH_ERR_EGRESS_CONNECT_TIMEOUT',
  EGRESS_CONNECT_REFUSED: 'GH_ERR_EGRESS_CONNECT_REFUSED',
  EGRESS_HOST_UNREACHABLE: 'GH_ERR_EGRESS_HOST_UNREACHABLE',
  /** The peer (or something on the way) reset the connection. */
  EGRESS_CONNECTION_RESET: 'GH_ERR_EGRESS_CONNECTION_RESET',
  EGRESS_NETWORK_UNREACHABLE: 'GH_ERR_EGRESS_NETWORK_UNREACHABLE',
  EGRESS_DNS_NOT_FOUND: 'GH_ERR_EGRESS_DNS_NOT_FOUND',
  EGRESS_NOT_ALLOWED: 'GH_ERR_EGRESS_NOT_ALLOWED',
  EGRESS_CLOSED: 'GH_ERR_EGRESS_CLOSED',
  EGRESS_FAILED: 'GH_ERR_EGRESS_FAILED',
  /** A tunnel's worker thread crashed, hung or ran out of memory; only that tunnel is lost. */
  TUNNEL_WORKER_FAILED: 'GH_ERR_TUNNEL_WORKER_FAILED',
  AUTH_FILE_INVALID: 'GH_ERR_AUTH_FILE_INVALID',
  SESSION_HANDSHAKE_TIMEOUT: 'GH_ERR_SESSION_HANDSHAKE_TIMEOUT',
  SESSION_CONNECT_TIMEOUT: 'GH_ERR_SESSION_CONNECT_TIMEOUT',
  SESSION_IDLE_TIMEOUT: 'GH_ERR_SESSION_IDLE_TIMEOUT',
  SESSION_PROTOCOL: 'GH_ERR_SESSION_PROTOCOL',
  SESSION_CLOSED: 'GH_ERR_SESSION_CLOSED',
  BUFFER_OVERFLOW: 'GH_ERR_BUFFER_OVERFLOW',
  NETSTACK_RESET: 'GH_ERR_NETSTACK_RESET',
  NETSTACK_ABORTED: 'GH_ERR_NETSTACK_ABORTED',
  NETSTACK_LIMIT: 'GH_ERR_NETSTACK_LIMIT',
  NETSTACK_CLOSED: 'GH_ERR_NETSTACK_CLOSED',
  NETSTACK_FAILED: 'GH_ERR_NETSTACK_FAILED',
  DNS_TIMEOUT: 'GH_ERR_DNS_TIMEOUT',
  PROFILE_INVALID: 'GH_ERR_PROFILE_INVALID',
  LIST_FETCH_FAILED: 'GH_ERR_LIST_FETCH_FAILED',
  LIST_INVALID: 'GH_ERR_LIST_INVALID',
  STORE_FAILED: 'GH_ERR_STORE_FAILED',
  /** The database was written by a newer Gatehop (a schema this one does not know): refused, left untouched. */
  STORE_TOO_NEW: 'GH_ERR_STORE_TOO_NEW',
  /** The database file is damaged (SQLite reports corruption): moved aside and a fresh one made. */
  STORE_CORRUPT: 'GH_ERR_STORE_CORRUPT',
  SWITCH_IN_PROGRESS: 'GH_ERR_SWITCH_IN_PROGRESS',
  SWITCH_FAILED: 'GH_ERR_SWITCH_FAILED',
  NODE_UNKNOWN: 'GH_ERR_NODE_UNKNOWN',
  /** A node's TLS certificate was refused by the node trust rule (core/reach/node-trust), on any protocol. */
  NODE_CERT_REFUSED: 'GH_ERR_NODE_CERT_REFUSED',
  /** SSTP: TLS to the node failed, or its certificate is not for the node's name or not trusted. */
  SSTP_TLS_FAILED: 'GH_ERR_SSTP_TLS_FAILED',
  /** SSTP: the node answered the SSTP request with another HTTP status, a Call Connect Nak, an Abort or a Disconnect. */
  SSTP_REFUSED: 'GH_ERR_SSTP_REFUSED',
  /** PPP authentication (MS-CHAPv2 or PAP) was refused, or the server's MS-CHAPv2 answer does not prove it knows the password. */
  SSTP_AUTH_FAILED: 'GH_ERR_SSTP_AUTH_FAILED',
  /** The OpenVPN server broke the wire protocol (an impossible TCP record length, say). */
  OVPN_PROTOCOL: 'GH_ERR_OVPN_PROTOCOL',
  /** A malformed SSTP or PPP frame, or a negotiation that cannot finish (LCP, IPCP). */
  SSTP_PROTOCOL: 'GH_ERR_SSTP_PROTOCOL',
  /** SE-VPN: the node broke SoftEther's protocol (a malformed PACK, HTTP head or data block, or one past its bounds). */
  SOFTETHER_PROTOCOL: 'GH_ERR_SOFTETHER_PROTOCOL',
  /** SE-VPN: the node answered with an error (its PACK's `error`), another HTTP status, or a redirect we do not follow. */
  SOFTETHER_REFUSED: 'GH_ERR_SOFTETHER_REFUSED',
  /** SE-VPN: the hub refused the user name and password. */
  SOFTETHER_AUTH_FAILED: 'GH_ERR_SOFTETHER_AUTH_FAILED',
  /** The user's upstream proxy (config `upstream.url`) could not be reached, or failed its handshake. */
  UPSTREAM_FAILED: 'GH_ERR_UPSTREAM_FAILED',
  /** The upstream proxy wants credentials, or refused the ones in `upstream.url`. */
  UPSTREAM_AUTH_FAILED: 'GH_ERR_UPSTREAM_AUTH_FAILED',
  /** The OS proxy settings could not be read or written (tool failed, refused, timed out). */
  SYSPROXY_FAILED: 'GH_ERR_SYSPROXY_FAILED',
  /** Changing the OS proxy settings needs rights the user does not have (macOS exit 14, Windows access denied). */
  SYSPROXY_DENIED: 'GH_ERR_SYSPROXY_DENIED',
  /** No backend for this platform or desktop; the message has the export lines to use by hand. */
  SYSPROXY_UNSUPPORTED: 'GH_ERR_SYSPROXY_UNSUPPORTED',
  /** A settings tool (gsettings, kwriteconfig5, networksetup, reg) is not installed. */
  SYSPROXY_TOOL_MISSING: 'GH_ERR_SYSPROXY_TOOL_MISSING',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export class GatehopError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GatehopError';
    this.code = code;
  }
}

export function isGatehopError(err: unknown, code?: ErrorCode): err is GatehopError {
  return err instanceof GatehopError && (code === undefined || err.code === code);
}

/** A plain `{code, message}` for IPC, HTTP and logs. */
export function errorToJson(err: unknown): { code: string; message: string } {
  if (err instanceof GatehopError) return { code: err.code, message: err.message };
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return { code: typeof code === 'string' ? code : 'GH_ERR_UNKNOWN', message: err.message };
  }
  return { code: 'GH_ERR_UNKNOWN', message: String(err) };
}

const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCodes));

/**
 * The error `errorToJson` described, rebuilt on the other side of a thread or process boundary: a
 * known code comes back as that GatehopError; anything else keeps its code on an EGRESS_FAILED.
 */
export function errorFromJson(j: { code: string; message: string }): GatehopError {
  return isErrorCode(j.code)
    ? new GatehopError(j.code, j.message)
    : new GatehopError(ErrorCodes.EGRESS_FAILED, `${j.message} (${j.code})`);
}

function isErrorCode(code: string): code is ErrorCode {
  return KNOWN_CODES.has(code);
}

/** The error to throw when an AbortSignal fired: its reason if that is an Error. */
export function abortReason(signal: AbortSignal, what: string): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof GatehopError) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, `${what}: timed out`, { cause: reason });
  }
  return new GatehopError(ErrorCodes.ABORTED, `${what}: aborted`, { cause: reason });
}
