import { create } from 'zustand';
import { connectionsSlice } from './connections-slice.js';
import { egressSlice } from './egress-slice.js';
import { latencySlice } from './latency-slice.js';
import { logsSlice } from './logs-slice.js';
import { nodesSlice } from './nodes-slice.js';
import { settingsSlice } from './settings-slice.js';
import { uiSlice } from './ui-slice.js';
import type { AppState } from './state.js';

export type { AppState };

/** One store, combined once from the slices; fed only by CoreClient events and call results (feed.ts). */
export function createAppStore() {
  return create<AppState>()((...a) => ({
    ...egressSlice(...a),
    ...nodesSlice(...a),
    ...latencySlice(...a),
    ...connectionsSlice(...a),
    ...logsSlice(...a),
    ...settingsSlice(...a),
    ...uiSlice(...a),
  }));
}

export type AppStore = ReturnType<typeof createAppStore>;
