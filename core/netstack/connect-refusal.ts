import { isIP } from 'node:net';
import { abortReason, ErrorCodes, GatehopError } from '../common/index.js';

/**
 * Why a TCP connect on a stack is refused before lwIP is asked (null: it may go ahead): the stack
 * closed, an address that is not IPv4 (the tunnel stack is IPv4 only), a bad port, an aborted
 * signal, or the stack's connection limit reached.
 */
export function connectRefusal(
  ip: string,
  port: number,
  signal: AbortSignal | undefined,
  stack: { closed: boolean; open: number; max: number },
): Error | null {
  const target = `${ip}:${port}`;
  if (stack.closed) return new GatehopError(ErrorCodes.NETSTACK_CLOSED, `stack closed: cannot connect to ${target}`);
  if (isIP(ip) !== 4)
    return new GatehopError(ErrorCodes.EGRESS_NETWORK_UNREACHABLE, `${target}: the tunnel stack is IPv4 only`);
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    return new GatehopError(ErrorCodes.EGRESS_FAILED, `${target}: bad port`);
  if (signal?.aborted) return abortReason(signal, `connect to ${target}`);
  if (stack.open >= stack.max)
    return new GatehopError(
      ErrorCodes.NETSTACK_LIMIT,
      `connect to ${target}: ${stack.max} connections already open on this stack`,
    );
  return null;
}
