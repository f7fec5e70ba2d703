import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import {
  isTunnel,
  tunnelWorkerCounters,
  WorkerTunnelEgress,
  type Tunnel,
  type TunnelProtocol,
} from '../egress/index.js';
import type { Egress } from '../contracts/index.js';
import { dataEngineStatus, loadNative, nativeStatus, unbracket } from '../common/index.js';
import type { NodeTunnel } from '../groups/index.js';
import { inBackoff } from '../selector/index.js';
import { WEAK_TLS_REMEMBER_MS } from '../store/index.js';
import type { ProxySession } from '../proxy/index.js';
import type { AdminCore } from './admin-core.js';
import { clashRuleType } from './clash-views.js';
import type { HonestyDto, NodeDto, Nodes, RoutingStatusDto, Status } from './schemas.js';
import { CLEAN_CHECKS_TO_CLEAR, isTampering } from '../honesty/index.js';
import type { VpnGateNode } from '../vpngate/index.js';

const nodeIdOf = (e: Egress): string | null => (e as Partial<NodeTunnel>).nodeId ?? null;
/** The protocol an egress tunnel speaks (null: not a tunnel). */
const protocolOf = (e: Egress): TunnelProtocol | null =>
  isTunnel(e) ? ((e as Partial<NodeTunnel>).protocol ?? 'openvpn') : null;

/** Every tunnel open now: active, balance members, draining, standby. */
export function tunnelsOf(core: AdminCore): Tunnel[] {
  const m = core.manager;
  const all: Array<Egress | null | undefined> = [
    ...(m?.members ?? []).map((x) => x.egress),
    m?.active,
    ...(m?.draining ?? []).map((d) => d.egress),
    core.controller?.standby?.egress,
  ];
  return [...new Set(all.filter(isTunnel))];
}

