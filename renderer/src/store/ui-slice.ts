import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';
import type { Connection, View } from './types.js';

export interface UiSlice {
  view: View;
  connection: Connection;
  /** The last failed action, shown until dismissed. */
  actionError: { code: string; message: string } | null;
  /** Nodes the user used this session (the chart shows them). */
  recentNodes: string[];
  setView(v: View): void;
  setConnection(c: Connection): void;
  setActionError(e: { code: string; message: string } | null): void;
  noteRecent(nodeId: string): void;
}

export const uiSlice: StateCreator<AppState, [], [], UiSlice> = (set) => ({
  view: 'overview',
  connection: { state: 'connecting' },
  actionError: null,
  recentNodes: [],
  setView: (view) => set({ view }),
  setConnection: (connection) => set({ connection }),
  setActionError: (actionError) => set({ actionError }),
  noteRecent: (nodeId) => set((s) => (s.recentNodes[0] === nodeId ? s : { recentNodes: [nodeId, ...s.recentNodes.filter((n) => n !== nodeId)].slice(0, 4) })),
});
