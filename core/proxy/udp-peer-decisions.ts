import type { Logger } from '../common/index.js';
import type { Decision, Flow } from '../rules/index.js';
import type { Router } from '../router/index.js';
import type { ProxyStats } from './proxy-stats.js';
import { bump } from './proxy-stats.js';

/** Routing decisions waiting at once per association; datagrams past this are dropped (UDP may drop). */
const MAX_PENDING = 32;
/** Decisions remembered per association, by peer (the table is asked again for a new peer). */
const MAX_CACHED = 256;

/**
 * Where one association's packets go, by peer: one association talks to many peers, and each
 * packet goes where the table sends its peer. A decision is remembered per peer (the client's
 * address and port are the association's, so the peer is the key), made at once when the table
 * can (`decideNow`), else asked (at most MAX_PENDING at once; past that, the packet is dropped).
 */
export class UdpPeerDecisions {
  readonly #cache = new Map<string, Decision>();
  #pending = 0;

  constructor(
    private readonly router: Router,
    private readonly stats: ProxyStats,
    private readonly log: Logger,
    private readonly closed: () => boolean,
  ) {}

  /** `then` with the peer's decision, now or when the table has answered; nothing if the packet is dropped. */
  route(flow: Flow, then: (d: Decision) => void): void {
    const key = `${flow.host}:${flow.port}`;
    const cached = this.#cache.get(key);
    if (cached) return then(cached);
    const known = this.router.decideNow(flow);
    if (known) return then(this.#remember(key, known));
    if (this.#pending >= MAX_PENDING) {
      this.stats.udp.otherDropped++;
      return;
    }
    this.#pending++;
    this.router.decide(flow).then(
      (d) => {
        this.#pending--;
        if (!this.closed()) then(this.#remember(key, d));
      },
      (err: Error) => {
        this.#pending--;
        this.stats.udp.otherDropped++;
        this.log.warn({ event: 'udp-route-failed', err: err.message }, 'routing a UDP packet failed');
      },
    );
  }

  clear(): void {
    this.#cache.clear();
  }

  #remember(key: string, d: Decision): Decision {
    if (!this.#cache.has(key)) {
      if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
      this.#cache.set(key, d);
      bump(this.stats.routed, d.target);
    }
    return d;
  }
}
