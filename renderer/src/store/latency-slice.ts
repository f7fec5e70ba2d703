import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';
import type { LatencySample } from './types.js';

/** The chart's window, and a cap per series so a long session stays bounded. */
export const LATENCY_WINDOW_MS = 10 * 60_000;
export const LATENCY_MAX_POINTS = 1200;

export interface LatencySlice {
  /** Per node, oldest first, within the window. */
  latency: Record<string, LatencySample[]>;
  addLatency(samples: LatencySample[], now?: number): void;
}

export function trimSeries(series: LatencySample[], now: number): LatencySample[] {
  let start = 0;
  while (start < series.length && series[start]!.at < now - LATENCY_WINDOW_MS) start++;
  const kept = start > 0 ? series.slice(start) : series;
  return kept.length > LATENCY_MAX_POINTS ? kept.slice(kept.length - LATENCY_MAX_POINTS) : kept;
}

export const latencySlice: StateCreator<AppState, [], [], LatencySlice> = (set) => ({
  latency: {},
  addLatency: (samples, now = Date.now()) =>
    set((s) => {
      if (samples.length === 0) return s;
      const next = { ...s.latency };
      for (const sample of samples) {
        const cur = next[sample.nodeId] ?? [];
        // Samples arrive mostly in order; the rare late one is put in its place.
        const series = cur.length && cur[cur.length - 1]!.at > sample.at ? [...cur, sample].sort((a, b) => a.at - b.at) : [...cur, sample];
        next[sample.nodeId] = series;
      }
      for (const id of Object.keys(next)) {
        const t = trimSeries(next[id]!, now);
        if (t.length === 0) delete next[id];
        else next[id] = t;
      }
      return { latency: next };
    }),
});
