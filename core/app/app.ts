import { join } from 'node:path';
import { formatEndpoint, type Endpoint, type Logger } from '../common/index.js';
import { DirectEgress, EgressManager, SingleEgressSource, TunnelEgress, UnavailableEgress, type Egress, type EgressSource } from '../egress/index.js';
import { Selector, type Ranking } from '../selector/index.js';
import { Credentials, ProxyServer } from '../socks5/index.js';
import { Store } from '../store/index.js';
import { NodeList, OFFICIAL_ENDPOINTS, staticNodeFromFile, type VpnGateNode } from '../vpngate/index.js';
import type { GatehopConfig } from './config.js';

export interface RunningApp {
  readonly proxy: ProxyServer;
  readonly egress: Egress;
  /** With --egress vpngate: the active and draining tunnels. */
  readonly manager: EgressManager | null;
  readonly listening: { proxy: Endpoint };
  readonly nodes: NodeList | null;
  readonly selector: Selector | null;
  readonly store: Store | null;
  /** Resolves with the first ranking of the node pool (vpngate egress only). */
  readonly firstRanking: Promise<Ranking> | null;
  /** Stops accepting, closes every session and egress, flushes the store. Idempotent. */
  stop(): Promise<void>;
}

interface NodePipeline {
  store: Store;
  nodes: NodeList;
  selector: Selector;
  firstRanking: Promise<Ranking>;
}

/**
 * Keeps one tunnel up: opens the best-ranked node that answers (recording each success and failure
 * in the history), makes it the active egress, and when it dies moves new sessions to the next.
 * Health-driven switching and warm standby come with the switch controller.
 */
class TunnelKeeper {
  #running: Promise<void> | null = null;
  #stopped = false;
  readonly #abort = new AbortController();
  #seq = 0;

  constructor(
    private readonly pipeline: NodePipeline,
    private readonly manager: EgressManager,
    private readonly logger: Logger,
  ) {}

  ensure(): Promise<void> {
    if (this.#stopped || this.manager.active) return Promise.resolve();
    this.#running ??= this.#connectBest().finally(() => (this.#running = null));
    return this.#running;
  }

  async #connectBest(): Promise<void> {
    const { selector, nodes } = this.pipeline;
    const ranking = selector.last ?? (await selector.rank(nodes.nodes));
    for (const ranked of ranking.ranked) {
      if (this.#stopped) return;
      const node = ranked.node;
      const started = Date.now();
      try {
        const egress = await TunnelEgress.open({ id: `tunnel-${++this.#seq}`, nodeId: node.id, profileText: node.profile, logger: this.logger, connectTimeoutMs: 20_000, signal: this.#abort.signal });
        if (this.#stopped) {
          await egress.close();
          return;
        }
        selector.recordSuccess(node.id, { connectMs: Date.now() - started });
        egress.onClose((reason) => {
          if (this.#stopped) return;
          this.manager.clearActive(egress, reason);
          selector.recordFailure(node.id);
          void selector.rank(nodes.nodes).then(() => this.ensure(), () => this.ensure());
        });
        this.manager.setActive(egress, `best reachable node ${node.id} (score ${Math.round(ranked.terms.total * 10) / 10})`);
        this.logger.info({ event: 'tunnel-active', nodeId: node.id, egressId: egress.id, address: egress.config.address, durationMs: Date.now() - started }, `tunnel to ${node.id} is up`);
        return;
      } catch (err) {
        if (this.#stopped) return;
        selector.recordFailure(node.id);
        this.logger.info({ event: 'tunnel-failed', nodeId: node.id, err: (err as Error).message, durationMs: Date.now() - started }, `tunnel to ${node.id} failed; trying the next node`);
      }
    }
    this.logger.warn({ event: 'no-tunnel', candidates: ranking.ranked.length }, 'no node could be reached; retrying at the next list refresh');
  }

  stop(): void {
    this.#stopped = true;
    this.#abort.abort();
  }
}

/** The list → scoring → history pipeline of the vpngate egress. */
async function startNodePipeline(config: GatehopConfig, logger: Logger): Promise<NodePipeline> {
  const store = new Store({ path: join(config.dataDir, 'gatehop.db'), logger });
  const staticNodes = config.ovpn.map((f) => staticNodeFromFile(f));
  const endpoints = config.api.length > 0 ? config.api : staticNodes.length > 0 ? [] : OFFICIAL_ENDPOINTS;
  const nodes = new NodeList({
    endpoints,
    staticNodes,
    refreshMs: config.listRefreshMs,
    logger,
    cache: {
      load: () => store.loadNodeList<VpnGateNode>(),
      save: (list) => store.saveNodeList(list),
    },
  });
  const selector = new Selector(config.selector, store, logger);
  await nodes.start();
  const rank = (list: readonly VpnGateNode[]): Promise<Ranking> =>
    selector.rank(list).catch((err: unknown) => {
      logger.warn({ event: 'ranking-failed', err: (err as Error).message }, 'ranking the node pool failed');
      throw err;
    });
  nodes.onChange((list) => void rank(list).catch(() => {}));
  return { store, nodes, selector, firstRanking: rank(nodes.nodes) };
}

/** Assembles and starts the core: node pipeline (vpngate) → egress → proxy front end. */
export async function startApp(config: GatehopConfig, logger: Logger): Promise<RunningApp> {
  const credentials = config.authFile ? Credentials.load(config.authFile) : null;
  const pipeline = config.egress === 'vpngate' ? await startNodePipeline(config, logger) : null;
  const egress: Egress = config.egress === 'direct' ? new DirectEgress('direct') : new UnavailableEgress('vpngate', 'no tunnel is up yet');
  const manager = pipeline ? new EgressManager(egress, logger) : null;
  const source: EgressSource = manager ?? new SingleEgressSource(egress);
  const keeper = pipeline && manager ? new TunnelKeeper(pipeline, manager, logger) : null;
  if (pipeline && keeper) {
    void pipeline.firstRanking.then(() => keeper.ensure(), () => {});
    pipeline.nodes.onChange(() => void keeper.ensure());
  }
  const proxy = new ProxyServer({ ...config.proxy, host: config.listen.host, port: config.listen.port, credentials }, source, logger);
  let proxyAt: Endpoint;
  try {
    proxyAt = await proxy.listen();
  } catch (err) {
    keeper?.stop();
    await (manager ?? egress).close();
    pipeline?.nodes.close();
    pipeline?.store.close();
    throw err;
  }
  let stopping: Promise<void> | null = null;
  return {
    proxy,
    egress,
    manager,
    listening: { proxy: proxyAt },
    nodes: pipeline?.nodes ?? null,
    selector: pipeline?.selector ?? null,
    store: pipeline?.store ?? null,
    firstRanking: pipeline?.firstRanking ?? null,
    stop: () =>
      (stopping ??= (async () => {
        keeper?.stop();
        await proxy.close();
        await (manager ?? egress).close();
        pipeline?.nodes.close();
        await pipeline?.firstRanking.catch(() => {});
        pipeline?.store.close();
        logger.info({ event: 'stopped' }, 'gatehop stopped');
      })()),
  };
}

export function describeListening(app: RunningApp, config: GatehopConfig): string {
  const admin = config.admin ? `${formatEndpoint(config.admin)} (admin API not in this build yet)` : 'off';
  const egress = app.nodes ? `vpngate (${app.nodes.nodes.length} nodes)` : app.egress.id;
  return `gatehop ready: proxy socks5+http://${formatEndpoint(app.listening.proxy)} egress=${egress} admin=${admin}`;
}
