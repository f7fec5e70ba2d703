import { BulkMeter, type BulkSample } from './bulk-meter.js';
import { ConnectHosts, countsAgainstNode, type ConnectHostCounts } from './connect-hosts.js';
import type { ConnectTcpOptions, EgressStats } from '../contracts/index.js';

/**
 * What a tunnel tells the health monitor about its connects and downloads (#60), the same for a
 * tunnel on this thread and one in a worker: which destinations connects reached and failed to
 * reach, and what bulk downloads took (metered from the monitor's first question on).
 */
export class HealthTaps {
  readonly #hosts = new ConnectHosts();
  #bulk: BulkMeter | null = null;

  constructor(private readonly stats: EgressStats) {}

  /** The meter a new stream reports its data to, or null while nobody asks. */
  get bulk(): BulkMeter | null {
    return this.#bulk;
  }

  /** A connect to `host` came up (Gatehop's own checks are not counted). */
  connected(host: string, opts: ConnectTcpOptions): void {
    if (!opts.check) this.#hosts.ok(host);
  }

  /**
   * A connect to `host` started at `startedAt` failed. A timeout, a refusal or a name that failed
   * says something about the node; a client that gave up at once does not, nor does one of
   * Gatehop's own checks.
   */
  connectFailed(host: string, err: unknown, opts: ConnectTcpOptions, startedAt: number): void {
    if (opts.check) return;
    this.stats.failures++;
    if (countsAgainstNode(!!opts.signal?.aborted, startedAt)) this.#hosts.failed(host, err);
  }

  /** Distinct destinations connects reached and failed to reach since the last call. */
  takeConnectHosts(): ConnectHostCounts {
    return this.#hosts.take();
  }

  /** What bulk downloads took since the last call, and how fast (bulk-meter.ts); null at the first. */
  takeBulk(): BulkSample | null {
    if (!this.#bulk) {
      this.#bulk = new BulkMeter();
      return null;
    }
    return this.#bulk.take();
  }
}
