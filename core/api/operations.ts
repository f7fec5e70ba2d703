import { ErrorCodes, isGatehopError } from '../common/index.js';
import type { AdminCore } from './admin-core.js';
import type { OpName, OpOutput, Operations, Settings } from './contract.js';

/** How long one node's test may take (a tunnel is opened for it when none is up). */
const TEST_TIMEOUT_MS = 10_000;
import type { z } from 'zod';
import { ApiFailure, supported } from './http-util.js';
import { profileOperations } from './profiles-ops.js';
import { trafficOperations } from './traffic-ops.js';
import { allSessions, connectionsView, honestyOf, nodesView, routingView, statusView } from './views.js';

/**
 * A manual pick of a node found to tamper goes through only once the user has seen the verdict
 * (`confirm`); then it is accepted (pins may go there; automatic selection still never does).
 */
export function confirmIfFlagged(core: AdminCore, nodeId: string, confirm: boolean): void {
  const verdict = core.honesty?.blocked(nodeId);
  if (!verdict) return;
  if (!confirm)
    throw new ApiFailure(
      409,
      'GH_ERR_NODE_FLAGGED',
      `${nodeId} was found to tamper with traffic (${verdict}); pick it again and confirm to use it anyway`,
    );
  core.honesty!.accept(nodeId);
}

/** One function per operation of the contract, taking its parsed input. */
export type OperationImpls = {
  [K in OpName]: (input: z.infer<Operations[K]['input']>) => OpOutput<K> | Promise<OpOutput<K>>;
};

/**
 * What every operation does, once: the admin API's routes and the desktop shell's IPC handlers
 * both call these, so HTTP and IPC cannot drift apart. Failures are ApiFailure (with an HTTP
 * status) or GatehopError (with its stable code); `failureOf` turns either into {status, code, message}.
 */
