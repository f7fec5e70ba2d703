import { TunnelEgress } from './tunnel-egress.js';
import type { Egress } from '../contracts/index.js';
import { findWorkerScript } from './worker/worker-entry.js';
import { WorkerTunnelEgress, type WorkerTunnelOptions } from './worker/worker-tunnel-egress.js';

/** A tunnel to one node, in a worker thread of its own or (threads: false) on this thread. */
export type Tunnel = TunnelEgress | WorkerTunnelEgress;

export interface OpenTunnelOptions extends WorkerTunnelOptions {
  /** Run the tunnel in a worker thread (the default); false keeps it on the calling thread. */
  threads?: boolean;
}

let warnedNoWorker = false;

export function openTunnel(opts: OpenTunnelOptions): Promise<Tunnel> {
  const { threads = true, ...rest } = opts;
  // Run from TypeScript source without a bundled worker: the tunnel still works, on this thread.
  const inThread = !threads || findWorkerScript() === null;
  if (threads && inThread && !warnedNoWorker) {
    warnedNoWorker = true;
    opts.logger.warn(
      { event: 'tunnel-worker-missing' },
      'no tunnel worker script (run from source without a build): tunnels run on the main thread',
    );
  }
  return inThread ? TunnelEgress.open(rest) : WorkerTunnelEgress.open(rest);
}

export function isTunnel(e: Egress | null | undefined): e is Tunnel {
  return e instanceof TunnelEgress || e instanceof WorkerTunnelEgress;
}
