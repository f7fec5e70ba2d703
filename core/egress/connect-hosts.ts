/**
 * The distinct destinations connects through an egress reached and failed to reach since the last
 * take (#60): the health monitor tells "every connect fails, to many places" (the node's uplink or
 * resolver is dead: urgent) from "one site is down" (a user retrying it must not move them from
 * node to node). Bounded: past MAX_HOSTS names a set stops growing, which is already "many".
 */
export const MAX_HOSTS = 64;

export interface ConnectHostCounts {
  /** Distinct destinations a connect reached. */
  ok: number;
  /** Distinct destinations a connect failed to reach (not counting clients that gave up). */
  failed: number;
}

export class ConnectHosts {
  #ok = new Set<string>();
  #failed = new Set<string>();

  ok(host: string): void {
    if (this.#ok.size < MAX_HOSTS) this.#ok.add(host.toLowerCase());
  }

  failed(host: string): void {
    if (this.#failed.size < MAX_HOSTS) this.#failed.add(host.toLowerCase());
  }

  /** The counts since the last take, and a fresh start. */
  take(): ConnectHostCounts {
    const counts = { ok: this.#ok.size, failed: this.#failed.size };
    this.#ok = new Set();
    this.#failed = new Set();
    return counts;
  }
}
