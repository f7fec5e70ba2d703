import { type Logger, detach } from '../common/index.js';
import { EgressManager, HubMacs, openTunnel, TunnelWorkerPool, type LinkSpec } from '../egress/index.js';
import { SelectionState, SwitchController } from '../groups/index.js';
import { wireHonesty } from './honesty-setup.js';
import type { GatehopConfig } from './config.js';
import { weakTlsRemembered, type NodePipeline } from './node-pipeline.js';

/** The switch controller over the node pipeline: first tunnel after the first ranking, then switching. */
export function startController(
  config: GatehopConfig,
  current: () => GatehopConfig,
  pipeline: NodePipeline,
  manager: EgressManager,
  workers: TunnelWorkerPool | null,
  logger: Logger,
): SwitchController {
  const { store, nodes, selector } = pipeline;
  // Each open SE-VPN tunnel to a node has a MAC of its own on its hub.
  const hubMacs = new HubMacs();
  const controller = new SwitchController({
    manager,
    selector,
    nodes: () => nodes.nodes,
    open: (node, o) => {
      // Read per tunnel: a reload applies to the next one.
      const { threads, workerHeapMb } = current().tunnel;
      workers?.updateOptions({ heapLimitMb: workerHeapMb });
      const up = current().upstream;
      let hubMac: ReturnType<HubMacs['take']> | null = null;
      const link: LinkSpec =
        o.protocol === 'sstp'
          ? { protocol: 'sstp', ...pipeline.access.sstpSpec(node) }
          : o.protocol === 'sevpn'
            ? { protocol: 'sevpn', ...pipeline.access.sevpnSpec(node, (hubMac = hubMacs.take(node.id)).mac) }
            : {
                protocol: 'openvpn',
                profileText: node.profile,
                ...pipeline.access.openVpnSpec(node),
                // A node that refused modern TLS before starts on legacy TLS (no refused handshake first).
                ...(weakTlsRemembered(store, node.id) ? { legacyTls: true } : {}),
              };
      const where =
        link.protocol === 'openvpn'
          ? `${link.remoteHost ?? node.ip}:${node.port}/${node.proto}`
          : `${link.host}:${link.port}/${link.protocol}`;
      const via = link.upstreamUrl && up ? up.proxy.display : null;
      logger.info(
        {
          event: 'tunnel-opening',
          nodeId: node.id,
          egressId: o.id,
          protocol: o.protocol,
          remote: where,
          upstream: via,
        },
        `opening a tunnel to ${node.id} at ${where}${via ? ` through ${via}` : ''}`,
      );
      const opened = openTunnel({
        threads,
        heapLimitMb: workerHeapMb,
        ...(workers ? { pool: workers } : {}),
        id: o.id,
        nodeId: node.id,
        link,
        logger,
        connectTimeoutMs: o.timeoutMs,
        signal: o.signal,
        unresponsiveMs: current().switching.unresponsiveMs,
        healthDnsName: current().switching.healthDnsName,
        // Encrypted DNS in the tunnel: names never reach the node's resolver.
        ...(current().privacy.encryptedDns ? { doh: current().dohServers.map((d) => ({ ...d })) } : {}),
      });
      return opened.then(
        (t) => {
          if (t.diagnostics().weakTls) store.rememberWeakTls(node.id, Date.now());
          if (hubMac) t.onClose(() => hubMac?.release());
          return t;
        },
        (err: unknown) => {
          hubMac?.release();
          throw err;
        },
      );
    },
    offered: (node) => pipeline.access.offered(node),
    honesty: pipeline.honesty,
    ladder: pipeline.ladder,
    selection: new SelectionState(store, { mode: config.groups.mode, defaultNode: config.groups.defaultNode }, logger),
    options: config.groups,
    health: config.health,
    logger,
  });
  wireHonesty(pipeline.honesty, controller, logger);
  pipeline.honesty.start();
  void pipeline.firstRanking.then(
    () => controller.start(),
    () => controller.start(),
  );
  // A start from the pool or an import in a network that blocks every list source: once a tunnel
  // is up, the list can come through it (vpngate.throughTunnel), so the failed refresh runs again
  // now. A list that came in clear vouches for no node's own CA (#59): the HTTPS one is fetched
  // through the tunnel now too, so those nodes are usable without waiting for the next refresh.
  controller.onEvent((e) => {
    if (e.type !== 'switch' || e.record.outcome !== 'switched') return;
    if (nodes.lastRefresh?.ok === false && current().vpngate.throughTunnel && nodes.fetchable)
      detach(logger, 'list-refresh-through-tunnel', nodes.refresh());
    else detach(logger, 'list-vouch', nodes.vouch());
  });
  // A new list while nothing is up: try again at once (evaluate starts a switch when none is active).
  nodes.onChange(
    () =>
      void pipeline.rankLatest().then(
        () => {
          controller.nudgeMembers();
          return controller.evaluate();
        },
        () => {},
      ),
  );
  return controller;
}
