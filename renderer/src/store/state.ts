/**
 * The store's shape: every slice's state and actions, and AppState, their sum. Apart from the
 * slices that implement them, so a slice and the store type each import this file, not each other.
 */
import type {
  LogLine,
  Connection,
  ConnectionDto,
  ExitInfo,
  LatencySample,
  ListVia,
  Loadable,
  NodeDto,
  NodeTest,
  RefreshProgress,
  Settings,
  Status,
  SysproxyState,
  View,
} from './types.js';

export interface TrafficPoint {
  at: number;
  up: number;
  down: number;
}
/** The core's status: active, standby and draining tunnels, mode, sessions, switching. */
export interface EgressSlice {
  status: Status | null;
  statusState: Loadable;
  statusError: string | null;
  /** Bytes per second, from the difference of two status samples' session totals. */
  throughput: { up: number; down: number } | null;
  /** Throughput over the last minutes, oldest first (the Overview's graph). */
  traffic: TrafficPoint[];
  sysproxy: SysproxyState | null;
  setStatus(s: Status): void;
  setStatusError(message: string): void;
  setSysproxy(s: SysproxyState): void;
}

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
  /** Nodes whose honesty check the user started from the window (the button waits). */
  checking: Readonly<Record<string, true>>;
  setChecking(nodeId: string, on: boolean): void;
  /** One node's new verdict (a check ended): only its row re-renders. */
  setNodeHonesty(nodeId: string, honesty: NodeDto['honesty']): void;
}

export interface LatencySlice {
  /** Per node, oldest first, within the window. */
  latency: Record<string, LatencySample[]>;
  /** When every series was last trimmed (series of nodes no longer sampled age out then). */
  latencySweptAt: number;
  addLatency(samples: LatencySample[], now?: number): void;
}

export interface ConnectionsSlice {
  connections: ConnectionDto[];
  connectionsState: Loadable;
  connectionsError: string | null;
  setConnections(c: ConnectionDto[]): void;
  setConnectionsError(message: string): void;
}

/** A log line with an id of its own: rows keep their identity as lines come and go. */
export type LogEntry = LogLine & { seq: number };
export interface LogsSlice {
  logs: LogEntry[];
  /** The next line's id. */
  logSeq: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  addLog(l: LogLine): void;
  setLogLevel(level: LogsSlice['logLevel']): void;
}

export interface SettingsSlice {
  settings: Settings | null;
  settingsState: Loadable;
  settingsError: string | null;
  /** Keys saved that apply after a restart. */
  restartRequired: string[];
  setSettings(s: Settings, restartRequired?: string[]): void;
  setSettingsError(message: string | null): void;
}

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

export type AppState = EgressSlice & NodesSlice & LatencySlice & ConnectionsSlice & LogsSlice & SettingsSlice & UiSlice;
