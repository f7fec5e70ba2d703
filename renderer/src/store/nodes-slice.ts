import type { StateCreator } from 'zustand';
import type { AppState, NodesSlice } from './state.js';
import type { NodeDto } from './types.js';

/** Two node rows say the same thing (every field; nested ones by value). */
function sameNode(a: NodeDto, b: NodeDto): boolean {
  for (const k of Object.keys(b) as Array<keyof NodeDto>) {
    const x = a[k];
    const y = b[k];
    if (x === y) continue;
    if (
      typeof x !== 'object' ||
      typeof y !== 'object' ||
      x === null ||
      y === null ||
      JSON.stringify(x) !== JSON.stringify(y)
    )
      return false;
  }
  return Object.keys(a).length === Object.keys(b).length;
}

/**
 * The new list with every unchanged node kept as the object the store already had, so a `nodes`
 * event re-renders only the rows that changed (the row memo compares by identity); the array
 * itself is kept when nothing changed at all.
 */
export function shareNodes(prev: readonly NodeDto[], next: NodeDto[]): NodeDto[] {
  if (prev.length === 0) return next;
  const old = new Map(prev.map((n) => [n.id, n]));
  let changed = prev.length !== next.length;
  const out = next.map((n, i) => {
    const o = old.get(n.id);
    if (o && sameNode(o, n)) {
      if (prev[i] !== o) changed = true;
      return o;
    }
    changed = true;
    return n;
  });
  return changed ? out : (prev as NodeDto[]);
}

const indexes = new WeakMap<readonly NodeDto[], ReadonlyMap<string, NodeDto>>();

/**
 * The nodes by id, built once per list (the array's identity) and then shared: a selector that
 * looks a node up by id stays O(1) on every store update (a status tick, a log line), instead of
 * walking thousands of nodes each time.
 */
export function nodeIndex(nodes: readonly NodeDto[]): ReadonlyMap<string, NodeDto> {
  let index = indexes.get(nodes);
  if (!index) indexes.set(nodes, (index = new Map(nodes.map((n) => [n.id, n]))));
  return index;
}

export const nodesSlice: StateCreator<AppState, [], [], NodesSlice> = (set) => ({
  nodes: [],
  nodesState: 'loading',
  nodesError: null,
  fetchedAt: null,
  source: '',
  via: 'none',
  refresh: null,
  setNodes: ({ nodes, fetchedAt, source, via }) =>
    set((s) => ({ nodes: shareNodes(s.nodes, nodes), fetchedAt, source, via, nodesState: 'ready', nodesError: null })),
  setNodesError: (message) => set((s) => ({ nodesState: s.nodes.length ? 'ready' : 'error', nodesError: message })),
  setRefresh: (refresh) => set({ refresh }),
  checking: {},
  setChecking: (nodeId, on) =>
    set((s) => {
      const { [nodeId]: _was, ...rest } = s.checking;
      return { checking: on ? { ...rest, [nodeId]: true } : rest };
    }),
  setNodeHonesty: (nodeId, honesty) =>
    set((s) => {
      const i = s.nodes.findIndex((n) => n.id === nodeId);
      if (i < 0 || JSON.stringify(s.nodes[i]!.honesty) === JSON.stringify(honesty)) return {};
      const nodes = [...s.nodes];
      nodes[i] = { ...nodes[i]!, honesty };
      return { nodes };
    }),
});
