import type { Egress, EgressLease, EgressSource } from '../contracts/index.js';

/** An EgressSource with one fixed egress; it counts leases so shutdown can tell who is still out. */
export class SingleEgressSource implements EgressSource {
  #leases = 0;

  constructor(readonly egress: Egress) {}

  get leases(): number {
    return this.#leases;
  }

  acquire(): EgressLease {
    this.#leases++;
    let released = false;
    return {
      egress: this.egress,
      release: () => {
        if (released) return;
        released = true;
        this.#leases--;
      },
      // One egress for life: it never retires.
      onRetire: () => () => {},
    };
  }
}
