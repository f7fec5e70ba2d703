import type { Logger } from '../common/index.js';
import type { Ranking } from '../selector/index.js';
import type { Store } from '../store/index.js';
import type { VpnGateNode } from '../vpngate/index.js';

/** How nodes are reached: directly, or through the user's other proxy. */
export type NodePath = 'direct' | 'upstream';

/**
 * The path ladder (upstream.nodes: fallback): a ranking in which no node of the pool answered takes
 * the other path for the next one (direct → the upstream, or back when the upstream reaches none
 * either); a ranking with nodes in it keeps its path, remembered per network in the store.
 */
export class NodePathLadder {
  #path: NodePath = 'direct';
  #network = 'default';
  #onPath: (path: NodePath) => void = () => {};

  constructor(
    /** upstream.nodes is `fallback` (read at each use: a reload changes it). */
    private readonly enabled: () => boolean,
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  get path(): NodePath {
    return this.#path;
  }

  /** Another network, or one known again: the way that worked there last, else direct first. */
  setNetwork(key: string): void {
    if (key === this.#network) return;
    this.#network = key;
    const remembered = this.#remembered(key);
    this.#set(remembered ?? 'direct', remembered ? 'remembered for this network' : 'a new network: direct first');
  }

  /** Told of the path whenever it changes, and at once. */
  listen(fn: (path: NodePath) => void): void {
    this.#onPath = fn;
    fn(this.#path);
  }

  /** Forgets the way that reached nodes on this network: direct first again. */
  forget(): void {
    try {
      this.store.setSetting(`node-path ${this.#network}`, '');
    } catch {
      /* nothing was kept */
    }
    this.#set('direct', 'forgotten by the user');
  }

  /** One ranking of `pool`: keeps the path that answered, or takes the other one. */
  climb(r: Ranking, pool: readonly VpnGateNode[]): void {
    if (!this.enabled() || pool.length === 0) return;
    if (r.ranked.length > 0) return this.#remember();
    if (!r.excluded.some((x) => x.reason === 'unreachable')) return; // backed off or filtered: says nothing of the path
    this.#set(
      this.#path === 'direct' ? 'upstream' : 'direct',
      this.#path === 'direct' ? 'no node answered directly' : 'no node answered through the upstream proxy either',
    );
  }

  #set(path: NodePath, reason: string): void {
    const changed = path !== this.#path;
    this.#path = path;
    if (changed) this.#onPath(path);
    if (!changed || !this.enabled()) return;
    this.logger.info(
      { event: 'node-path', path, reason, network: this.#network },
      path === 'upstream'
        ? `reaching nodes through the upstream proxy on this network: ${reason}`
        : `reaching nodes directly on this network: ${reason}`,
    );
  }

  #remember(): void {
    try {
      if (this.#remembered(this.#network) !== this.#path)
        this.store.setSetting(`node-path ${this.#network}`, this.#path);
    } catch {
      /* remembered for this run only */
    }
  }

  #remembered(network: string): NodePath | null {
    try {
      const v = this.store.setting(`node-path ${network}`);
      return v === 'direct' || v === 'upstream' ? v : null;
    } catch {
      return null;
    }
  }
}