/** GET /status */
export function statusView(core: AdminCore, adminAddress: string | null): Status {
  const { controller: c, manager: m, proxy } = core;
  const activeEgress = m ? m.active : null;
  const activeNode = c?.active?.node ?? null;
  const rtt = activeNode
    ? (core.selector?.last?.ranked.find((r) => r.node.id === activeNode.id)?.terms.rttMs ?? null)
    : null;
  const health = c?.health;
  return {
    version: core.version,
    uptimeS: Math.round((Date.now() - core.startedAt) / 1000),
    egress: core.egressKind,
    mode: c?.mode ?? 'auto',
    pinned: c?.pinned ?? null,
    pinFailed: c?.pinFailed ?? null,
    active:
      core.egressKind === 'direct'
        ? {
            egressId: 'direct',
            nodeId: null,
            host: null,
            ip: null,
            country: null,
            proto: null,
            protocol: null,
            since: core.startedAt,
            state: 'ready',
            rttMs: null,
            sessions: proxy.stats.sessionsActive,
            honesty: null,
          }
        : activeEgress
          ? {
              egressId: activeEgress.id,
              nodeId: activeNode?.id ?? nodeIdOf(activeEgress),
              ...placeOf(activeNode ?? undefined),
              country: activeNode?.countryLong ?? null,
              proto: activeNode?.proto ?? null,
              protocol: protocolOf(activeEgress),
              since: c?.active?.since ?? core.startedAt,
              state: activeEgress.state,
              rttMs: rtt,
              sessions: m!.members.find((x) => x.primary)?.sessions ?? 0,
              honesty: core.honesty && activeNode ? (core.honesty.get(activeNode.id)?.verdict ?? 'unchecked') : null,
            }
          : null,
    draining: (m?.draining ?? []).map((d) => ({
      egressId: d.egress.id,
      nodeId: nodeIdOf(d.egress),
      ...placeOf(poolNode(core, nodeIdOf(d.egress))),
      protocol: protocolOf(d.egress),
      sessions: d.sessions,
      since: d.since,
      graceEndsAt: d.graceEndsAt,
    })),
    members: membersView(core),
    balance: c?.balance ?? { strategy: 'failover', tunnels: 1 },
    standby: c?.standby
      ? [
          {
            egressId: c.standby.egress.id,
            nodeId: c.standby.node.id,
            ...placeOf(c.standby.node),
            protocol: protocolOf(c.standby.egress),
            since: c.standby.since,
          },
        ]
      : [],
    protocols: c
      ? {
          order: [...c.protocols.order],
          preferred: c.protocols.preferred,
          blocked: c.protocols.blocked,
          reason: c.protocols.reason || null,
          learn: c.protocols.learning,
          lesson: lessonOf(c),
        }
      : null,
    sessions: { active: proxy.stats.sessionsActive, total: proxy.stats.sessionsTotal, rejected: proxy.stats.rejected },
    honesty: honestySummary(core),
    privacy: core.privacy?.() ?? { encryptedDns: false, encryptedDnsNext: false, httpsOnly: false },
    traffic: { bytesUp: proxy.stats.bytesUp, bytesDown: proxy.stats.bytesDown, at: Date.now() },
    switches: {
      total: c?.counts.switched ?? 0,
      failed: c?.counts.failed ?? 0,
      state: c?.state ?? 'idle',
      inProgress: c?.switching ?? null,
      last: c?.lastSwitch ?? null,
    },
    health: health
      ? {
          windows: health.windows,
          badWindows: health.badWindows,
          score: health.last?.score ?? null,
          reasons: health.last?.reasons ?? [],
          symptoms: health.last?.symptoms ?? [],
          consecutiveBad: health.last?.consecutiveBad ?? 0,
        }
      : null,
    listen: { proxy: core.proxyAddress, admin: adminAddress },
    ...(core.share ? { share: core.share.summary() } : {}),
    ...(core.traffic ? { trafficToday: core.traffic.today() } : {}),
    capture: core.capture
      ? { ...core.capture.available(), programs: core.capture.sessions() }
      : { available: false, reason: 'embedding' as const, programs: [] },
    ...(core.transfers
      ? {
          transfers: {
            bytes: core.transfers.stats.bytes,
            collections: core.transfers.stats.collections,
            maxMs: Math.round(core.transfers.stats.maxMs * 100) / 100,
          },
        }
      : {}),
    mainHeap: mainHeap(),
    eventLoop: core.loopDelay?.read() ?? { p50Ms: 0, p99Ms: 0, maxMs: 0, windowMs: 0 },
    tunnels: tunnelsOf(core).map((t) => {
      const d = t.diagnostics();
      const worker = t instanceof WorkerTunnelEgress;
      return {
        egressId: t.id,
        nodeId: t.nodeId,
        thread: worker ? 'worker' : 'main',
        heapBytes: worker ? d.heapUsedBytes : null,
        wasmMemoryBytes: d.wasmMemoryBytes,
        weakTls: d.weakTls,
        trustRule: d.trustRule ?? null,
      };
    }),
    tunnelWorkers: { ...tunnelWorkerCounters },
    native: nativeView(core),
    network: core.recovery?.status ?? { state: 'ok', reason: null, since: null, attempts: 0, nextAttemptAt: null },
    nodeTest: core.delaySweep?.progress ?? null,
    exit: core.exit?.last ?? null,
    desktop: !!core.desktop,
    store: core.store ? { health: core.store.health, incident: core.store.incident } : null,
    list: core.nodes ? core.nodes.status() : null,
    routing: routingView(core),
    reach: core.reach?.() ?? null,
  };
}

function lessonOf(c: NonNullable<AdminCore['controller']>): NonNullable<Status['protocols']>['lesson'] {
  const l = c.protocols.lesson;
  return l ? { at: l.at, expiresAt: l.expiresAt, path: l.path } : null;
}

