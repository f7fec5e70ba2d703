import type { AdminCore } from './admin-core.js';
import { operations, type EventMap } from './contract.js';
import { ApiFailure, readJson, sendEmpty, sendJson } from './http-util.js';
import type { Router } from './router.js';

/**
 * The routes the window needs beyond the status API: settings, a list refresh with progress,
 * closing a draining tunnel now, and the system proxy. Inputs are validated with the contract.
 */
export function registerUiRoutes(r: Router, core: AdminCore, publish: <K extends keyof EventMap>(event: K, data: EventMap[K]) => void, refreshes: { seq: number; running: Promise<void> | null }): void {
  r.on('GET', '/settings', ({ res }) => {
    const s = settingsOf(core);
    sendJson(res, 200, { settings: s.get(), restartRequired: [] });
  });
  r.on('PUT', '/settings', async ({ req, res }) => {
    const patch = await readJson(req, operations.putSettings.input);
    sendJson(res, 200, settingsOf(core).update(patch));
  });

  r.on('POST', '/nodes/refresh', ({ res }) => {
    const { nodes, selector } = core;
    if (!nodes || !selector) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'the node list needs the vpngate egress (this core runs --egress direct)');
    if (!nodes.fetchable) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'there is no list to fetch (only --ovpn profiles are configured)');
    const refreshId = ++refreshes.seq;
    // One at a time: a second click while one runs gets its own id and waits for the running one.
    const previous = refreshes.running ?? Promise.resolve();
    refreshes.running = previous.then(async () => {
      publish('refresh', { refreshId, phase: 'fetching', nodes: null, message: null });
      const before = nodes.fetchedAt;
      await nodes.refresh();
      if (nodes.fetchedAt === before) {
        publish('refresh', { refreshId, phase: 'failed', nodes: nodes.nodes.length, message: 'every list endpoint failed; keeping the current list' });
        return;
      }
      publish('refresh', { refreshId, phase: 'probing', nodes: nodes.nodes.length, message: null });
      try {
        const ranking = await selector.rank(nodes.nodes);
        publish('refresh', { refreshId, phase: 'done', nodes: ranking.ranked.length, message: null });
      } catch (err) {
        publish('refresh', { refreshId, phase: 'failed', nodes: nodes.nodes.length, message: (err as Error).message });
      }
    });
    void refreshes.running.finally(() => {
      if (refreshes.seq === refreshId) refreshes.running = null;
    });
    sendJson(res, 202, { refreshId });
  });

  r.on('DELETE', '/draining/:egressId', ({ params, res }) => {
    if (!core.manager) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'draining tunnels need the vpngate egress');
    if (!core.manager.closeDraining(params.egressId!)) throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no draining tunnel ${params.egressId}`);
    sendEmpty(res);
  });

  r.on('GET', '/sysproxy', async ({ res }) => sendJson(res, 200, await sysproxyOf(core).state()));
  r.on('PUT', '/sysproxy', async ({ req, res }) => {
    const body = await readJson(req, operations.setSystemProxy.input);
    sendJson(res, 200, await sysproxyOf(core).setEnabled(body.enabled));
  });
}

export function wireSysproxyEvents(core: AdminCore, publish: (event: 'sysproxy', data: EventMap['sysproxy']) => void): (() => void) | null {
  return core.systemProxy ? core.systemProxy.onEvent((e) => publish('sysproxy', e)) : null;
}

function settingsOf(core: AdminCore) {
  if (!core.settings) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'settings are not available in this embedding');
  return core.settings;
}

function sysproxyOf(core: AdminCore) {
  if (!core.systemProxy) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'the system proxy is not available in this embedding');
  return core.systemProxy;
}
