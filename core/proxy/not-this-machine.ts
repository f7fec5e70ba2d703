import { isIP } from 'node:net';
import { ErrorCodes, GatehopError, unbracket } from '../common/index.js';
import type { Egress } from '../contracts/index.js';
import { classifyAddress } from '../reach/index.js';

/**
 * The address to dial `host` at on DIRECT for a captured program: resolved here, refused when any
 * answer is this machine's own (loopback, unspecified), and the address that was checked is the
 * one dialled (no second lookup that could answer otherwise).
 */
export async function notThisMachine(direct: Egress, host: string, signal: AbortSignal): Promise<string> {
  const addresses = isIP(unbracket(host)) ? [unbracket(host)] : await direct.resolve(host, { signal });
  const own = addresses.find((a) => {
    const c = classifyAddress(a);
    return c === 'loopback' || c === 'unspecified';
  });
  if (own !== undefined || addresses.length === 0)
    throw new GatehopError(
      ErrorCodes.EGRESS_NOT_ALLOWED,
      `${host} is this machine (${own ?? 'no address'}): a captured program does not reach this machine's own services through Gatehop`,
    );
  return addresses[0]!;
}
