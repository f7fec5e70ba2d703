/**
 * Tunnels started in worker threads and failed (crashed, out of heap, hung) in this process, for
 * `gatehop_tunnel_worker_failures_total`; threads created and threads reused by a later tunnel
 * (the pool), and the idle threads the pools hold now, for /status. One process-wide tally: a
 * failed worker's egress is gone by the time anyone scrapes.
 */
export const tunnelWorkerCounters = { started: 0, failures: 0, threadsCreated: 0, threadsReused: 0, idleThreads: 0 };
