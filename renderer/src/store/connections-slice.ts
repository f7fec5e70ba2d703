import type { StateCreator } from 'zustand';
import type { AppState, ConnectionsSlice } from './state.js';

export const connectionsSlice: StateCreator<AppState, [], [], ConnectionsSlice> = (set) => ({
  connections: [],
  connectionsState: 'loading',
  connectionsError: null,
  setConnections: (connections) => set({ connections, connectionsState: 'ready', connectionsError: null }),
  setConnectionsError: (message) => set({ connectionsState: 'error', connectionsError: message }),
});
