import { ErrorCodes, type ErrorCode } from '../common/index.js';
import { Reply, type ReplyCode } from './socks5-codec.js';

/** The one table from egress error codes to SOCKS5 replies and HTTP statuses. */
const TABLE: Partial<Record<ErrorCode, { socks: ReplyCode; http: number }>> = {
  [ErrorCodes.EGRESS_CONNECT_REFUSED]: { socks: Reply.CONNECTION_REFUSED, http: 502 },
  [ErrorCodes.EGRESS_CONNECTION_RESET]: { socks: Reply.CONNECTION_REFUSED, http: 502 },
  [ErrorCodes.EGRESS_HOST_UNREACHABLE]: { socks: Reply.HOST_UNREACHABLE, http: 502 },
  [ErrorCodes.EGRESS_DNS_NOT_FOUND]: { socks: Reply.HOST_UNREACHABLE, http: 502 },
  [ErrorCodes.EGRESS_NETWORK_UNREACHABLE]: { socks: Reply.NETWORK_UNREACHABLE, http: 502 },
  [ErrorCodes.EGRESS_CONNECT_TIMEOUT]: { socks: Reply.TTL_EXPIRED, http: 504 },
  [ErrorCodes.SESSION_CONNECT_TIMEOUT]: { socks: Reply.TTL_EXPIRED, http: 504 },
  [ErrorCodes.EGRESS_NOT_ALLOWED]: { socks: Reply.NOT_ALLOWED, http: 403 },
};

export function socksReplyFor(code: string | undefined): ReplyCode {
  return (code && TABLE[code as ErrorCode]?.socks) || Reply.GENERAL_FAILURE;
}

export function httpStatusFor(code: string | undefined): number {
  return (code && TABLE[code as ErrorCode]?.http) || 502;
}
