export interface NodeHistory {
  nodeId: string;
  successes: number;
  failures: number;
  consecutiveFailures: number;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  backoffUntil: number | null;
  avgThroughputBps: number | null;
  avgConnectMs: number | null;
}

export type LatencyKind = 'tcp' | 'url' | 'dns';

export interface LatencySample {
  nodeId: string;
  at: number;
  kind: LatencyKind;
  ms: number | null;
  success: boolean;
}

export interface StoredNodeList<T = unknown> {
  fetchedAt: number;
  source: string;
  nodes: T[];
}

export interface Selection {
  group: string;
  nodeId: string | null;
  mode: 'auto' | 'manual';
}

export type StoreHealth = 'ok' | 'recovered' | 'memory-only';