/** How many nodes of the pool each verdict has, and the latest finding. */
function honestySummary(core: AdminCore): Status['honesty'] {
  const h = core.honesty;
  if (!h) return null;
  const pool = poolIndex(core);
  let honest = 0;
  let flagged = 0;
  let checking = 0;
  let last: { nodeId: string; verdict: HonestyDto['verdict']; at: number } | null = null;
  for (const id of pool.keys()) {
    const r = h.get(id);
    if (h.checking(id)) checking++;
    if (!r) continue;
    if (r.verdict === 'honest') honest++;
    else if (isTampering(r.verdict)) {
      flagged++;
      if (!last || r.checkedAt > last.at) last = { nodeId: id, verdict: r.verdict, at: r.checkedAt };
    }
  }
  return { enabled: h.enabled, honest, flagged, unchecked: pool.size - honest - flagged, checking, lastFlagged: last };
}

/** A node's honesty as /nodes shows it (null: this core runs no checks). */
export function honestyOf(core: AdminCore, nodeId: string): HonestyDto | null {
  const h = core.honesty;
  if (!h) return null;
  const r = h.get(nodeId);
  return {
    verdict: r?.verdict ?? 'unchecked',
    checkedAt: r?.checkedAt ?? null,
    evidence: r?.evidence ?? [],
    inconclusive: r?.inconclusive ?? [],
    accepted: r?.accepted ?? false,
    cleanChecks: r?.cleanChecks ?? 0,
    cleanChecksToClear: CLEAN_CHECKS_TO_CLEAR,
    checking: h.checking(nodeId),
    durationMs: r?.durationMs ?? null,
    bytes: r?.bytes ?? null,
  };
}

function nativeView(core: AdminCore): Status['native'] {
  const s = nativeStatus();
  const trims = core.heapTrimmer?.stats ?? { trims: 0, maxMs: 0 };
  const data = dataEngineStatus();
  return {
    loaded: s.loaded,
    reason: s.loaded ? null : s.reason,
    heapTrims: trims.trims,
    heapTrimMaxMs: Math.round(trims.maxMs * 100) / 100,
    dataPath: data.engine,
    dataPathReason: data.reason,
    crypto: data.library,
    ...mallocView(),
  };
}

/** Bytes as MiB with one decimal. */
function mb(bytes: number): number {
  return Math.round(bytes / 104857.6) / 10;
}

/** glibc malloc's totals, MiB (one decimal), when the native module can read them. */
function mallocView(): Pick<Status['native'], 'malloc'> {
  const t = loadNative()?.mallocTotals();
  if (!t) return {};
  return { malloc: { systemMb: mb(t.systemBytes), inUseMb: mb(t.inUseBytes), freeMb: mb(t.freeBytes) } };
}

/** `host` the node's host name (its id, as /nodes[].host), `ip` its server address. */
function placeOf(node: { id: string; ip: string } | undefined): { host: string | null; ip: string | null } {
  return { host: node?.id ?? null, ip: node?.ip ?? null };
}

const poolIndexes = new WeakMap<readonly VpnGateNode[], ReadonlyMap<string, VpnGateNode>>();

/** The pool by node id, built once per list (the array changes only when the list does): status runs every second. */
function poolIndex(core: AdminCore): ReadonlyMap<string, VpnGateNode> {
  const nodes = core.nodes?.nodes ?? [];
  let index = poolIndexes.get(nodes);
  if (!index) poolIndexes.set(nodes, (index = new Map(nodes.map((n) => [n.id, n]))));
  return index;
}

function poolNode(core: AdminCore, nodeId: string | null): VpnGateNode | undefined {
  return nodeId ? poolIndex(core).get(nodeId) : undefined;
}

/** The tunnels taking new sessions, with their per-member stats. */
export function membersView(core: AdminCore): Status['members'] {
  const { controller: c, manager: m } = core;
  if (!m) return [];
  const pool = poolIndex(core);
  const memberInfo = new Map((c?.members ?? []).map((x) => [x.egress, x]));
  return m.members.map((e) => {
    const nodeId = nodeIdOf(e.egress);
    const node = nodeId ? pool.get(nodeId) : undefined;
    return {
      egressId: e.egress.id,
      nodeId,
      protocol: protocolOf(e.egress),
      primary: e.primary,
      ...placeOf(node),
      country: node?.countryLong ?? null,
      since: e.primary ? (c?.active?.since ?? e.since) : e.since,
      down: e.down,
      sessions: e.sessions,
      bytesUp: e.egress.stats.bytesUp,
      bytesDown: e.egress.stats.bytesDown,
      rttMs: nodeId
        ? (c?.rttOf(nodeId) ?? core.selector?.last?.ranked.find((r) => r.node.id === nodeId)?.terms.rttMs ?? null)
        : null,
      failures: e.egress.stats.failures + (memberInfo.get(e.egress as NodeTunnel)?.failures ?? 0),
    };
  });
}

