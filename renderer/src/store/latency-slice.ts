import type { StateCreator } from 'zustand';
import type { AppState, LatencySlice } from './state.js';
import type { LatencySample } from './types.js';

/** The chart's window, and a cap per series so a long session stays bounded. */
export const LATENCY_WINDOW_MS = 10 * 60_000;
export const LATENCY_MAX_POINTS = 1200;

/** Series not touched by a batch are trimmed at most this often. */
const SWEEP_MS = 10_000;

export function trimSeries(series: LatencySample[], now: number): LatencySample[] {
  let start = 0;
  while (start < series.length && series[start]!.at < now - LATENCY_WINDOW_MS) start++;
  const kept = start > 0 ? series.slice(start) : series;
  return kept.length > LATENCY_MAX_POINTS ? kept.slice(kept.length - LATENCY_MAX_POINTS) : kept;
}

/**
 * One batch (a ranking's samples for every node, or one URL test) costs one pass over the batch
 * and the series it touches, not over every series: a ranking of N nodes is O(N), not O(N²).
 * Untouched series keep their identity (a chart of another node does not redraw).
 */
export const latencySlice: StateCreator<AppState, [], [], LatencySlice> = (set) => ({
  latency: {},
  latencySweptAt: 0,
  addLatency: (samples, now = Date.now()) =>
    set((s) => {
      if (samples.length === 0) return s;
      const byNode = new Map<string, LatencySample[]>();
      for (const sample of samples) {
        const list = byNode.get(sample.nodeId);
        if (list) list.push(sample);
        else byNode.set(sample.nodeId, [sample]);
      }
      const next = { ...s.latency };
      for (const [id, added] of byNode) {
        const cur = next[id] ?? [];
        // Samples arrive mostly in order; a late one (or a batch out of order) is put in its place.
        const inOrder =
          (cur.length === 0 || cur[cur.length - 1]!.at <= added[0]!.at) &&
          added.every((x, i) => i === 0 || added[i - 1]!.at <= x.at);
        const merged = inOrder ? cur.concat(added) : [...cur, ...added].sort((a, b) => a.at - b.at);
        const t = trimSeries(merged, now);
        if (t.length === 0) delete next[id];
        else next[id] = t;
      }
      const sweep = now - s.latencySweptAt >= SWEEP_MS;
      if (sweep) {
        for (const id of Object.keys(next)) {
          if (byNode.has(id)) continue;
          const t = trimSeries(next[id]!, now);
          if (t.length === 0) delete next[id];
          else if (t !== next[id]) next[id] = t;
        }
      }
      return { latency: next, ...(sweep ? { latencySweptAt: now } : {}) };
    }),
});
