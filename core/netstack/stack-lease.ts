import { ErrorCodes, GatehopError, settleFirst } from '../common/index.js';
import type { StackLease } from './stack-types.js';

/** An Ethernet link's DHCP lease, as the stack learns it from lwIP, and who wants to know. */
export class LeaseKeeper {
  #lease: StackLease | null = null;
  readonly #handlers = new Set<(lease: StackLease | null) => void>();

  /** The lease in use, or null (none yet, or lost). */
  get lease(): StackLease | null {
    return this.#lease;
  }

  /** Called with each lease an Ethernet link gets (bound, renewed to another address) or loses (null). */
  onLease(fn: (lease: StackLease | null) => void): () => void {
    this.#handlers.add(fn);
    return () => this.#handlers.delete(fn);
  }

  /** The first lease; GH_ERR_EGRESS_CONNECT_TIMEOUT when none comes in time. */
  whenLeased(opts: { timeoutMs: number; signal?: AbortSignal }): Promise<StackLease> {
    if (this.#lease) return Promise.resolve(this.#lease);
    return settleFirst<StackLease>(
      {
        signal: opts.signal,
        what: 'DHCP',
        deadline: {
          ms: opts.timeoutMs,
          error: () => new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, `no DHCP lease within ${opts.timeoutMs} ms`),
        },
      },
      (settle) =>
        this.onLease((lease) => {
          if (lease) settle.resolve(lease);
        }),
    );
  }

  /**
   * What lwIP reported: a new lease, or none. False when nothing changed: lwIP reports the netif
   * while DHCP binds (address still 0.0.0.0), which loses no lease.
   */
  apply(lease: StackLease | null): boolean {
    if (!lease && !this.#lease) return false;
    this.#lease = lease;
    for (const fn of [...this.#handlers]) fn(lease);
    return true;
  }
}
