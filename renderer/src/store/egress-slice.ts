import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';
import type { Loadable, Status, SysproxyState } from './types.js';

/** The core's status: active, standby and draining tunnels, mode, sessions, switching. */
export interface EgressSlice {
  status: Status | null;
  statusState: Loadable;
  statusError: string | null;
  /** Bytes per second, from the difference of two status samples' session totals. */
  throughput: { up: number; down: number } | null;
  sysproxy: SysproxyState | null;
  setStatus(s: Status): void;
  setStatusError(message: string): void;
  setSysproxy(s: SysproxyState): void;
}

export const egressSlice: StateCreator<AppState, [], [], EgressSlice> = (set) => ({
  status: null,
  statusState: 'loading',
  statusError: null,
  throughput: null,
  sysproxy: null,
  setStatus: (status) =>
    set((s) => {
      const prev = s.status?.traffic;
      const dt = prev ? (status.traffic.at - prev.at) / 1000 : 0;
      const throughput = prev && dt >= 0.5 ? { up: Math.max(0, (status.traffic.bytesUp - prev.bytesUp) / dt), down: Math.max(0, (status.traffic.bytesDown - prev.bytesDown) / dt) } : s.throughput;
      return { status, statusState: 'ready', statusError: null, throughput };
    }),
  setStatusError: (message) => set((s) => ({ statusState: s.status ? 'ready' : 'error', statusError: message })),
  setSysproxy: (sysproxy) => set({ sysproxy }),
});
