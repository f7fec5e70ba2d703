import { join } from 'node:path';
import { AdminServer, LoopDelay, type DesktopAccess, type LeakReport } from '../api/index.js';
import {
  dataEngineStatus,
  formatEndpoint,
  GATEHOP_VERSION,
  HeapTrimmer,
  limitMallocArenas,
  nativeStatus,
  NetworkWatch,
  networkKeyOf,
  readNetworkSnapshot,
  threadTransferCollector,
  type Endpoint,
  type Logger,
  type LogTap,
} from '../common/index.js';
import {
  DirectEgress,
  EgressManager,
  findWorkerScript,
  isTunnel,
  SingleEgressSource,
  TunnelWorkerPool,
  UnavailableEgress,
} from '../egress/index.js';
import type { Egress, EgressSource } from '../contracts/index.js';
import { DelaySweep, PoolRecovery, SwitchController, type NodeTunnel } from '../groups/index.js';
import { Selector, type Ranking } from '../selector/index.js';
import { Credentials, ProxyServer } from '../proxy/index.js';
import { Store } from '../store/index.js';
import { NodeList } from '../vpngate/index.js';
import { directDialer } from '../reach/index.js';
import { honestyAccessOf } from './honesty-setup.js';
import { tunnelDialerOf } from './node-access.js';
import { processLookup, RoutingState } from '../router/index.js';
import { routingAccess, startAdminApi } from './admin-setup.js';
import { ExitCheck } from './exit-check.js';
import type { SystemProxy } from '../sysproxy/index.js';
import { type ConfigInput, type GatehopConfig } from './config.js';
import { defaultUiDir } from './paths.js';
import type { ReloadOutcome } from './reload.js';
import { configReloader } from './reload-setup.js';
import { systemProxyControl } from './system-proxy-setup.js';
import { startShare } from './share-setup.js';
import { runLeakTest } from './leak-test.js';
import { startProfiles } from './profiles-setup.js';
import { countFlows, startTraffic } from './traffic-setup.js';
import type { TrafficBook } from '../traffic/index.js';
import type { NetworkProfiles } from '../profiles/index.js';
import type { ShareService } from '../share/index.js';
import { captureAccess, startCapture } from './capture-setup.js';
import type { CaptureServer } from '../capture/index.js';
import { createSystemProxy, proxyTarget, recoverSystemProxy } from './system-proxy-setup.js';
import { sourceOptionsOf, startNodePipeline } from './node-pipeline.js';
import { startController } from './controller-setup.js';

export interface RunningApp {
  readonly proxy: ProxyServer;
  /** "Share with this network" (#63): the devices and the second listener. */
  readonly share: ShareService | null;
  /** Where the bytes went (#64): the ledger and the closed connections. */
  readonly traffic: TrafficBook;
  /** The profiles per network (#64); null without settings to change (no config layers). */
  readonly profiles: NetworkProfiles | null;
  readonly egress: Egress;
  /** With --egress vpngate: the active and draining tunnels. */
  readonly manager: EgressManager | null;
  readonly listening: { proxy: Endpoint; admin: Endpoint | null };
  readonly admin: AdminServer | null;
  readonly nodes: NodeList | null;
  readonly selector: Selector | null;
  readonly store: Store | null;
  /** With --egress vpngate: switching, mode and pin. */
  readonly controller: SwitchController | null;
  /** Resolves with the first ranking of the node pool (vpngate egress only). */
  readonly firstRanking: Promise<Ranking> | null;
  /** With --egress vpngate: retries a start without network; waiting or ok. */
  readonly recovery: PoolRecovery | null;
  /** Watches interfaces and routes; the desktop shell nudges it on the OS's resume event. */
  readonly network: NetworkWatch;
  /** The OS proxy settings: recovered at start, set with systemProxy.enabled, restored by stop(). */
  readonly systemProxy: SystemProxy;
  /** `gatehop run`'s socket (Linux), which TUN mode also relays to; null where it could not listen. */
  readonly capture: CaptureServer | null;
  /** The rule table, its mode and rule sets. */
  readonly routing: RoutingState;
  /** The dashboard with its token in the fragment (never sent to the server); null without the admin API. */
  readonly dashboardUrl: string | null;
  /** The app's logger: the desktop shell reports what it does not await through it. */
  readonly logger: Logger;
  /**
   * Re-reads the config (file, saved settings, flags) and applies what can change live, without
   * dropping a session; a config that does not validate is refused (GH_ERR_CONFIG_INVALID) and
   * the running one stays. Reloads run one at a time.
   */
  reload(): Promise<ReloadOutcome>;
  /** Stops accepting, closes every session and egress, flushes the store. Idempotent. */
  stop(): Promise<void>;
}