/** GET /nodes */
export function nodesView(core: AdminCore): Nodes {
  const list = core.nodes;
  if (!list) return { nodes: [], fetchedAt: null, source: 'none (direct egress)', via: 'none' };
  const ranking = core.selector?.last ?? null;
  const ranks = new Map((ranking?.ranked ?? []).map((r) => [r.node.id, r]));
  const excluded = new Map((ranking?.excluded ?? []).map((x) => [x.nodeId, x.reason]));
  const c = core.controller;
  const draining = new Set((core.manager?.draining ?? []).map((d) => nodeIdOf(d.egress)));
  const memberNodes = new Set((c?.members ?? []).map((x) => x.node.id));
  const now = Date.now();
  const weakTls = core.store?.weakTlsNodes(now - WEAK_TLS_REMEMBER_MS) ?? new Set<string>();
  const nodes = list.nodes.map((n): NodeDto => {
    const ranked = ranks.get(n.id);
    const h = core.store?.history(n.id);
    const state: NodeDto['state'] =
      c?.active?.node.id === n.id || memberNodes.has(n.id)
        ? 'active'
        : c?.standby?.node.id === n.id
          ? 'standby'
          : draining.has(n.id)
            ? 'draining'
            : h && inBackoff(h, now)
              ? 'backoff'
              : 'candidate';
    return {
      id: n.id,
      host: n.id,
      ip: n.ip,
      port: n.port,
      proto: n.proto,
      country: n.countryLong,
      countryCode: n.countryShort,
      prior: ranked?.priorTerms.prior ?? null,
      rttMs: ranked?.terms.rttMs ?? null,
      score: ranked?.terms.total ?? null,
      scoreTerms: ranked
        ? {
            latency: ranked.terms.latency,
            prior: ranked.terms.prior,
            history: ranked.terms.history,
            recentFailures: ranked.terms.recentFailures,
          }
        : null,
      successes: h?.successes ?? 0,
      failures: h?.failures ?? 0,
      lastSuccessAt: h?.lastSuccessAt ?? null,
      lastFailureAt: h?.lastFailureAt ?? null,
      backoffUntil: h?.backoffUntil ?? null,
      left: h?.left && h.left.until > now ? h.left : null,
      urlDelayMs: c?.urlDelays.get(n.id)?.ms ?? null,
      state,
      lastListedAt: n.lastListedAt ?? null,
      excluded: excluded.get(n.id) ?? null,
      weakTls: weakTls.has(n.id),
      honesty: honestyOf(core, n.id),
      protocols: (c?.protocolsFor(n) ?? [{ protocol: 'openvpn' as const, record: null }]).map(
        ({ protocol, record: r }) => ({
          protocol,
          tried: r?.tried ?? 0,
          worked: r?.worked ?? 0,
          lastOk: r?.lastOk ?? null,
          lastError: r?.lastError ?? null,
          at: r?.at ?? null,
        }),
      ),
    };
  });
  return { nodes, fetchedAt: list.fetchedAt, source: list.source, via: list.via };
}

function splitHostPort(s: string | null): { host: string; port: string } {
  if (!s) return { host: '', port: '0' };
  const i = s.lastIndexOf(':');
  return { host: unbracket(s.slice(0, i)), port: s.slice(i + 1) };
}

/** GET /connections (Gatehop's fields and Clash's in one shape). */
/**
 * Every proxy session the core has: the loopback listener's, then the shared listener's (#63),
 * whose ids are prefixed `lan-` (each listener counts its own from 1) and which name the device.
 */
