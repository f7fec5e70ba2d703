import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';
import type { ListVia, Loadable, NodeDto, RefreshProgress } from './types.js';

export interface NodesSlice {
  nodes: NodeDto[];
  nodesState: Loadable;
  nodesError: string | null;
  fetchedAt: number | null;
  source: string;
  via: ListVia;
  refresh: RefreshProgress | null;
  setNodes(n: { nodes: NodeDto[]; fetchedAt: number | null; source: string; via: ListVia }): void;
  setNodesError(message: string): void;
  setRefresh(p: RefreshProgress | null): void;
}

export const nodesSlice: StateCreator<AppState, [], [], NodesSlice> = (set) => ({
  nodes: [],
  nodesState: 'loading',
  nodesError: null,
  fetchedAt: null,
  source: '',
  via: 'none',
  refresh: null,
  setNodes: ({ nodes, fetchedAt, source, via }) => set({ nodes, fetchedAt, source, via, nodesState: 'ready', nodesError: null }),
  setNodesError: (message) => set((s) => ({ nodesState: s.nodes.length ? 'ready' : 'error', nodesError: message })),
  setRefresh: (refresh) => set({ refresh }),
});
