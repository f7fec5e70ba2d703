import type { AdminCore } from './admin-core.js';
import { supported } from './http-util.js';
import type { z } from 'zod';
import type { OpOutput } from './contract.js';
import type { trafficOps } from './schemas/traffic.js';

type TrafficOps = typeof trafficOps;
type TrafficImpls = {
  [K in keyof TrafficOps]: (input: z.infer<TrafficOps[K]['input']>) => OpOutput<K>;
};

/** The traffic ledger's operations (#64): what the Traffic view, `gatehop traffic` and the tray ask. */
export function trafficOperations(core: AdminCore): TrafficImpls {
  const traffic = () => supported(core.traffic, 'the traffic ledger is not available in this embedding');
  return {
    getTraffic: ({ days, nodesOnly }) => ({
      ...traffic().summary(days ?? 30, nodesOnly ?? false),
      options: traffic().options,
      persistent: core.store != null,
    }),
    getClosedConnections: ({ q, limit }) => traffic().closed(q ?? '', limit ?? 200),
    exportTraffic: ({ days }) => traffic().csv(days ?? traffic().options.retentionDays),
    setTrafficOptions: (change) => traffic().setOptions(change),
    eraseTraffic: () => {
      traffic().erase();
      return null;
    },
  };
}
