import { create } from 'zustand';
import { connectionsSlice, type ConnectionsSlice } from './connections-slice.js';
import { egressSlice, type EgressSlice } from './egress-slice.js';
import { latencySlice, type LatencySlice } from './latency-slice.js';
import { logsSlice, type LogsSlice } from './logs-slice.js';
import { nodesSlice, type NodesSlice } from './nodes-slice.js';
import { settingsSlice, type SettingsSlice } from './settings-slice.js';
import { uiSlice, type UiSlice } from './ui-slice.js';

export type AppState = EgressSlice & NodesSlice & LatencySlice & ConnectionsSlice & LogsSlice & SettingsSlice & UiSlice;

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
