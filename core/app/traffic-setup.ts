import { readNetworkSnapshot, type Logger, type NetworkWatch } from '../common/index.js';
import type { ProxyFlowEnd, ProxyServer } from '../proxy/index.js';
import type { Store } from '../store/index.js';
import { TrafficBook } from '../traffic/index.js';
import { networkSeenOf } from './network-seen.js';

/** How long a network read by this module (no watch: `--egress direct`) stands. */
const NETWORK_READ_MS = 10_000;

/**
 * The traffic ledger of this core (#64): kept in the store (memory only without one), told of the
 * network by the watch (or by reading it at most every 10 s without one), and fed by both
 * listeners: this computer's (`local`) and the shared one's (`lan`, with the device's name).
 */
export function startTraffic(store: Store | null, network: NetworkWatch | null, logger: Logger): TrafficBook {
  const describe = networkSeenOf;
  let current = describe(network?.snapshot ?? readNetworkSnapshot());
  let readAt = Date.now();
  network?.onChange((c) => void (current = describe(c.snapshot)));
  return new TrafficBook({
    repo: store?.traffic ?? null,
    settings: store,
    network: () => {
      if (!network && Date.now() - readAt > NETWORK_READ_MS) {
        current = describe(readNetworkSnapshot());
        readAt = Date.now();
      }
      return current;
    },
    logger,
  });
}

/**
 * Counts every flow that ends on `server`. `deviceName` is given for the shared listener: it names
 * the device a flow came from (its user is the device's id).
 */
export function countFlows(
  traffic: TrafficBook,
  server: ProxyServer,
  deviceName: ((user: string) => string) | null,
): () => void {
  const lan = deviceName !== null;
  return server.onFlowEnd(({ sessionId, ...end }: ProxyFlowEnd) => {
    const device = lan && end.user ? deviceName(end.user) : '';
    traffic.record(
      { ...end, id: lan ? `lan-${sessionId}` : String(sessionId), listener: lan ? 'lan' : 'local' },
      device,
    );
  });
}
