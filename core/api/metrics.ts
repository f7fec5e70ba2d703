import { HONESTY_VERDICTS, isTampering } from '../honesty/index.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { tunnelWorkerCounters, WorkerTunnelEgress } from '../egress/index.js';
import { LoopDelay } from './loop-delay.js';
import type { AdminCore } from './admin-core.js';
import { membersView, tunnelsOf } from './views.js';

type Labels = Record<string, string>;

/**
 * Keeps a Prometheus counter equal to a cumulative figure the core already counts: each scrape
 * adds what grew since the last one, per label set (figures of closed egresses stay counted).
 */
export function mirrorCounter(
  registry: Registry,
  name: string,
  help: string,
  labelNames: string[],
  read: () => Array<[Labels, number]>,
): void {
  const last = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const [labels, value] of read()) {
        const key = JSON.stringify(labels);
        const delta = value - (last.get(key) ?? 0);
        if (delta > 0) this.inc(labels, delta);
        last.set(key, Math.max(value, last.get(key) ?? 0));
      }
    },
  });
}

/**
 * Per-tunnel counters summed over every tunnel ever seen. Live tunnels are read at each scrape; a
 * tunnel that is gone has its last figures folded into its node's retired totals (and the live map
 * forgets it), so the maps grow with the nodes used, not with every tunnel a week of switching
 * opened. Node ids come from lists (outside input): past MAX_RETIRED_NODES the oldest node's
 * totals fold into one `other` row, so sums stay whole and counters never go down.
 */
export class TunnelTotals {
  static readonly MAX_RETIRED_NODES = 512;
  readonly #live = new Map<string, { node: string; values: Record<string, number> }>();
  readonly #retired = new Map<string, Record<string, number>>();

  update(tunnels: ReadonlyArray<{ id: string; nodeId: string; values: Record<string, number> }>): void {
    const now = new Set<string>();
    for (const t of tunnels) {
      now.add(t.id);
      this.#live.set(t.id, { node: t.nodeId, values: t.values });
    }
    for (const [id, t] of this.#live) {
      if (now.has(id)) continue;
      this.#live.delete(id);
      this.#retire(t.node, t.values);
    }
  }

  /** How many rows the totals keep (live tunnels plus retired nodes): bounded. */
  get size(): number {
    return this.#live.size + this.#retired.size;
  }

