import type { TrafficRow } from '../store/index.js';
import { daysBefore } from './day.js';

export interface TrafficTotals {
  up: number;
  down: number;
  flows: number;
}

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

type Dimension = 'node' | 'network' | 'route' | 'rule' | 'program' | 'device';

/**
 * Adds the rows of days `from`..`to` up by day and by each dimension. `label` names a part (a
 * network's key is a hash; its label is what the user recognises).
 */
export function summarize(
  rows: readonly TrafficRow[],
  range: { from: string; to: string; nodesOnly: boolean },
  label: (dimension: Dimension, key: string) => string,
): TrafficSummary {
  const days = new Map<string, TrafficDay>();
  const lastNoon = Date.parse(`${range.to}T12:00:00`); // local time: the user's days
  for (let i = 0; i <= 3650; i++) {
    const d = daysBefore(lastNoon, i);
    if (d < range.from) break;
    days.set(d, { day: d, tunnel: 0, direct: 0, up: 0, down: 0 });
  }
  const total: TrafficTotals = { up: 0, down: 0, flows: 0 };
  const parts: Record<Dimension, Map<string, TrafficTotals>> = {
    node: new Map(),
    network: new Map(),
    route: new Map(),
    rule: new Map(),
    program: new Map(),
    device: new Map(),
  };
  for (const r of rows) {
    if (r.day < range.from || r.day > range.to) continue;
    if (range.nodesOnly && r.route !== 'TUNNEL') continue;
    total.up += r.bytesUp;
    total.down += r.bytesDown;
    total.flows += r.flows;
    const day = days.get(r.day);
    if (day) {
      day.up += r.bytesUp;
      day.down += r.bytesDown;
      if (r.route === 'TUNNEL') day.tunnel += r.bytesUp + r.bytesDown;
      else if (r.route === 'DIRECT') day.direct += r.bytesUp + r.bytesDown;
    }
    for (const dim of Object.keys(parts) as Dimension[]) {
      const m = parts[dim];
      const t = m.get(r[dim]) ?? { up: 0, down: 0, flows: 0 };
      t.up += r.bytesUp;
      t.down += r.bytesDown;
      t.flows += r.flows;
      m.set(r[dim], t);
    }
  }
  const top = (dim: Dimension): TrafficPart[] => {
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
