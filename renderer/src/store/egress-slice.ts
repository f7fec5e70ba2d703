import type { StateCreator } from 'zustand';
import type { AppState, EgressSlice } from './state.js';

/** The traffic graph's window: throughput points from status samples (a point per status, ~1 s). */
export const TRAFFIC_WINDOW_MS = 10 * 60_000;

export const egressSlice: StateCreator<AppState, [], [], EgressSlice> = (set) => ({
  status: null,
  statusState: 'loading',
  statusError: null,
  throughput: null,
  traffic: [],
  sysproxy: null,
  setStatus: (status) =>
    set((s) => {
      const prev = s.status?.traffic;
      const dt = prev ? (status.traffic.at - prev.at) / 1000 : 0;
      const fresh = prev && dt >= 0.5;
      const throughput = fresh
        ? {
            up: Math.max(0, (status.traffic.bytesUp - prev.bytesUp) / dt),
            down: Math.max(0, (status.traffic.bytesDown - prev.bytesDown) / dt),
          }
        : s.throughput;
      const cut = status.traffic.at - TRAFFIC_WINDOW_MS;
      const traffic =
        fresh && throughput
          ? [...s.traffic.filter((p) => p.at >= cut), { at: status.traffic.at, ...throughput }]
          : s.traffic;
      return { status, statusState: 'ready', statusError: null, throughput, traffic };
    }),
  setStatusError: (message) => set((s) => ({ statusState: s.status ? 'ready' : 'error', statusError: message })),
  setSysproxy: (sysproxy) => set({ sysproxy }),
});
