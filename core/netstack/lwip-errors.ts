import { ErrorCodes, GatehopError, type ErrorCode } from '../common/index.js';

/** lwIP's err_t values (lwip/err.h). */
export const LwipErr = {
  OK: 0,
  MEM: -1,
  BUF: -2,
  TIMEOUT: -3,
  RTE: -4,
  INPROGRESS: -5,
  VAL: -6,
  WOULDBLOCK: -7,
  USE: -8,
  ALREADY: -9,
  ISCONN: -10,
  CONN: -11,
  IF: -12,
  ABRT: -13,
  RST: -14,
  CLSD: -15,
  ARG: -16,
} as const;

const NAMES = new Map<number, string>(Object.entries(LwipErr).map(([k, v]) => [v, `ERR_${k}`]));

export function lwipErrName(err: number): string {
  return NAMES.get(err) ?? `ERR_${err}`;
}

/** The GatehopError for an lwIP error on a connection; `connecting` maps RST to "refused". */
export function lwipError(err: number, what: string, connecting: boolean): GatehopError {
  let code: ErrorCode;
  if (err === LwipErr.RST) code = connecting ? ErrorCodes.EGRESS_CONNECT_REFUSED : ErrorCodes.NETSTACK_RESET;
  else if (err === LwipErr.ABRT) code = connecting ? ErrorCodes.EGRESS_HOST_UNREACHABLE : ErrorCodes.NETSTACK_ABORTED;
  else if (err === LwipErr.CLSD) code = ErrorCodes.NETSTACK_CLOSED;
  else if (err === LwipErr.RTE) code = ErrorCodes.EGRESS_NETWORK_UNREACHABLE;
  else code = ErrorCodes.NETSTACK_FAILED;
  return new GatehopError(code, `${what}: lwIP ${lwipErrName(err)}`);
}
