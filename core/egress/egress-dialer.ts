import type { Egress } from '../contracts/index.js';
import type { Dialer } from '../reach/index.js';

/**
 * A `Dialer` straight onto one egress, for Gatehop's own checks of it (URL tests, probes): names
 * are resolved by the egress (inside the tunnel), and the caller's signal bounds the connect.
 */
export function egressDialer(egress: Egress): Dialer {
  return {
    via: 'tunnel',
    dial: async (host, port, signal) => (await egress.connectTcp(host, port, { signal })).stream,
  };
}