export function implementOperations(
  core: AdminCore,
  adminAddress: () => string | null,
  refreshNodes: () => { refreshId: number },
): OperationImpls {
  const controller = () =>
    supported(core.controller, 'switching needs the vpngate egress (this core runs --egress direct)');
  const settings = () => supported(core.settings, 'settings are not available in this embedding');
  const sysproxy = () => supported(core.systemProxy, 'the system proxy is not available in this embedding');
  const capture = () => supported(core.capture, '`gatehop run` is not available in this embedding');
  const share = () => supported(core.share, 'sharing with this network is not available in this embedding');
  const sweep = () => supported(core.delaySweep, 'node tests need the vpngate egress');
  const withDesktop = (s: Settings): Settings => ({
    ...s,
    startAtLogin: core.desktop ? core.desktop.startAtLogin.get() : null,
  });
  return {
    getStatus: () => statusView(core, adminAddress()),
    openCapture: ({ command }) => {
      try {
        return capture().ticket(command);
      } catch (err) {
        if (isGatehopError(err) && err.code === ErrorCodes.CAPTURE_UNAVAILABLE)
          throw new ApiFailure(409, err.code, err.message);
        throw err;
      }
    },
    getCaptureSessions: () => ({ sessions: capture().sessions() }),
    runCaptured: ({ command, terminal }) => {
      try {
        return capture().launch(command, terminal);
      } catch (err) {
        if (
          isGatehopError(err) &&
          (err.code === ErrorCodes.CAPTURE_UNAVAILABLE || err.code === ErrorCodes.CONFIG_INVALID)
        )
          throw new ApiFailure(err.code === ErrorCodes.CONFIG_INVALID ? 400 : 409, err.code, err.message);
        throw err;
      }
    },
    getNodes: () => nodesView(core),
    refreshNodes: () => refreshNodes(),
    importNodes: ({ csv }) => {
      if (!core.nodes)
        throw new ApiFailure(
          409,
          'GH_ERR_API_UNSUPPORTED',
          'importing a list needs the vpngate egress (this core runs --egress direct)',
        );
      const r = core.nodes.importCsv(csv, 'import');
      return { imported: r.nodes.length, skipped: r.skipped, nodes: core.nodes.nodes.length };
    },
    getLatency: (q) => ({ samples: core.store?.latency(q.nodeId ?? null, q.sinceMs ?? Date.now() - 3600_000) ?? [] }),
    getConnections: () => connectionsView(core),
    closeConnection: ({ id }) => {
      const s = allSessions(core).find((x) => x.id === id)?.session;
      if (!s) throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no connection ${id}`);
      s.forceClose('closed by the user');
      return null;
    },
    switchNode: (body) => {
      const c = controller();
      if (body.nodeId) confirmIfFlagged(core, body.nodeId, body.confirm === true);
      return { switchId: c.switchNow(body.nodeId ? { nodeId: body.nodeId } : {}).switchId };
    },
    forgetNetwork: () => {
      const c = controller();
      const had = c.protocols.lesson !== null;
      c.protocols.forget();
      core.forgetNodePath?.();
      return { forgotten: had };
    },
    checkNode: async ({ nodeId }) => {
      const h = core.honesty;
      if (!h) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'honesty checks need the vpngate egress');
      if (!h.enabled)
        throw new ApiFailure(
          409,
          'GH_ERR_API_UNSUPPORTED',
          'checking nodes is turned off (Settings, or honesty.enabled)',
        );
      if (!core.nodes?.nodes.some((n) => n.id === nodeId))
        throw new ApiFailure(404, 'GH_ERR_NODE_UNKNOWN', `no node ${nodeId} in the pool`);
      await h.checkNow(nodeId);
      return honestyOf(core, nodeId)!;
    },
    setRouteMode: async ({ mode }) => {
      if (!core.routing)
        throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'routing is not offered in this embedding');
      await core.routing.setMode(mode);
      return routingView(core)!;
    },
    refreshRuleSet: async ({ name }) => {
      const r = await core.routing?.refresh(name);
      if (!r) throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no rule set ${name}`);
      return r;
    },
    importRules: async (request) => {
      if (!core.routing?.importRules)
        throw new ApiFailure(
          409,
          'GH_ERR_API_UNSUPPORTED',
          'importing rules needs saved settings (a core with a data dir)',
        );
      return core.routing.importRules(request);
    },
    setMode: ({ auto }) => {
      const c = controller();
      c.setMode(auto);
      return { mode: c.mode, pinned: c.pinned };
    },
    closeDraining: ({ egressId }) => {
      if (!core.manager)
        throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'draining tunnels need the vpngate egress');
      if (!core.manager.closeDraining(egressId))
        throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no draining tunnel ${egressId}`);
      return null;
    },
    reload: () => {
      if (!core.reload)
        throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'reload is not available in this embedding');
      return core.reload();
    },
    getSettings: () => ({ settings: withDesktop(settings().get()), restartRequired: [] }),
    putSettings: async (patch) => {
      if (patch.startAtLogin !== undefined && patch.startAtLogin !== null) {
        if (!core.desktop)
          throw new ApiFailure(
            409,
            'GH_ERR_API_UNSUPPORTED',
            "start at login is the desktop app's setting; this core runs without it",
          );
        core.desktop.startAtLogin.set(patch.startAtLogin);
      }
      const r = await settings().update(patch);
      return { settings: withDesktop(r.settings), restartRequired: r.restartRequired };
    },
    testNodes: ({ nodeIds }) =>
      sweep().start({ url: controller().urlTestUrl, timeoutMs: TEST_TIMEOUT_MS, ...(nodeIds ? { nodeIds } : {}) }),
    cancelNodeTest: () => ({ cancelled: core.delaySweep?.cancel() ?? false }),
    testNode: async ({ nodeId }) => {
      const c = controller();
      if (!core.nodes?.nodes.some((n) => n.id === nodeId))
        throw new ApiFailure(404, 'GH_ERR_NODE_UNKNOWN', `no node ${nodeId} in the pool`);
      try {
        return { nodeId, ms: Math.round(await c.delayTest(nodeId, c.urlTestUrl, TEST_TIMEOUT_MS)), error: null };
      } catch (err) {
        return { nodeId, ms: null, error: (err as Error).message };
      }
    },
    checkExit: () =>
      supported(core.exit, 'set exitCheck.url (an address-echo URL) to see where traffic leaves').check(),
    restart: () => {
      const desktop = supported(core.desktop, 'only the desktop app restarts itself; restart the gatehop process');
      // After the answer is on its way: the restart stops this core.
      setTimeout(() => desktop.restart(), 50).unref();
      return null;
    },
    getShare: () => share().freshView(),
    setShare: async ({ enabled }) => {
      await share().setEnabled(enabled);
      return share().freshView();
    },
    openShareFirewall: () => share().openFirewall(),
    addShareDevice: ({ name }) => share().add(name),
    removeShareDevice: ({ id }) => {
      if (!share().devices.revoke(id)) throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no shared device ${id}`);
      return null;
    },
    getShareDeviceQr: async ({ id }) => {
      const s = share();
      if (!s.devices.get(id)) throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no shared device ${id}`);
      const qr = await s.qr(id);
      if (!qr)
        throw new ApiFailure(409, 'GH_ERR_SHARE_OFF', 'turn sharing on first: the code holds the address phones reach');
      return qr;
    },
    ...trafficOperations(core),
    ...profileOperations(core),
    runLeakTest: () => supported(core.leakTest, 'the leak test needs the vpngate egress (a node to test through)')(),
    getSystemProxy: () => sysproxy().state(),
    setSystemProxy: ({ enabled }) => sysproxy().setEnabled(enabled),
  };
}

/** HTTP status and stable code of a failure, for the API and for IPC alike. */
export function failureOf(err: unknown): { status: number; code: string; message: string } {
  if (err instanceof ApiFailure) return { status: err.status, code: err.error, message: err.message };
  if (isGatehopError(err)) {
    const status: Record<string, number> = {
      [ErrorCodes.NODE_UNKNOWN]: 404,
      [ErrorCodes.SWITCH_IN_PROGRESS]: 409,
      [ErrorCodes.SYSPROXY_UNSUPPORTED]: 409,
      [ErrorCodes.CONFIG_INVALID]: 400,
      [ErrorCodes.SHARE_DEVICE_INVALID]: 400,
      [ErrorCodes.NETWORK_PROFILE_INVALID]: 400,
      [ErrorCodes.LIST_INVALID]: 400,
      [ErrorCodes.SYSPROXY_DENIED]: 403,
      [ErrorCodes.SHARE_FIREWALL_FAILED]: 403,
    };
    return { status: status[err.code] ?? 502, code: err.code, message: err.message };
  }
  return { status: 500, code: 'GH_ERR_API_INTERNAL', message: (err as Error)?.message ?? String(err) };
}
