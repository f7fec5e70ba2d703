import type { AdminCore } from './admin-core.js';
import type { EventMap } from './contract.js';
import { ApiFailure } from './http-util.js';
import { ignoreRejection } from '../common/index.js';

/**
 * Re-fetches the list and re-ranks it, publishing progress as `refresh` events: fetching, probing,
 * then done or failed. One at a time: a second request gets its own id and runs after the first.
 */
export function startRefresh(
  core: AdminCore,
  publish: <K extends keyof EventMap>(event: K, data: EventMap[K]) => void,
  refreshes: { seq: number; running: Promise<void> | null },
): { refreshId: number } {
  const { nodes, selector } = core;
  if (!nodes || !selector)
    throw new ApiFailure(
      409,
      'GH_ERR_API_UNSUPPORTED',
      'the node list needs the vpngate egress (this core runs --egress direct)',
    );
  if (!nodes.fetchable)
    throw new ApiFailure(
      409,
      'GH_ERR_API_UNSUPPORTED',
      'there is no list to fetch (only --ovpn profiles are configured)',
    );
  const refreshId = ++refreshes.seq;
  const previous = refreshes.running ?? Promise.resolve();
  refreshes.running = previous.then(async () => {
    publish('refresh', { refreshId, phase: 'fetching', nodes: null, message: null });
    const before = nodes.fetchedAt;
    await nodes.refresh();
    if (nodes.fetchedAt === before) {
      publish('refresh', {
        refreshId,
        phase: 'failed',
        nodes: nodes.nodes.length,
        message: 'every list endpoint failed; keeping the current list',
      });
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
  // running's own body catches every failure (published as phase 'failed'); finally only clears the slot.
  ignoreRejection(
    refreshes.running.finally(() => {
      if (refreshes.seq === refreshId) refreshes.running = null;
    }),
  );
  return { refreshId };
}
