import {
  TRAFFIC_DIMENSIONS,
  type TrafficAggregates,
  type TrafficDimension,
  type TrafficRow,
  type TrafficSums,
} from '../store/index.js';
import { daysBefore } from './day.js';

export type TrafficTotals = TrafficSums;

/** One part of a breakdown: its key as stored ('' = unknown or none) and the name the user is shown. */
export interface TrafficPart extends TrafficTotals {
  key: string;
  label: string;
}

export interface TrafficDay {
  day: string;
  /** Bytes both ways through nodes, on the host's network (DIRECT), and in all. */
  tunnel: number;
  direct: number;
  up: number;
  down: number;
}

export interface TrafficSummary {
  from: string;
  to: string;
  /** Only what went through nodes (what the volunteers carried). */
  nodesOnly: boolean;
  total: TrafficTotals;
  /** Every day of the range, oldest first, days without traffic included. */
  days: TrafficDay[];
  byNode: TrafficPart[];
  byNetwork: TrafficPart[];
  byRoute: TrafficPart[];
  byRule: TrafficPart[];
  byProgram: TrafficPart[];
  byDevice: TrafficPart[];
}

/** Parts listed per breakdown (the largest; what is left is summed in one more part, key '…'). */
export const TOP_PARTS = 20;

export interface TrafficRange {
  from: string;
  to: string;
  nodesOnly: boolean;
}

/** Rows (the ones not written yet, or a core's without a database) added up as SQLite adds the table up. */
export function aggregate(rows: readonly TrafficRow[], range: TrafficRange): TrafficAggregates {
  const days = new Map<string, TrafficAggregates['days'][number]>();
  const parts = Object.fromEntries(
    TRAFFIC_DIMENSIONS.map((d) => [d, new Map<string, TrafficSums & { key: string }>()]),
  );
  for (const r of rows) {
    if (r.day < range.from || r.day > range.to || (range.nodesOnly && r.route !== 'TUNNEL')) continue;
    const dayKey = `${r.day}\0${r.route}`;
    add(days, dayKey, { day: r.day, route: r.route }, r);
    for (const d of TRAFFIC_DIMENSIONS) add(parts[d]!, r[d], { key: r[d] }, r);
  }
  return {
    days: [...days.values()],
    parts: Object.fromEntries(
      TRAFFIC_DIMENSIONS.map((d) => [d, [...parts[d]!.values()]]),
    ) as TrafficAggregates['parts'],
  };
}

function add<T extends object>(m: Map<string, T & TrafficSums>, key: string, base: T, r: TrafficRow): void {
  const t = m.get(key) ?? { ...base, up: 0, down: 0, flows: 0 };
  t.up += r.bytesUp;
  t.down += r.bytesDown;
  t.flows += r.flows;
  m.set(key, t);
}

/**
 * The summary of `range` from aggregates (the database's and the pending rows'): every day of the
 * range, each breakdown's largest parts. `label` names a part (a network's key is a hash; its
 * label is what the user recognises).
 */
export function summarize(
  sources: readonly TrafficAggregates[],
  range: TrafficRange,
  label: (dimension: TrafficDimension, key: string) => string,
): TrafficSummary {
  const days = new Map<string, TrafficDay>();
  const lastNoon = Date.parse(`${range.to}T12:00:00`); // local time: the user's days
  for (let i = 0; i <= 3650; i++) {
    const d = daysBefore(lastNoon, i);
    if (d < range.from) break;
    days.set(d, { day: d, tunnel: 0, direct: 0, up: 0, down: 0 });
  }
  const total: TrafficTotals = { up: 0, down: 0, flows: 0 };
  const parts = Object.fromEntries(TRAFFIC_DIMENSIONS.map((d) => [d, new Map<string, TrafficTotals>()])) as Record<
    TrafficDimension,
    Map<string, TrafficTotals>
  >;
  for (const s of sources) {
    for (const r of s.days) {
      total.up += r.up;
      total.down += r.down;
      total.flows += r.flows;
      const day = days.get(r.day);
      if (!day) continue;
      day.up += r.up;
      day.down += r.down;
      if (r.route === 'TUNNEL') day.tunnel += r.up + r.down;
      else if (r.route === 'DIRECT') day.direct += r.up + r.down;
    }
    for (const d of TRAFFIC_DIMENSIONS)
      for (const p of s.parts[d]) {
        const t = parts[d].get(p.key) ?? { up: 0, down: 0, flows: 0 };
        t.up += p.up;
        t.down += p.down;
        t.flows += p.flows;
        parts[d].set(p.key, t);
      }
  }
  const top = (dim: TrafficDimension): TrafficPart[] => {
    const all = [...parts[dim]].map(([key, t]) => ({ key, label: label(dim, key), ...t }));
    all.sort((a, b) => b.up + b.down - (a.up + a.down) || a.key.localeCompare(b.key));
    if (all.length <= TOP_PARTS) return all;
    const rest = all
      .slice(TOP_PARTS - 1)
      .reduce((s, p) => ({ ...s, up: s.up + p.up, down: s.down + p.down, flows: s.flows + p.flows }), {
        key: '…',
        label: '…',
        up: 0,
        down: 0,
        flows: 0,
      });
    return [...all.slice(0, TOP_PARTS - 1), rest];
  };
  return {
    ...range,
    total,
    days: [...days.values()].reverse(),
    byNode: top('node'),
    byNetwork: top('network'),
    byRoute: top('route'),
    byRule: top('rule'),
    byProgram: top('program'),
    byDevice: top('device'),
  };
}
