import type { StateCreator } from 'zustand';
import type { AppState, UiSlice } from './state.js';

export const uiSlice: StateCreator<AppState, [], [], UiSlice> = (set) => ({
  view: 'overview',
  connection: { state: 'connecting' },
  actionError: null,
  sysproxyNotice: null,
  dismissedStoreIncidentAt: readDismissedStoreIncident(),
  dismissStoreIncident: (at) => {
    try {
      globalThis.localStorage?.setItem(DISMISSED_STORE_KEY, String(at));
    } catch {
      // Storage refused (private mode, quota): dismissed for this page only.
    }
    set({ dismissedStoreIncidentAt: at });
  },
  recentNodes: [],
  nodeTest: null,
  testResults: {},
  exit: null,
  // A progress event names the node it just finished: its result joins the table's.
  setNodeTest: (nodeTest) =>
    set((s) => {
      const last = nodeTest?.last;
      if (!last || s.nodeTest?.last === last) return { nodeTest };
      return {
        nodeTest,
        testResults: { ...s.testResults, [last.nodeId]: { ms: last.ms, at: Date.now(), error: null } },
      };
    }),
  setTestResult: (nodeId, r, at = Date.now()) =>
    set((s) => ({ testResults: { ...s.testResults, [nodeId]: { ...r, at } } })),
  setExit: (exit) => set({ exit }),
  setView: (view) => set({ view }),
  setConnection: (connection) => set({ connection }),
  setActionError: (actionError) => set({ actionError }),
  setSysproxyNotice: (sysproxyNotice) => set({ sysproxyNotice }),
  noteRecent: (nodeId) =>
    set((s) =>
      s.recentNodes[0] === nodeId
        ? s
        : { recentNodes: [nodeId, ...s.recentNodes.filter((n) => n !== nodeId)].slice(0, 4) },
    ),
});

const DISMISSED_STORE_KEY = 'gatehop.dismissedStoreIncidentAt';

function readDismissedStoreIncident(): number | null {
  try {
    const v = globalThis.localStorage?.getItem(DISMISSED_STORE_KEY);
    return v ? Number(v) : null;
  } catch {
    return null;
  }
}
