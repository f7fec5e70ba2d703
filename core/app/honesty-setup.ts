import type { HonestyAccess } from '../api/index.js';
import type { Logger } from '../common/index.js';
import type { Egress } from '../contracts/index.js';
import type { NodeTunnel, SwitchController } from '../groups/index.js';
import {
  HONESTY_VERDICTS,
  HonestyMonitor,
  isTampering,
  type HonestyEvidence,
  type HonestyRecord,
  type HonestyStore,
  type HonestyVerdict,
} from '../honesty/index.js';
import type { Store } from '../store/index.js';
import type { GatehopConfig } from './config.js';

/** The store as the honesty monitor keeps its verdicts there; a row of an unknown verdict is left out. */
export function honestyStoreOf(store: Store): HonestyStore {
  const verdicts = new Set<string>(HONESTY_VERDICTS);
  return {
    honestyRecords: () =>
      store
        .honestyRecords()
        .flatMap((r) =>
          verdicts.has(r.verdict)
            ? [{ ...r, verdict: r.verdict as HonestyVerdict, evidence: r.evidence.filter(isEvidence) }]
            : [],
        ),
    saveHonesty: (r) => store.saveHonesty(r),
    forgetHonesty: (ids) => store.forgetHonesty(ids),
  };
}

function isEvidence(e: unknown): e is HonestyEvidence {
  const x = e as Partial<HonestyEvidence> | null;
  return !!x && typeof x.check === 'string' && typeof x.target === 'string' && typeof x.got === 'string';
}

/** The monitor of the vpngate egress; background tunnels and the controller are attached later (wireHonesty). */
export function createHonesty(
  current: () => GatehopConfig,
  store: Store,
  direct: Egress,
  logger: Logger,
  late: { controller: () => SwitchController | null; busy: () => boolean; candidates: () => readonly string[] },
): HonestyMonitor {
  return new HonestyMonitor({
    options: () => current().honesty,
    doh: () => current().dohServers,
    store: honestyStoreOf(store),
    direct,
    logger,
    busy: late.busy,
    sweepCandidates: late.candidates,
    inUse: (id) => {
      const c = late.controller();
      return !!c && (c.active?.node.id === id || c.members.some((m) => m.node.id === id));
    },
    openForCheck: async (nodeId, signal) => {
      const c = late.controller();
      if (!c) throw new Error('no controller yet');
      const t = await c.openForCheck(nodeId, signal);
      return { egress: t, resolvers: t.dnsServers ?? [], close: () => t.close() };
    },
  });
}

/**
 * What a verdict does to switching, and when checks run: every tunnel that starts carrying
 * sessions (the active one, a balance member) is checked through itself if due; a node found to
 * tamper is left at once, make-before-break, unless the user pinned it knowing (accepted).
 */
export function wireHonesty(honesty: HonestyMonitor, controller: SwitchController, logger: Logger): void {
  const checkTunnel = (nodeId: string, t: NodeTunnel): void =>
    honesty.checkInUse(nodeId, { egress: t, resolvers: t.dnsServers ?? [] });
  controller.onEvent((e) => {
    if (e.type === 'member-up') {
      const m = controller.members.find((x) => x.node.id === e.nodeId);
      if (m) checkTunnel(m.node.id, m.egress);
    }
    if (e.type !== 'switch' || e.record.outcome !== 'switched') return;
    const a = controller.active;
    if (a) checkTunnel(a.node.id, a.egress);
  });
  honesty.onVerdict((r: HonestyRecord) => {
    if (!isTampering(r.verdict)) return;
    logger.warn(
      { event: 'node-flagged', nodeId: r.nodeId, verdict: r.verdict },
      `${r.nodeId} is left out of automatic selection: it ${r.verdict}`,
    );
    controller.nodeFlagged(r.nodeId, `${r.nodeId} tampers (${r.verdict})`);
  });
}

/** The admin API's view of the checks: verdicts, consent, and "Check now" through a tunnel in use or one opened for it. */
export function honestyAccessOf(honesty: HonestyMonitor, controller: SwitchController): HonestyAccess {
  const tunnelInUse = (nodeId: string): NodeTunnel | null =>
    (controller.active?.node.id === nodeId ? controller.active.egress : null) ??
    controller.members.find((m) => m.node.id === nodeId)?.egress ??
    (controller.standby?.node.id === nodeId ? controller.standby.egress : null);
  return {
    get enabled() {
      return honesty.enabled;
    },
    get records() {
      return honesty.records;
    },
    get: (id) => honesty.get(id),
    blocked: (id) => honesty.blocked(id),
    accept: (id) => honesty.accept(id),
    checking: (id) => honesty.checking(id),
    onVerdict: (fn) => honesty.onVerdict(fn),
    checkNow: async (nodeId) => {
      const inUse = tunnelInUse(nodeId);
      if (inUse && inUse.state !== 'closed')
        return honesty.checkNow(nodeId, { egress: inUse, resolvers: inUse.dnsServers ?? [] });
      const t = await controller.openForCheck(nodeId, AbortSignal.timeout(60_000));
      try {
        return await honesty.checkNow(nodeId, { egress: t, resolvers: t.dnsServers ?? [] });
      } finally {
        await t.close();
      }
    },
  };
}
