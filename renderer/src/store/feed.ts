import type { CoreClient, OpInput, OpName, OpOutput, Result } from '../client/core-client.js';
import { LATENCY_WINDOW_MS } from './latency-slice.js';
import type { AppStore } from './index.js';
import type { RuleImportRequest, Settings } from './types.js';
import { detach } from '../detach.js';

/**
 * Feeds the store from the CoreClient (the only place that does) and offers the actions the
 * views call. Returns the actions and a dispose function.
 */
export function connectStore(store: AppStore, client: CoreClient) {
  const s = () => store.getState();
  const fail = (e: { code: string; message: string }) => s().setActionError(e);

  async function loadAll(): Promise<void> {
    const [status, nodes, settings, sysproxy, latency] = await Promise.all([
      client.call('getStatus', {}),
      client.call('getNodes', {}),
      client.call('getSettings', {}),
      client.call('getSystemProxy', {}),
      client.call('getLatency', { sinceMs: Date.now() - LATENCY_WINDOW_MS }),
    ]);
    if (status.ok) {
      s().setStatus(status.value);
      s().setNodeTest(status.value.nodeTest);
      s().setExit(status.value.exit);
    } else s().setStatusError(status.error.message);
    if (nodes.ok) s().setNodes(nodes.value);
    else s().setNodesError(nodes.error.message);
    if (settings.ok) s().setSettings(settings.value.settings);
    else s().setSettingsError(settings.error.message);
    if (sysproxy.ok) s().setSysproxy(sysproxy.value);
    if (latency.ok) s().addLatency(latency.value.samples);
  }

  const offEvents = client.subscribe((ev) => {
    switch (ev.type) {
      case 'status': {
        s().setStatus(ev.data);
        const id = ev.data.active?.nodeId;
        if (id) s().noteRecent(id);
        break;
      }
      case 'nodes':
        s().setNodes(ev.data);
        break;
      case 'latency':
        s().addLatency(ev.data.samples);
        break;
      case 'log':
        s().addLog(ev.data);
        break;
      case 'refresh':
        s().setRefresh(ev.data.phase === 'done' || ev.data.phase === 'failed' ? { ...ev.data } : ev.data);
        break;
      case 'test':
        s().setNodeTest(ev.data);
        break;
      case 'exit':
        s().setExit(ev.data);
        break;
      case 'honesty':
        s().setNodeHonesty(ev.data.nodeId, ev.data.honesty);
        break;
      case 'sysproxy':
        // What someone else did to the OS proxy is the user's to know; our own changes they made themselves.
        if (ev.data.type === 'overridden' || ev.data.type === 'left-alone' || ev.data.type === 'recovered')
          s().setSysproxyNotice({ type: ev.data.type, at: Date.now() });
        detach(client.call('getSystemProxy', {}).then((r) => r.ok && s().setSysproxy(r.value)));
        break;
      case 'profile':
        // A network's profile changed the settings (#64): the Settings form shows what is in force.
        detach(client.call('getSettings', {}).then((r) => r.ok && s().setSettings(r.value.settings)));
        break;
      default:
        break;
    }
  });
  const offConn = client.onConnection((c) => s().setConnection(c));
  // After a reconnect nothing in the store can be trusted: read it all again.
  const offResync = client.onResync(() => detach(loadAll()));
  detach(loadAll());

  async function act<K extends OpName>(name: K, input: OpInput<K>): Promise<Result<OpOutput<K>>> {
    const r = await client.call(name, input);
    if (!r.ok) fail(r.error);
    else s().setActionError(null);
    return r;
  }

  const actions = {
    loadAll,
    /** A pick; `confirm` once the user has seen that the node was found to tamper (GH_ERR_NODE_FLAGGED without it). */
    switchTo: (nodeId: string, confirm?: boolean) => act('switchNode', { nodeId, ...(confirm ? { confirm } : {}) }),
    /** A node's honesty check now; its row follows with the verdict (the core sends the nodes again). */
    checkNode: async (nodeId: string) => {
      s().setChecking(nodeId, true);
      try {
        const r = await act('checkNode', { nodeId });
        if (r.ok) s().setNodeHonesty(nodeId, r.value);
        return r;
      } finally {
        s().setChecking(nodeId, false);
      }
    },
    setAuto: async (auto: boolean) => {
      const r = await act('setMode', { auto });
      if (r.ok) {
        const st = s().status;
        if (st) s().setStatus({ ...st, mode: r.value.mode, pinned: r.value.pinned });
      }
      return r;
    },
    closeDraining: (egressId: string) => act('closeDraining', { egressId }),
    closeConnection: (id: string) => act('closeConnection', { id }),
    refreshNodes: async () => {
      const r = await act('refreshNodes', {});
      if (r.ok) s().setRefresh({ refreshId: r.value.refreshId, phase: 'fetching', nodes: null, message: null });
      return r;
    },
    loadConnections: async () => {
      const r = await client.call('getConnections', {});
      if (r.ok) s().setConnections(r.value.connections);
      else s().setConnectionsError(r.error.message);
    },
    saveSettings: async (patch: Partial<Settings>) => {
      const r = await client.call('putSettings', patch);
      if (r.ok) s().setSettings(r.value.settings, r.value.restartRequired);
      else s().setSettingsError(r.error.message);
      return r;
    },
    /** A list file the user picked or dropped: its nodes join the pool. */
    importList: async (csv: string) => {
      const r = await client.call('importNodes', { csv });
      if (r.ok) {
        s().setActionError(null);
        const nodes = await client.call('getNodes', {});
        if (nodes.ok) s().setNodes(nodes.value);
      }
      return r;
    },
    /**
     * A node's own protocol order (null: back to the order in Settings). Saved like any setting and
     * applied at once; the node list is read again so its protocol column shows the new order.
     */
    setNodeProtocols: async (nodeId: string, order: Settings['protocols'] | null) => {
      const { [nodeId]: _old, ...others } = s().settings?.nodeProtocols ?? {};
      const r = await act('putSettings', { nodeProtocols: order ? { ...others, [nodeId]: order } : others });
      if (r.ok) {
        s().setSettings(r.value.settings, r.value.restartRequired);
        const nodes = await client.call('getNodes', {});
        if (nodes.ok) s().setNodes(nodes.value);
      }
      return r;
    },
    /** Adds a list source URL (saved like any setting) and fetches from it at once. */
    addListSource: async (url: string) => {
      const current = s().settings?.listSources ?? [];
      const r = await client.call('putSettings', { listSources: [...current.filter((u) => u !== url), url] });
      if (r.ok) {
        s().setSettings(r.value.settings, r.value.restartRequired);
        await actions.refreshNodes();
      }
      return r;
    },
    /** "Test all" now (progress comes as events); Cancel stops starting more. */
    testAll: async () => {
      const r = await act('testNodes', {});
      if (r.ok) s().setNodeTest(r.value);
      return r;
    },
    cancelTest: () => act('cancelNodeTest', {}),
    /** Forgets what this network taught (Settings → This network); the status is read again. */
    forgetNetwork: async () => {
      const r = await act('forgetNetwork', {});
      const st = await client.call('getStatus', {});
      if (st.ok) s().setStatus(st.value);
      return r;
    },
    testNode: async (nodeId: string) => {
      const r = await act('testNode', { nodeId });
      if (r.ok) s().setTestResult(nodeId, { ms: r.value.ms, error: r.value.error });
      return r;
    },
    checkExit: async () => {
      const r = await act('checkExit', {});
      if (r.ok) s().setExit(r.value);
      return r;
    },
    restart: () => act('restart', {}),
    /** Routing mode from the header or Settings: live, and kept for the next start. */
    setRouteMode: async (mode: 'rule' | 'global' | 'direct') => {
      const r = await act('setRouteMode', { mode });
      if (r.ok) {
        const st = s().status;
        if (st) s().setStatus({ ...st, routing: r.value });
      }
      return r;
    },
    /** A Clash config's routing: read (what it targets), then applied with the user's mapping; settings and status read again. */
    importRules: async (request: RuleImportRequest) => {
      const r = await client.call('importRules', request);
      if (r.ok && r.value.applied) await loadAll();
      return r;
    },
    refreshRuleSet: async (name: string) => {
      const r = await act('refreshRuleSet', { name });
      const st = await client.call('getStatus', {});
      if (st.ok) s().setStatus(st.value);
      return r;
    },
    /** "Run a program through Gatehop…": started captured by the core (in a terminal, or not); the status lists it. */
    runCaptured: async (command: string, terminal: boolean) => {
      const r = await client.call('runCaptured', { command, terminal });
      if (r.ok) {
        const st = await client.call('getStatus', {});
        if (st.ok) s().setStatus(st.value);
      }
      return r;
    },
    /** "Share with this network" (#63): read, switched, devices added and revoked, a device's QR code. */
    getShare: () => client.call('getShare', {}),
    setShare: (enabled: boolean) => act('setShare', { enabled }),
    openShareFirewall: () => act('openShareFirewall', {}),
    addShareDevice: (name: string) => act('addShareDevice', { name }),
    removeShareDevice: (id: string) => act('removeShareDevice', { id }),
    shareDeviceQr: (id: string) => client.call('getShareDeviceQr', { id }),
    /** The core's part of the leak test (#64), through the active node. */
    runLeakTest: () => act('runLeakTest', {}),
    /** A profile per network (#64): read, saved for the network this computer is on, removed. */
    getProfiles: () => client.call('getProfiles', {}),
    saveProfile: (input: OpInput<'saveProfile'>) => act('saveProfile', input),
    removeProfile: (network: string) => act('removeProfile', { network }),
    /** Where the bytes went (#64): the ledger's summary, the closed connections, export, erase, options. */
    getTraffic: (days: number, nodesOnly: boolean) => client.call('getTraffic', { days, nodesOnly }),
    closedConnections: (q: string, limit: number) => client.call('getClosedConnections', { q, limit }),
    exportTraffic: (days: number) => act('exportTraffic', { days }),
    eraseTraffic: () => act('eraseTraffic', {}),
    setTrafficOptions: (change: OpInput<'setTrafficOptions'>) => act('setTrafficOptions', change),
    setSystemProxy: async (enabled: boolean) => {
      const r = await act('setSystemProxy', { enabled });
      if (r.ok) s().setSysproxy(r.value);
      return r;
    },
  };

  return {
    actions,
    dispose: () => {
      offEvents();
      offConn();
      offResync();
    },
  };
}

export type Actions = ReturnType<typeof connectStore>['actions'];
