import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';
import type { Connection, ExitInfo, NodeTest, View } from './types.js';

export interface UiSlice {
  view: View;
  connection: Connection;
  /** The last failed action, shown until dismissed. */
  actionError: { code: string; message: string } | null;
  /** The OS proxy was changed by another program, or recovered after a crash: said until dismissed. */
  sysproxyNotice: { type: 'overridden' | 'left-alone' | 'recovered'; at: number } | null;
  /**
   * The database incident (status.store.incident) the user dismissed, by its time: said once. Kept
   * in the page's storage so a reload does not say it again.
   */
  dismissedStoreIncidentAt: number | null;
  dismissStoreIncident(at: number): void;
  /** Nodes the user used this session (the chart shows them). */
  recentNodes: string[];
  /** "Test all": its progress, and each node's latest result (from it or from a row's Test). */
  nodeTest: NodeTest | null;
  testResults: Record<string, { ms: number | null; at: number; error: string | null }>;
  /** Where am I (exitCheck.url), the latest measurement. */
  exit: ExitInfo | null;
  setNodeTest(p: NodeTest | null): void;
  setTestResult(nodeId: string, r: { ms: number | null; error: string | null }, at?: number): void;
  setExit(e: ExitInfo | null): void;
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
