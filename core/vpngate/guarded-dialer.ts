import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { abortReason, ErrorCodes, GatehopError, isLocalName } from '../common/index.js';
import { defaultAddressPolicy, type AddressPolicy } from './csv.js';
import type { Dialer } from './http-get.js';

/**
 * A dialer for URLs someone else chose (a mirror named by a directory page, a redirect it sends):
 * never to this machine, its link or (unless the policy allows) its LAN. A name is resolved here
 * when the dialer goes straight out, every address it has is checked, and the checked address is
 * the one dialled, so a name that answers differently the second time (DNS rebinding) cannot slip
 * through. Through a tunnel or the upstream proxy the far side resolves names: only literal
 * addresses and local names are checked there. For a tunnel that far side is a node, far from this
 * machine; the user's upstream proxy may be on this machine or its LAN, where a name such as
 * `127.0.0.1.nip.io` does reach local addresses (known gap, #47: checking needs a lookup here).
 */
export function guardedDialer(
  inner: Dialer,
  policy: AddressPolicy = defaultAddressPolicy,
  resolve: (host: string) => Promise<{ address: string }[]> = (host) => lookup(host, { all: true, verbatim: true }),
): Dialer {
  const refuse = (host: string, what: string): never => {
    throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `${host} is ${what}: a list source may not point there`);
  };
  return {
    via: inner.via,
    dial: async (host, port, signal) => {
      if (isLocalName(host)) refuse(host, 'this machine');
      if (isIP(host) !== 0) {
        const why = policy(host);
        if (why !== null) refuse(host, `a ${why} address`);
        return inner.dial(host, port, signal);
      }
      if (inner.via !== 'direct') return inner.dial(host, port, signal);
      if (signal.aborted) throw abortReason(signal, `resolve ${host}`);
      let addrs: { address: string }[];
      try {
        addrs = await resolve(host);
      } catch (err) {
        throw new GatehopError(
          ErrorCodes.LIST_FETCH_FAILED,
          `resolve ${host}: ${(err as NodeJS.ErrnoException).code}`,
          {
            cause: err,
          },
        );
      }
      for (const a of addrs) {
        const why = policy(a.address);
        if (why !== null) refuse(host, `a name for a ${why} address (${a.address})`);
      }
      if (addrs.length === 0) throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `resolve ${host}: no address`);
      return inner.dial(addrs[0]!.address, port, signal);
    },
  };
}