  sum(key: string): number {
    let n = 0;
    for (const v of this.#live.values()) n += v.values[key] ?? 0;
    for (const v of this.#retired.values()) n += v[key] ?? 0;
    return n;
  }

  byNode(key: string): Array<[Labels, number]> {
    const per = new Map<string, number>();
    for (const [node, v] of this.#retired) per.set(node, (per.get(node) ?? 0) + (v[key] ?? 0));
    for (const v of this.#live.values()) per.set(v.node, (per.get(v.node) ?? 0) + (v.values[key] ?? 0));
    return [...per].map(([node, n]) => [{ egress: node }, n]);
  }

  #retire(node: string, values: Record<string, number>): void {
    addInto(this.#retired, node, values);
    // Most recently retired last: the oldest is folded first.
    const v = this.#retired.get(node)!;
    this.#retired.delete(node);
    this.#retired.set(node, v);
    while (this.#retired.size > TunnelTotals.MAX_RETIRED_NODES) {
      const [oldest, totals] = this.#retired.entries().next().value!;
      if (oldest === 'other') {
        // 'other' itself is the oldest: move it to the end and fold the next one.
        this.#retired.delete('other');
        this.#retired.set('other', totals);
        continue;
      }
      this.#retired.delete(oldest);
      addInto(this.#retired, 'other', totals);
    }
  }
}

function addInto(map: Map<string, Record<string, number>>, key: string, values: Record<string, number>): void {
  const into = map.get(key) ?? {};
  for (const [k, n] of Object.entries(values)) into[k] = (into[k] ?? 0) + n;
  map.set(key, into);
}

/** What TunnelTotals reads of each live tunnel. */
function tunnelFigures(core: AdminCore): Array<{ id: string; nodeId: string; values: Record<string, number> }> {
  return tunnelsOf(core).map((t) => {
    const d = t.diagnostics();
    return {
      id: t.id,
      nodeId: t.nodeId,
      values: {
        reconnects: d.reconnects,
        decryptFailures: d.decryptFailures,
        retransmissions: d.retransmissions,
        dnsHits: d.dnsHits,
        dnsMisses: d.dnsMisses,
        bytesUp: t.stats.bytesUp,
        bytesDown: t.stats.bytesDown,
      },
    };
  });
}

export interface Metrics {
  registry: Registry;
  /** Feeds switch durations (the histogram needs each observation). */
  observeSwitch(durationMs: number): void;
  /** The main event loop's delay since the last scrape (ms): what a stalled tray or window feels. */
  loopDelayMs(): { p50: number; p99: number; max: number };
  close(): void;
}

/** The core's Prometheus metrics (`gatehop_` prefix, base units, `_total` counters), plus process metrics. */
export function createMetrics(core: AdminCore): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gatehop_' });
  // The main event loop's delay (core.loopDelay, the same figures /status shows), by quantile.
  const loop = core.loopDelay ?? new LoopDelay();
  const ownsLoop = !core.loopDelay;
  new Gauge({
    name: 'gatehop_event_loop_delay_seconds',
    help: 'Main event-loop delay over the last 10 s window, by quantile',
    labelNames: ['quantile'],
    registers: [registry],
    collect() {
      const d = loop.read();
      this.set({ quantile: '0.5' }, d.p50Ms / 1000);
      this.set({ quantile: '0.99' }, d.p99Ms / 1000);
      this.set({ quantile: '1' }, d.maxMs / 1000);
    },
  });
  mirrorCounter(
    registry,
    'gatehop_tunnel_worker_failures_total',
    'Tunnel worker threads that crashed, ran out of heap or hung (each cost only its tunnel)',
    [],
    () => [[{}, tunnelWorkerCounters.failures]],
  );
  new Gauge({
    name: 'gatehop_tunnel_heap_bytes',
    help: 'JS heap used by each tunnel worker thread (threads: true)',
    labelNames: ['egress'],
    registers: [registry],
    collect() {
      this.reset();
      for (const t of tunnelsOf(core))
        if (t instanceof WorkerTunnelEgress) this.set({ egress: t.nodeId }, t.diagnostics().heapUsedBytes);
    },
  });
  new Gauge({
    name: 'gatehop_tunnel_wasm_memory_bytes',
    help: 'lwIP WebAssembly memory of each tunnel',
    labelNames: ['egress'],
    registers: [registry],
    collect() {
      this.reset();
      for (const t of tunnelsOf(core)) this.set({ egress: t.nodeId }, t.diagnostics().wasmMemoryBytes);
    },
  });
  const totals = new TunnelTotals();
  const p = core.proxy.stats;

  new Gauge({
    name: 'gatehop_sessions_active',
    help: 'Proxy sessions open now',
    registers: [registry],
    collect() {
      totals.update(tunnelFigures(core)); // once per scrape, before the counters below read it
      this.set(p.sessionsActive);
    },
  });
  mirrorCounter(registry, 'gatehop_sessions_total', 'Proxy sessions accepted', [], () => [[{}, p.sessionsTotal]]);
  mirrorCounter(registry, 'gatehop_sessions_rejected_total', 'Connections refused by admission control', [], () => [
    [{}, p.rejected],
  ]);
  mirrorCounter(
    registry,
    'gatehop_clients_refused_total',
    'Connections refused unheard: not from an address proxy.allowFrom lets in',
    [],
    () => [[{}, p.refusedByAddress]],
  );
  mirrorCounter(registry, 'gatehop_proxy_bytes_total', 'Payload bytes relayed by the proxy', ['direction'], () => [
    [{ direction: 'up' }, p.bytesUp],
    [{ direction: 'down' }, p.bytesDown],
  ]);
  mirrorCounter(
    registry,
    'gatehop_egress_bytes_total',
    'Bytes carried by tunnel egresses, by node',
    ['egress', 'direction'],
    () => [
      ...totals.byNode('bytesUp').map(([l, v]): [Labels, number] => [{ ...l, direction: 'up' }, v]),
      ...totals.byNode('bytesDown').map(([l, v]): [Labels, number] => [{ ...l, direction: 'down' }, v]),
    ],
  );
  mirrorCounter(
    registry,
    'gatehop_proxy_errors_total',
    'SOCKS and HTTP error replies sent, by reply code',
    ['code'],
    () => Object.entries(p.errorReplies).map(([code, n]) => [{ code }, n]),
  );
  mirrorCounter(
    registry,
    'gatehop_route_flows_total',
    'Flows by the target the rule table named (TCP connects, UDP peers)',
    ['target'],
    () => Object.entries(p.routed).map(([target, n]) => [{ target }, n]),
  );
  mirrorCounter(
    registry,
    'gatehop_route_bytes_total',
    'Payload bytes by route target (TCP at session end, UDP as it passes)',
    ['target'],
    () => Object.entries(p.routedBytes).map(([target, n]) => [{ target }, n]),
  );
  mirrorCounter(registry, 'gatehop_proxy_malformed_total', 'Malformed client input, by reason', ['reason'], () =>
    Object.entries(p.malformed).map(([reason, n]) => [{ reason }, n]),
  );
  mirrorCounter(
    registry,
    'gatehop_zero_progress_retries_total',
    'Idle sessions moved to a new egress at a switch',
    [],
    () => [[{}, p.zeroProgressRetries]],
  );

  const c = core.controller;
  const m = core.manager;
  mirrorCounter(
    registry,
    'gatehop_switches_total',
    'Node switches that completed, by kind (user, auto, urgent)',
    ['reason'],
    () => Object.entries(c?.counts.byReason ?? {}).map(([reason, n]) => [{ reason }, n]),
  );
  mirrorCounter(registry, 'gatehop_switch_failures_total', 'Switches that found no working node', [], () => [
    [{}, c?.counts.failed ?? 0],
  ]);
  const switchDuration = new Histogram({
    name: 'gatehop_switch_duration_seconds',
    help: 'Time from a switch decision to the new egress taking sessions',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [registry],
  });
  new Gauge({
    name: 'gatehop_drain_egresses',
    help: 'Replaced egresses still draining',
    registers: [registry],
    collect() {
      this.set(m?.draining.length ?? 0);
    },
  });
  new Gauge({
    name: 'gatehop_drain_sessions',
    help: 'Sessions on draining egresses',
    registers: [registry],
    collect() {
      this.set((m?.draining ?? []).reduce((n, d) => n + d.sessions, 0));
    },
  });
  mirrorCounter(
    registry,
    'gatehop_drain_force_closed_sessions_total',
    'Sessions force-closed at the end of the drain grace (or by a switch limit)',
    [],
    () => [[{}, m?.stats.forceClosedSessions ?? 0]],
  );
  new Gauge({
    name: 'gatehop_egress_up',
    help: '1 when an egress takes new sessions (direct, or an active tunnel)',
    registers: [registry],
    collect() {
      this.set(core.egressKind === 'direct' || m?.active ? 1 : 0);
    },
  });
  new Gauge({
    name: 'gatehop_switch_state',
    help: 'The switch controller state (1 for the current one)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      for (const s of ['idle', 'selecting', 'connecting', 'promoting', 'draining'])
        this.set({ state: s }, (c?.state ?? 'idle') === s ? 1 : 0);
    },
  });
  // Per member (the active tunnel and the balance members), labelled by node: the rows /status shows.
  const memberRows = () => membersView(core).map((r) => ({ ...r, node: r.nodeId ?? r.egressId }));
  new Gauge({
    name: 'gatehop_member_sessions',
    help: 'Sessions open on each tunnel taking new sessions (active and balance members)',
    labelNames: ['node', 'primary'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of memberRows()) this.set({ node: r.node, primary: String(r.primary) }, r.sessions);
    },
  });
  new Gauge({
    name: 'gatehop_member_up',
    help: '1 for a member taking sessions, 0 for one marked down (failing probes or liveness)',
    labelNames: ['node'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of memberRows()) this.set({ node: r.node }, r.down ? 0 : 1);
    },
  });
  new Gauge({
    name: 'gatehop_member_rtt_seconds',
    help: 'Latest probe or URL-test round trip per member',
    labelNames: ['node'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of memberRows()) if (r.rttMs !== null) this.set({ node: r.node }, r.rttMs / 1000);
    },
  });
  new Gauge({
    name: 'gatehop_member_failures',
    help: 'Failures per member since it joined (probe failures, liveness losses, failed connects)',
    labelNames: ['node'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of memberRows()) this.set({ node: r.node }, r.failures);
    },
  });
  new Gauge({
    name: 'gatehop_node_rtt_seconds',
    help: 'Probe round trip per ranked node',
    labelNames: ['node'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of core.selector?.last?.ranked ?? [])
        if (r.terms.rttMs !== null) this.set({ node: r.node.id }, r.terms.rttMs / 1000);
    },
  });
  new Gauge({
    name: 'gatehop_nodes_by_honesty',
    help: 'Nodes of the pool by what the honesty checks found (honest, dns-tampering, http-tampering, tls-interception, unchecked)',
    labelNames: ['verdict'],
    registers: [registry],
    collect() {
      this.reset();
      const h = core.honesty;
      if (!h) return;
      const counts = new Map<string, number>(HONESTY_VERDICTS.map((v) => [v, 0]));
      for (const n of core.nodes?.nodes ?? []) {
        const v = h.get(n.id)?.verdict ?? 'unchecked';
        counts.set(v, (counts.get(v) ?? 0) + 1);
      }
      for (const [verdict, n] of counts) this.set({ verdict }, n);
    },
  });
  new Gauge({
    name: 'gatehop_node_flagged',
    help: 'Nodes found to tamper (1 per node and verdict; at most 512 nodes)',
    labelNames: ['node', 'verdict'],
    registers: [registry],
    collect() {
      this.reset();
      let n = 0;
      for (const [id, r] of core.honesty?.records ?? [])
        if (isTampering(r.verdict) && n++ < 512) this.set({ node: id, verdict: r.verdict }, 1);
    },
  });
  mirrorCounter(registry, 'gatehop_dns_cache_hits_total', 'In-tunnel DNS answers served from cache', [], () => [
    [{}, totals.sum('dnsHits')],
  ]);
  mirrorCounter(registry, 'gatehop_dns_cache_misses_total', 'In-tunnel DNS lookups that went to a server', [], () => [
    [{}, totals.sum('dnsMisses')],
  ]);
  mirrorCounter(registry, 'gatehop_tunnel_reconnects_total', 'OpenVPN L1 reconnects', [], () => [
    [{}, totals.sum('reconnects')],
  ]);
  mirrorCounter(
    registry,
    'gatehop_tunnel_decrypt_failures_total',
    'Data packets that failed authentication',
    [],
    () => [[{}, totals.sum('decryptFailures')]],
  );
  mirrorCounter(
    registry,
    'gatehop_netstack_retransmissions_total',
    'TCP segments the user-space stack retransmitted',
    [],
    () => [[{}, totals.sum('retransmissions')]],
  );
  // Where the bytes of ended flows went (#64), by route: the ledger's own counts since start.
  mirrorCounter(
    registry,
    'gatehop_flow_bytes_total',
    'Bytes of ended proxy flows, by route (TUNNEL, DIRECT, REJECT) and direction',
    ['route', 'direction'],
    () =>
      [...(core.traffic?.sinceStart ?? [])].flatMap(([route, t]): Array<[Labels, number]> => [
        [{ route, direction: 'up' }, t.up],
        [{ route, direction: 'down' }, t.down],
      ]),
  );
  return {
    registry,
    observeSwitch: (ms) => switchDuration.observe(ms / 1000),
    loopDelayMs: () => {
      const d = loop.read();
      return { p50: d.p50Ms, p99: d.p99Ms, max: d.maxMs };
    },
    close: () => {
      if (ownsLoop) loop.close();
    },
  };
}
