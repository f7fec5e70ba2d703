import { TunnelEgress, type TunnelEgressOptions } from './tunnel-egress.js';
import type { Egress } from './types.js';
import { WorkerTunnelEgress, type WorkerTunnelOptions } from './worker/worker-tunnel-egress.js';

/** A tunnel to one node, in a worker thread of its own or (threads: false) on this thread. */
export type Tunnel = TunnelEgress | WorkerTunnelEgress;

export interface OpenTunnelOptions extends WorkerTunnelOptions {
  /** Run the tunnel in a worker thread (the default); false keeps it on the calling thread. */
  threads?: boolean;
}

export function openTunnel(opts: OpenTunnelOptions): Promise<Tunnel> {
  const { threads = true, heapLimitMb, hangMs, pool, ...rest } = opts;
  if (!threads) return TunnelEgress.open(rest satisfies TunnelEgressOptions);
  return WorkerTunnelEgress.open({ ...rest, ...(heapLimitMb !== undefined ? { heapLimitMb } : {}), ...(hangMs !== undefined ? { hangMs } : {}), ...(pool ? { pool } : {}) });
}

export function isTunnel(e: Egress | null | undefined): e is Tunnel {
  return e instanceof TunnelEgress || e instanceof WorkerTunnelEgress;
}
