import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';
import type { Connection, View } from './types.js';

export interface UiSlice {
  view: View;
  connection: Connection;
  /** The last failed action, shown until dismissed. */
  actionError: { code: string; message: string } | null;
  /** The OS proxy was changed by another program, or recovered after a crash: said until dismissed. */
  sysproxyNotice: { type: 'overridden' | 'left-alone' | 'recovered'; at: number } | null;
  /** Nodes the user used this session (the chart shows them). */
  recentNodes: string[];
  setView(v: View): void;
  setConnection(c: Connection): void;
  setActionError(e: { code: string; message: string } | null): void;
  setSysproxyNotice(n: UiSlice['sysproxyNotice']): void;
  noteRecent(nodeId: string): void;
}

export const uiSlice: StateCreator<AppState, [], [], UiSlice> = (set) => ({
  view: 'overview',
  connection: { state: 'connecting' },
  actionError: null,
  sysproxyNotice: null,
  recentNodes: [],
  setView: (view) => set({ view }),
  setConnection: (connection) => set({ connection }),
  setActionError: (actionError) => set({ actionError }),
  setSysproxyNotice: (sysproxyNotice) => set({ sysproxyNotice }),
  noteRecent: (nodeId) => set((s) => (s.recentNodes[0] === nodeId ? s : { recentNodes: [nodeId, ...s.recentNodes.filter((n) => n !== nodeId)].slice(0, 4) })),
});