export function allSessions(core: AdminCore): Array<{ id: string; session: ProxySession; lan: boolean }> {
  const local = [...core.proxy.sessions].map((session) => ({ id: String(session.id), session, lan: false }));
  const shared = [...(core.share?.server?.sessions ?? [])].map((session) => ({
    id: `lan-${session.id}`,
    session,
    lan: true,
  }));
  return [...local, ...shared];
}

export function connectionsView(core: AdminCore) {
  const egressNode = new Map<string, string | null>();
  for (const e of [
    ...(core.manager?.members ?? []).map((x) => x.egress),
    ...(core.manager?.draining ?? []).map((d) => d.egress),
  ])
    if (e) egressNode.set(e.id, nodeIdOf(e));
  const inbound = splitHostPort(core.proxyAddress);
  const sharePort = String(core.share?.port ?? '');
  const connections = allSessions(core).map(({ id, session: s, lan }) => {
    const src = splitHostPort(s.client);
    const dst = splitHostPort(s.target);
    const nodeId = s.egressId ? (egressNode.get(s.egressId) ?? null) : null;
    return {
      id,
      kind: s.kind,
      client: s.client,
      target: s.target,
      egressId: s.egressId,
      nodeId,
      bytesUp: s.bytesUp,
      bytesDown: s.bytesDown,
      startedAt: s.startedAt,
      metadata: {
        network: 'tcp' as const,
        type: s.kind === 'socks5' ? 'Socks5' : s.kind === 'capture' ? 'Tun' : 'HTTP',
        sourceIP: src.host,
        sourcePort: src.port,
        destinationIP: /^[\d.]+$|:/.test(dst.host) ? dst.host : '',
        destinationPort: dst.port,
        host: /^[\d.]+$|:/.test(dst.host) ? '' : dst.host,
        // mihomo's further fields, where Gatehop knows them: its one inbound, names resolved in the tunnel.
        inboundIP: lan ? '' : inbound.host,
        inboundPort: lan ? sharePort : inbound.port,
        inboundName: lan ? 'gatehop-lan' : 'gatehop',
        inboundUser: s.userName ?? '',
        dnsMode: 'normal',
        process: '',
        processPath: '',
        remoteDestination: '',
        sniffHost: '',
        specialProxy: '',
        specialRules: '',
      },
      upload: s.bytesUp,
      download: s.bytesDown,
      start: new Date(s.startedAt).toISOString(),
      // mihomo lists the chain from the outbound to the group: the node, then GATEHOP; or DIRECT / REJECT.
      chains:
        s.decision && s.decision.target !== 'TUNNEL'
          ? [s.decision.target]
          : [nodeId ?? s.egressId ?? 'DIRECT', 'GATEHOP'],
      rule: s.decision ? clashRuleType(s.decision.rule) : 'Match',
      rulePayload: s.decision?.payload ?? '',
      route: s.decision ? { target: s.decision.target, rule: s.decision.rule, payload: s.decision.payload } : null,
    };
  });
  const shared = core.share?.server?.stats;
  return {
    downloadTotal: core.proxy.stats.bytesDown + (shared?.bytesDown ?? 0),
    uploadTotal: core.proxy.stats.bytesUp + (shared?.bytesUp ?? 0),
    connections,
  };
}

/** The routing part of /status. */
export function routingView(core: AdminCore): RoutingStatusDto | null {
  const r = core.routing;
  if (!r) return null;
  const table = r.table();
  return {
    mode: r.mode,
    rules: table.rules.length,
    custom: r.custom,
    errors: r.errors(),
    ruleSets: r.ruleSets(),
    routed: { ...core.proxy.stats.routed },
  };
}

/** The main thread's V8 heap: its young generation and all its spaces, MiB committed. */
function mainHeap(): { youngMb: number; committedMb: number } {
  const young = getHeapSpaceStatistics()
    .filter((s) => s.space_name === 'new_space' || s.space_name === 'new_large_object_space')
    .reduce((sum, s) => sum + s.physical_space_size, 0);
  return { youngMb: mb(young), committedMb: mb(getHeapStatistics().total_physical_size) };
}
