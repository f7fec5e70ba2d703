import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';
import type { ConnectionDto, Loadable } from './types.js';

export interface ConnectionsSlice {
  connections: ConnectionDto[];
  connectionsState: Loadable;
  connectionsError: string | null;
  setConnections(c: ConnectionDto[]): void;
  setConnectionsError(message: string): void;
}

export const connectionsSlice: StateCreator<AppState, [], [], ConnectionsSlice> = (set) => ({
  connections: [],
  connectionsState: 'loading',
  connectionsError: null,
  setConnections: (connections) => set({ connections, connectionsState: 'ready', connectionsError: null }),
  setConnectionsError: (message) => set({ connectionsState: 'error', connectionsError: message }),
});