/** Assembles and starts the core: node pipeline (vpngate) → egress → proxy front end. */
export interface StartExtras {
  logTap?: LogTap;
  /** The config layers this config was built from; given, the window's settings are offered (GET/PUT /settings). */
  layers?: { fromFile: ConfigInput; fromFlags: ConfigInput };
  /** The built renderer to serve at /ui/ (default: dist/renderer when built; null: none). */
  uiDir?: string | null;
  /** Reads the config layers again for a reload (the CLI re-reads its config file); default: `layers` as given. */
  readLayers?: () => { fromFile: ConfigInput; fromFlags: ConfigInput };
  /** The desktop app around this core: start at login and restart, for the window's Settings. */
  desktop?: DesktopAccess | null;
  /**
   * For in-process tests only (no config key or flag reaches it): list nodes on loopback are
   * dialled, so a test's list can name closed local ports. A real run never dials loopback from a list.
   */
  unsafeLoopbackNodes?: boolean;
}

export async function startApp(config: GatehopConfig, logger: Logger, extras: StartExtras = {}): Promise<RunningApp> {
  for (const notice of config.notices) logger.warn({ event: 'config-notice' }, notice);
  const credentials = config.authFile ? Credentials.load(config.authFile) : null;
  if (credentials && credentials.legacyUsers > 0)
    logger.warn(
      { event: 'auth-file-legacy', users: credentials.legacyUsers },
      `${credentials.legacyUsers} proxy users in ${config.authFile} have the older fast SHA-256 hash: run "gatehop passwd" for each to store them with scrypt`,
    );
  const store = config.egress === 'vpngate' ? new Store({ path: join(config.dataDir, 'gatehop.db'), logger }) : null;
  let current = config;
  // Before anything else: a Gatehop that crashed may have left the OS pointing at a dead port
  // (restored), or the kill switch left it so on purpose (kept, and pointed at this start's port).
  const systemProxy = createSystemProxy(config, logger, store, () => current.systemProxy.killSwitch);
  const recovered = await recoverSystemProxy(systemProxy, config, logger);
  // The manager exists only after the pipeline: the list asks for a tunnel dialer late.
  let manager: EgressManager | null = null;
  let controller: SwitchController | null = null;
  const pipeline = store
    ? await startNodePipeline(
        config,
        () => current,
        store,
        logger,
        () => (manager ? tunnelDialerOf(manager, () => current.mode !== 'global') : null),
        extras.unsafeLoopbackNodes === true,
        {
          controller: () => controller,
          // Background checks only while someone uses the proxy (never probing while idle).
          busy: () => (manager?.activeSessions ?? 0) > 0,
        },
      )
    : null;
  const egress: Egress =
    config.egress === 'direct' ? new DirectEgress('direct') : new UnavailableEgress('vpngate', 'no tunnel is up yet');
  manager = pipeline
    ? new EgressManager(egress, logger, {
        drainGraceMs: config.switching.drainGraceMs,
        maxDraining: config.switching.maxDraining,
        interruptExistingConnections: config.switching.interruptExistingConnections,
        strategy: config.groups.balance.strategy,
        // Called per session, long after the controller below exists.
        latencyOf: (e: Egress): number | null => {
          const nodeId = (e as Partial<NodeTunnel>).nodeId;
          return nodeId && controller ? controller.rttOf(nodeId) : null;
        },
      })
    : null;
  const source: EgressSource = manager ?? new SingleEgressSource(egress);
  // Tunnel worker threads share glibc's arenas instead of growing one each (#44's soak), and native
  // memory that glibc keeps free goes back to the OS after a tunnel worker ends and every minute (#24's soak).
  limitMallocArenas();
  const heapTrimmer = new HeapTrimmer({ intervalMs: HEAP_TRIM_INTERVAL_MS, logger });
  logNativeStatus(logger);
  // A started spare worker for the next tunnel (tunnels in threads): a switch does not wait for one to boot.
  // Run from TypeScript source without a bundled worker, tunnels fall back to this thread (openTunnel warns): no pool then.
  const workers =
    pipeline && manager && config.tunnel.threads && findWorkerScript()
      ? new TunnelWorkerPool({ heapLimitMb: config.tunnel.workerHeapMb, onWorkerExit: () => heapTrimmer.soon() })
      : null;
  controller = pipeline && manager ? startController(config, () => current, pipeline, manager, workers, logger) : null;
  // The network this machine is on: what the protocol memory, the ledger and the profiles are kept under.
  const network = new NetworkWatch({ logger });
  // "Test all" (the window, Clash dashboards' health checks): a few nodes at a time.
  const delaySweep =
    controller && pipeline
      ? new DelaySweep({
          delayTest: (id, url, ms) => controller.delayTest(id, url, ms),
          nodeIds: () => pipeline.nodes.nodes.map((n) => n.id),
          logger,
        })
      : null;
  const recovery =
    pipeline && controller
      ? new PoolRecovery({
          nodes: pipeline.nodes,
          selector: pipeline.selector,
          rank: () => pipeline.rankLatest(),
          controller,
          options: config.recovery,
          logger,
        })
      : null;
  if (recovery) {
    network.onChange((c) => {
      // What this network taught about protocols applies here; another network starts afresh (or from its own memory).
      controller?.protocols.setNetwork(networkKeyOf(c.snapshot));
      pipeline?.access.setNetwork(networkKeyOf(c.snapshot));
      if (c.online) recovery.networkChanged(c.reason);
      // Another VPN client often rewrites the proxy settings when it connects.
      void systemProxy.check().catch(() => undefined);
    });
  }
  network.start();
  if (recovery) {
    controller?.protocols.setNetwork(networkKeyOf(network.snapshot ?? readNetworkSnapshot()));
    pipeline?.access.setNetwork(networkKeyOf(network.snapshot ?? readNetworkSnapshot()));
  }
  // Where am I (exitCheck.url): measured through the active tunnel after each switch and every interval.
  const exitCheck =
    controller && manager
      ? new ExitCheck({
          url: () => current.exitCheck.url,
          dialer: () => tunnelDialerOf(manager, () => current.mode !== 'global'),
          activeNodeId: () => controller.active?.node.id ?? null,
          intervalMs: config.exitCheck.intervalMs,
          logger,
        })
      : null;
  if (exitCheck && controller) {
    controller.onEvent((e) => {
      if (e.type === 'switch' && e.record.outcome === 'switched' && current.exitCheck.url)
        void exitCheck.check().catch(() => undefined);
    });
    exitCheck.start();
  }
  // The leak self-test (#64), when the user asks: through the active node, all of it (no LAN exception).
  const leakTest = (): Promise<LeakReport> =>
    runLeakTest({
      exitUrl: () => current.exitCheck.url ?? current.leakTest.exitUrl,
      resolverUrl: () => current.leakTest.resolverUrl,
      stunUrl: () => current.leakTest.stunUrl,
      dialer: () => (manager ? tunnelDialerOf(manager, () => false) : null),
      activeNodeId: () => controller?.active?.node.id ?? null,
      encryptedDns: () => current.privacy.encryptedDns,
      systemProxyOn: async () => (await systemProxy.status()).enabled,
      snapshot: () => network.snapshot ?? readNetworkSnapshot(),
      logger,
    });
  const closeRecovery = (): void => {
    network.close();
    recovery?.close();
    exitCheck?.close();
  };
  // Where each flow goes: the rule table (DIRECT on the host's own network, TUNNEL through the group).
  const routing = new RoutingState(config, logger, () => [
    pipeline ? pipeline.access.listDialer(current) : directDialer(),
    manager ? tunnelDialerOf(manager, () => current.mode !== 'global') : null,
  ]);
  const directEgress = config.egress === 'direct' ? egress : new DirectEgress('direct');
  const routed = {
    table: () => routing.table(),
    direct: new SingleEgressSource(directEgress),
    processOf: processLookup(),
    sniffPorts: () => routing.sniffPorts,
    httpsOnly: () => current.privacy.httpsOnly && config.egress === 'vpngate',
  };
  const proxy = new ProxyServer(
    { ...config.proxy, host: config.listen.host, port: config.listen.port, credentials },
    source,
    logger,
    routed,
  );
  const traffic = startTraffic(store, network, logger);
  countFlows(traffic, proxy, null);
  /** "Share with this network" (#63): a second ProxyServer on the same egress and routing. */
  let share: ShareService | null = null;
  let proxyAt: Endpoint;
  let admin: AdminServer | null = null;
  /** `gatehop run`'s socket (Linux); null where it cannot listen. */
  let capture: CaptureServer | null = null;
  const { reload, settings } = configReloader({
    layers: extras.layers ?? null,
    readLayers: extras.readLayers,
    state: () => ({ config: current, proxyAt }),
    commit: (next, at) => {
      current = next;
      proxyAt = at;
    },
    targets: () => ({
      proxy,
      manager,
      controller,
      selector: pipeline?.selector ?? null,
      nodeList: pipeline
        ? {
            apply: (c: GatehopConfig) =>
              pipeline.nodes.updateOptions(sourceOptionsOf(c), pipeline.access.listDialer(c)),
          }
        : null,
      routing,
      honesty: pipeline?.honesty,
    }),
    systemProxy,
    logger,
  });
  const profiles = startProfiles(config.dataDir, settings, network, logger);
  let adminAt: Endpoint | null = null;
  let dashboardUrl: string | null = null;
  const loopDelay = new LoopDelay();
  /**
   * Every way out, one list, in order: a start that failed half-way and stop() alike (they were two
   * lists, and the failed start's skipped the delay sweep and the first ranking, #47). Each step
   * runs whatever the one before did; a failure is logged with its step and the rest still run.
   */
  const teardown = async (): Promise<void> => {
    const steps: ReadonlyArray<readonly [string, () => unknown]> = [
      // First: the user must not be left pointing at a port that is about to close (unless the
      // kill switch says that is exactly what they want: offline rather than direct).
      ['sysproxy-restore', () => systemProxy.release()],
      ['sysproxy', () => systemProxy.close()],
      ['admin', () => admin?.close()],
      ['loop-delay', () => loopDelay.close()],
      ['recovery', () => closeRecovery()],
      ['profiles', () => profiles?.close()],
      ['delay-sweep-cancel', () => delaySweep?.cancel()],
      ['honesty', () => pipeline?.honesty.stop()],
      ['controller', () => controller?.stop()],
      ['delay-sweep', () => delaySweep?.close()],
      ['routing', () => routing.close()],
      // Captured programs lose their network first (their TUNs close), then the sessions go.
      ['capture', () => capture?.close()],
      ['share', () => share?.close()],
      ['proxy', () => proxy.close()],
      ['traffic', () => traffic.close()],
      ['direct-egress', () => (directEgress !== egress ? directEgress.close() : undefined)],
      ['egress', () => (manager ?? egress).close()],
      ['honesty-direct', () => pipeline?.honestyDirect.close()],
      ['workers', () => workers?.close()],
      ['heap-trimmer', () => heapTrimmer.close()],
      ['nodes', () => pipeline?.nodes.close()],
      ['first-ranking', () => pipeline?.firstRanking.catch(() => undefined)],
      ['store', () => store?.close()],
    ];
    for (const [step, run] of steps) {
      try {
        await run();
      } catch (err) {
        logger.error(
          {
            event: step === 'sysproxy-restore' ? 'sysproxy-restore-failed' : 'stop-step-failed',
            step,
            err: (err as Error).message,
          },
          `stopping, ${step} failed: ${(err as Error).message}`,
        );
      }
    }
  };
  try {
    proxyAt = await proxy.listen();
    capture = await startCapture(config.dataDir, proxy, logger);
    share = await startShare(
      config,
      () => current,
      store,
      (o) => {
        const server = new ProxyServer(o, source, logger, routed);
        countFlows(traffic, server, (user) => share?.devices.get(user)?.name ?? user);
        return server;
      },
      logger,
    );
    routing.start();
    if (config.admin) {
      ({
        admin,
        at: adminAt,
        dashboardUrl,
      } = await startAdminApi(
        {
          version: GATEHOP_VERSION,
          startedAt: Date.now(),
          egressKind: config.egress,
          // A getter: a reload may move the proxy.
          get proxyAddress() {
            return formatEndpoint(proxyAt);
          },
          proxy,
          manager,
          controller,
          nodes: pipeline?.nodes ?? null,
          selector: pipeline?.selector ?? null,
          store: pipeline?.store ?? null,
          logTap: extras.logTap ?? null,
          loopDelay,
          heapTrimmer,
          transfers: workers ? threadTransferCollector() : null,
          recovery,
          settings,
          reload: extras.layers ? reload : null,
          reach: pipeline
            ? () => ({
                connectBy: current.vpngate.connectBy,
                upstream: current.upstream?.proxy.display ?? null,
                upstreamUdp: pipeline.access.upstreamUdp,
                nodePath: pipeline.access.path,
              })
            : null,
          systemProxy: systemProxyControl(systemProxy, () => proxyTarget(proxyAt, config)),
          capture: captureAccess(() => capture),
          uiDir: extras.uiDir === undefined ? defaultUiDir() : extras.uiDir,
          externalUiDir: config.externalUi,
          dashboardStorageDir: join(config.dataDir, 'dashboard-storage'),
          logLevel: { get: () => logger.level, set: (level) => void (logger.level = level) },
          delaySweep,
          exit: exitCheck,
          desktop: extras.desktop ?? null,
          honesty: pipeline && controller ? honestyAccessOf(pipeline.honesty, controller) : null,
          privacy: () => {
            // A tunnel resolves names as it was opened: the setting applies from the next one.
            const t = manager && isTunnel(manager.active) ? manager.active : null;
            const next = current.privacy.encryptedDns;
            return {
              httpsOnly: current.privacy.httpsOnly,
              encryptedDns: t ? t.diagnostics().encryptedDns : next,
              encryptedDnsNext: next,
            };
          },
          forgetNodePath: pipeline ? () => pipeline.access.forgetPath() : undefined,
          routing: routingAccess(routing, settings, config.dataDir),
          share,
          traffic,
          profiles,
          leakTest,
        },
        config.admin,
        config,
        logger,
      ));
    }
    if (config.systemProxy.enabled || recovered === 'held') {
      // Refused or unsupported is the user's to know, not a reason to stop the proxy itself.
      await systemProxy.apply(proxyTarget(proxyAt, config)).catch((err: Error) => {
        logger.error({ event: 'sysproxy-apply-failed', err: err.message }, err.message);
      });
    }
  } catch (err) {
    await teardown();
    throw err;
  }
  let stopping: Promise<void> | null = null;
  return {
    proxy,
    get share() {
      return share;
    },
    traffic,
    profiles,
    egress,
    manager,
    // A getter: a reload may move the proxy.
    get listening() {
      return { proxy: proxyAt, admin: adminAt };
    },
    admin,
    nodes: pipeline?.nodes ?? null,
    selector: pipeline?.selector ?? null,
    store: pipeline?.store ?? null,
    controller,
    firstRanking: pipeline?.firstRanking ?? null,
    recovery,
    network,
    systemProxy,
    capture,
    routing,
    dashboardUrl,
    logger,
    reload,
    stop: () =>
      (stopping ??= (async () => {
        await teardown();
        logger.info({ event: 'stopped' }, 'gatehop stopped');
      })()),
  };
}

/** How often the native heap is trimmed besides after a worker ends. */
const HEAP_TRIM_INTERVAL_MS = 60_000;

/** Once at start: whether the native module and its data path run (and why not), for a bug report's log. */
function logNativeStatus(logger: Logger): void {
  const s = nativeStatus();
  const data = dataEngineStatus();
  if (s.loaded)
    logger.debug(
      { event: 'native', loaded: true, path: s.path, dataPath: data.engine, crypto: data.library },
      'native module loaded',
    );
  else
    logger.info(
      { event: 'native', loaded: false, reason: s.reason },
      `native module not loaded: ${s.reason}; using the JavaScript path`,
    );
  if (s.loaded && data.engine !== 'native')
    logger.info(
      { event: 'native', dataPath: data.engine, reason: data.reason },
      `tunnels use the JavaScript data path: ${data.reason}`,
    );
}
