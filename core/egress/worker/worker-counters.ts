/**
 * Tunnel workers started and failed (crashed, out of heap, hung) in this process, for
 * `gatehop_tunnel_worker_failures_total`. One process-wide tally: a failed worker's egress is gone
 * by the time anyone scrapes.
 */
export const tunnelWorkerCounters = { started: 0, failures: 0 };
