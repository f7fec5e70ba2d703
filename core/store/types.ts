import type { HonestyRecordOf } from '../contracts/index.js';

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
  /**
   * Automatic selection left it while it was in use, for how it failed (#60): not picked by
   * automatic selection again until `until`, even if a tunnel to it comes up meanwhile (the tunnel
   * is not what failed). Null: never, or a user's pick cleared it.
   */
  left: { shape: LeftShape; at: number; until: number } | null;
}

/** How a node in use failed when it was left: the link, names, connections, a stall, something else, or its tunnel kept dropping. */
export type LeftShape = 'link' | 'dns' | 'connects' | 'stall' | 'slow' | 'other' | 'flapping';

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
  /** How the list arrived (direct, mirror, user, import, tunnel, upstream). */
  via?: string;
  nodes: T[];
}

/** The latest list's metadata; its nodes are in the pool. */
export interface StoredListMeta {
  fetchedAt: number;
  source: string;
  via: string;
  nodes: number;
}

/** A node of the remembered pool. */
export interface StoredPoolEntry<T> {
  node: T;
  firstSeen: number;
  lastListed: number;
}

/** A node list source and how its last attempt went (core/vpngate's SourceRecord). */
export interface StoredListSource {
  url: string;
  kind: 'official' | 'api' | 'mirror' | 'user';
  foundAt: number;
  foundFrom: string | null;
  lastOkAt: number | null;
  lastFailAt: number | null;
  lastError: string | null;
  lastVia: 'direct' | 'tunnel' | 'upstream' | null;
  lastNodes: number | null;
}

export interface Selection {
  group: string;
  nodeId: string | null;
  mode: 'auto' | 'manual';
}

export type StoreHealth = 'ok' | 'recovered' | 'memory-only';

/** What happened to the database file, once, for /status and the window. */
export interface StoreIncident {
  health: Exclude<StoreHealth, 'ok'>;
  at: number;
  /** Where the damaged file was moved (kept, never deleted); null when nothing was moved. */
  movedTo: string | null;
  /** When it was found: opening the file, or a read or write while running. */
  found: 'open' | 'running';
  /** SQLite's own words. */
  reason: string;
  /** What was carried over into the fresh file: the pinned node, settings, the proxy snapshot, list sources, the pool. */
  carried: string[];
}

/** A node's honesty verdict as kept (core/honesty owns what the fields mean; the store keeps them). */
export type StoredHonesty = HonestyRecordOf;

/** A device "Share with this network" admits (core/share's ShareDevice, as kept). */
export interface StoredShareDevice {
  id: string;
  name: string;
  secret: string;
  createdAt: number;
  enrolledAddress: string | null;
  enrolledUntil: number | null;
}

/** One row of the traffic ledger (#64): a local day's bytes for one combination; '' where a part is unknown. */
export interface TrafficRow {
  day: string;
  network: string;
  node: string;
  route: string;
  rule: string;
  program: string;
  device: string;
  bytesUp: number;
  bytesDown: number;
  flows: number;
}

/** A network the ledger has seen: its key (the protocol memory's) and what the user is shown. */
export interface TrafficNetwork {
  key: string;
  label: string;
  firstSeen: number;
  lastSeen: number;
}

/** Sums of bytes and flows (#64). */
export interface TrafficSums {
  up: number;
  down: number;
  flows: number;
}

/** A ledger's rows added up (#64): by day and route, and by each dimension alone. */
export interface TrafficAggregates {
  days: Array<TrafficSums & { day: string; route: string }>;
  parts: Record<TrafficDimension, Array<TrafficSums & { key: string }>>;
}
export type TrafficDimension = 'node' | 'network' | 'route' | 'rule' | 'program' | 'device';
export const TRAFFIC_DIMENSIONS: readonly TrafficDimension[] = [
  'node',
  'network',
  'route',
  'rule',
  'program',
  'device',
];
