import {
  networkKeyOf,
  readNetworkSnapshot,
  type Logger,
  type NetworkSnapshot,
  type NetworkWatch,
} from '../common/index.js';
import type { ProxyFlowEnd, ProxyServer } from '../proxy/index.js';
import type { Store } from '../store/index.js';
import { TrafficBook } from '../traffic/index.js';

/** How long a network read by this module (no watch: `--egress direct`) stands. */
const NETWORK_READ_MS = 10_000;

/**
 * What the user is shown for a network: the interfaces a default route leaves by, each with the
 * /24 of its IPv4 address (what networkKeyOf hashes): "wlan0 192.168.1.x". "offline" without any.
 */
export function networkLabelOf(s: NetworkSnapshot): string {
  const wayOut = s.defaultInterfaces?.length ? new Set(s.defaultInterfaces) : null;
  const parts = new Set<string>();
  for (const a of s.addresses) {
    const [name, addr] = a.split(' ');
    if (!name || !addr || (wayOut && !wayOut.has(name)) || !/^\d+\.\d+\.\d+\.\d+$/.test(addr)) continue;
    parts.add(`${name} ${addr.split('.').slice(0, 3).join('.')}.x`);
  }
  return [...parts].sort().join(', ') || 'offline';
}

/**
 * The traffic ledger of this core (#64): kept in the store (memory only without one), told of the
 * network by the watch (or by reading it at most every 10 s without one), and fed by both
 * listeners: this computer's (`local`) and the shared one's (`lan`, with the device's name).
 */
export function startTraffic(store: Store | null, network: NetworkWatch | null, logger: Logger): TrafficBook {
  const describe = (s: NetworkSnapshot) => ({ key: networkKeyOf(s), label: networkLabelOf(s) });
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
