import { networkKeyOf, readNetworkSnapshot, type Logger } from '../common/index.js';
import { classifyAddress, refusedAddress } from '../reach/index.js';
import { DirectEgress } from '../egress/index.js';
import { ProtocolChoice, SwitchController } from '../groups/index.js';
import { Selector, type Ranking } from '../selector/index.js';
import { Store, WEAK_TLS_REMEMBER_MS } from '../store/index.js';
import {
  NodeList,
  OFFICIAL_ENDPOINTS,
  staticNodeFromFile,
  type ListVia,
  type NodeListStore,
  type SourceOptions,
  type VpnGateNode,
} from '../vpngate/index.js';
import { type Dialer } from '../reach/index.js';
import { createHonesty } from './honesty-setup.js';
import type { HonestyMonitor } from '../honesty/index.js';
import { NodeAccess } from './node-access.js';
import { protocolMemoryOf } from './protocol-memory.js';
import { protocolOptionsOf, type GatehopConfig } from './config.js';

export interface NodePipeline {
  store: Store;
  /** What each network taught about protocols: set to this network before the first probe. */
  ladder: ProtocolChoice;
  nodes: NodeList;
  selector: Selector;
  access: NodeAccess;
  /** The honesty checks of nodes (core/honesty): their verdicts keep flagged nodes out of the ranking. */
  honesty: HonestyMonitor;
  /** The host network for the honesty checks' reference copies (closed with the pipeline). */
  honestyDirect: DirectEgress;
  firstRanking: Promise<Ranking>;
  /** Ranks the current list (after a refresh). */
  rankLatest(): Promise<Ranking>;
}

/** What the node list reads and writes in the store (a forgotten node's verdict goes with it). */
function nodeListStore(store: Store, forgotten: (ids: readonly string[]) => void): NodeListStore {
  return {
    loadPool: (since) => store.loadPool<VpnGateNode>(since),
    savePool: (nodes, at) => store.savePoolNodes(nodes, at),
    forgetNodes: (ids) => {
      store.forgetNodes(ids);
      forgotten(ids);
    },
    loadListMeta: () => {
      const m = store.loadListMeta();
      return m ? { ...m, via: m.via as ListVia } : null;
    },
    saveListMeta: (m) => store.saveListMeta(m),
    loadSources: () => store.listSources(),
    saveSource: (r) => store.saveListSource(r),
    forgetSource: (url) => store.forgetListSource(url),
  };
}

/** The node list's source options from the config. */
export function sourceOptionsOf(c: GatehopConfig): SourceOptions {
  const v = c.vpngate;
  return {
    userSources: v.sources,
    mirrors: v.mirrors,
    throughTunnel: v.throughTunnel,
    keepDays: v.keepDays,
    timeoutMs: v.timeoutMs,
    headStartMs: v.headStartMs,
  };
}

/** The list → scoring → history pipeline of the vpngate egress. */
export async function startNodePipeline(
  config: GatehopConfig,
  current: () => GatehopConfig,
  store: Store,
  logger: Logger,
  tunnelDialer: () => Dialer | null,
  unsafeLoopbackNodes: boolean,
  late: { controller: () => SwitchController | null; busy: () => boolean },
): Promise<NodePipeline> {
  const staticNodes = config.ovpn.map((f) => staticNodeFromFile(f));
  const endpoints =
    config.api.length > 0
      ? config.api
      : staticNodes.length > 0 && config.vpngate.sources.length === 0
        ? []
        : OFFICIAL_ENDPOINTS;
  // The protocol ladder before anything that sends to nodes: what this network taught (a protocol
  // it blocks) holds from the first probe of the first ranking on (#58).
  const network = networkKeyOf(readNetworkSnapshot());
  const ladder = new ProtocolChoice(protocolOptionsOf(config), protocolMemoryOf(store), logger);
  ladder.setNetwork(network);
  const access = new NodeAccess(current, store, logger, ladder);
  // What a network teaches is kept with the way nodes were reached there (direct, or the upstream).
  access.usePathListener((path) => ladder.setPath(path));
  const honestyDirect = new DirectEgress('honesty-reference');
  let ranked: () => readonly string[] = () => [];
  const honesty = createHonesty(current, store, honestyDirect, logger, {
    controller: late.controller,
    busy: late.busy,
    candidates: () => ranked(),
  });
  // The path that reached nodes on this network last (upstream.nodes: fallback), before the first probe.
  access.setNetwork(network);
  const nodes = new NodeList({
    endpoints,
    endpointKind: config.api.length > 0 ? 'api' : 'official',
    staticNodes,
    refreshMs: config.listRefreshMs,
    logger,
    store: nodeListStore(store, (ids) => honesty.forget(ids)),
    onRekeyed: (ids) => {
      honesty.rekeyed(ids);
      late.controller()?.nodesRekeyed(ids);
    },
    sources: sourceOptionsOf(config),
    dialer: access.listDialer(),
    tunnelDialer,
    // Read per use: vpngate.allowPrivateNodes applies on a reload.
    addressPolicy: (ip) =>
      unsafeLoopbackNodes && classifyAddress(ip) === 'loopback'
        ? null
        : refusedAddress(ip, current().vpngate.allowPrivateNodes),
  });
  // A node found to tamper is not ranked (nor probed): nothing automatic chooses it.
  const selector = new Selector(
    config.selector,
    store,
    logger,
    access.prober,
    (n) => access.reachable(n) ?? access.untrusted(n) ?? (honesty.flagged(n.id) ? 'tampers' : null),
  );
  // The sweep's order: the ranked nodes (what selection would take next), then the rest of the pool.
  ranked = () => {
    const first = selector.last?.ranked.map((r) => r.node.id) ?? [];
    const seen = new Set(first);
    return [...first, ...nodes.nodes.map((n) => n.id).filter((id) => !seen.has(id))];
  };
  selector.onRanked((r) => access.observe(r, nodes.nodes));
  await Promise.all([nodes.start(), access.prepare()]);
  const rank = (list: readonly VpnGateNode[]): Promise<Ranking> =>
    selector.rank(list).catch((err: unknown) => {
      logger.warn({ event: 'ranking-failed', err: (err as Error).message }, 'ranking the node pool failed');
      throw err;
    });
  return {
    store,
    ladder,
    nodes,
    selector,
    access,
    honesty,
    honestyDirect,
    firstRanking: rank(nodes.nodes),
    rankLatest: () => rank(nodes.nodes),
  };
}

export function weakTlsRemembered(store: Store, nodeId: string): boolean {
  return store.weakTlsNodes(Date.now() - WEAK_TLS_REMEMBER_MS).has(nodeId);
}
