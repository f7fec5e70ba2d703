import { ErrorCodes, GatehopError, type ErrorCode } from '../common/index.js';

const ERRNO_TO_CODE: Record<string, ErrorCode> = {
  ECONNREFUSED: ErrorCodes.EGRESS_CONNECT_REFUSED,
  ECONNRESET: ErrorCodes.EGRESS_CONNECT_REFUSED,
  EHOSTUNREACH: ErrorCodes.EGRESS_HOST_UNREACHABLE,
  EHOSTDOWN: ErrorCodes.EGRESS_HOST_UNREACHABLE,
  ENETUNREACH: ErrorCodes.EGRESS_NETWORK_UNREACHABLE,
  ENETDOWN: ErrorCodes.EGRESS_NETWORK_UNREACHABLE,
  EADDRNOTAVAIL: ErrorCodes.EGRESS_NETWORK_UNREACHABLE,
  ETIMEDOUT: ErrorCodes.EGRESS_CONNECT_TIMEOUT,
  ENOTFOUND: ErrorCodes.EGRESS_DNS_NOT_FOUND,
  EAI_AGAIN: ErrorCodes.EGRESS_DNS_NOT_FOUND,
  EAI_NODATA: ErrorCodes.EGRESS_DNS_NOT_FOUND,
  EAI_NONAME: ErrorCodes.EGRESS_DNS_NOT_FOUND,
  EACCES: ErrorCodes.EGRESS_NOT_ALLOWED,
  EPERM: ErrorCodes.EGRESS_NOT_ALLOWED,
};

/** Wraps a host socket or resolver error into a GatehopError naming the target. */
export function mapSocketError(err: unknown, target: string): GatehopError {
  if (err instanceof GatehopError) return err;
  const errno = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  const code = ERRNO_TO_CODE[errno] ?? ErrorCodes.EGRESS_FAILED;
  const detail = err instanceof Error ? err.message : String(err);
  return new GatehopError(code, `connect to ${target} failed: ${detail}`, { cause: err });
}
