import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { abortReason, ErrorCodes, GatehopError } from '../common/index.js';
import { defaultAddressPolicy, isLocalName, type AddressPolicy } from './address.js';
import type { Dialer } from './http-get.js';

/**
 * A dialer for URLs someone else chose (a mirror named by a directory page, a redirect it sends):
 * never to this machine, its link or (unless the policy allows) its LAN.
 * - Straight out: a name is resolved here, every address it has is checked, and the checked address
 *   is the one dialled, so a name that answers differently the second time (DNS rebinding) cannot
 *   slip through.
 * - Through an upstream proxy on this machine or its LAN (`resolvesNearby`): that proxy reaches
 *   what a name such as `127.0.0.1.nip.io` points at, so the name is resolved and checked here too
 *   (#47). The name, not the address, is then dialled: a local client of a far proxy resolves far
 *   away, where this machine's resolver may be poisoned. A name this machine cannot resolve is
 *   left to the proxy. What is left: a name that answers a public address here and a local one to
 *   the proxy a moment later.
 * - Through a tunnel or a far upstream: the far side resolves names, far from this machine; only
 *   literal addresses and local names are checked.
 */
export function guardedDialer(
  inner: Dialer,
  policy: AddressPolicy = defaultAddressPolicy,
  resolve: (host: string) => Promise<{ address: string }[]> = (host) => lookup(host, { all: true, verbatim: true }),
): Dialer {
  const refuse = (host: string, what: string): never => {
    throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `${host} is ${what}: a list source may not point there`);
  };
  const checked = (host: string, addrs: { address: string }[]): void => {
    for (const a of addrs) {
      const why = policy(a.address);
      if (why !== null) refuse(host, `a name for a ${why} address (${a.address})`);
    }
  };
  return {
    via: inner.via,
    ...(inner.resolvesNearby !== undefined ? { resolvesNearby: inner.resolvesNearby } : {}),
    dial: async (host, port, signal) => {
      if (isLocalName(host)) refuse(host, 'this machine');
      if (isIP(host) !== 0) {
        const why = policy(host);
        if (why !== null) refuse(host, `a ${why} address`);
        return inner.dial(host, port, signal);
      }
      if (inner.via !== 'direct' && !inner.resolvesNearby) return inner.dial(host, port, signal);
      if (signal.aborted) throw abortReason(signal, `resolve ${host}`);
      let addrs: { address: string }[];
      try {
        addrs = await resolve(host);
      } catch (err) {
        if (inner.via !== 'direct') return inner.dial(host, port, signal);
        throw new GatehopError(
          ErrorCodes.LIST_FETCH_FAILED,
          `resolve ${host}: ${(err as NodeJS.ErrnoException).code}`,
          {
            cause: err,
          },
        );
      }
      checked(host, addrs);
      if (inner.via !== 'direct') return inner.dial(host, port, signal);
      if (addrs.length === 0) throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `resolve ${host}: no address`);
      return inner.dial(addrs[0]!.address, port, signal);
    },
  };
}
