export { Store, type StoreOptions } from './store.js';
export { SQLITE_BINDING_ENV } from './db.js';
export { emptyHistory } from './history-repo.js';
export { WEAK_TLS_REMEMBER_MS } from './settings-repo.js';
export { MIGRATIONS } from './migrations.js';
export { sqliteFailure, type SqliteFailure } from './sqlite-failure.js';
export type {
  NodeHistory,
  LeftShape,
  LatencySample,
  LatencyKind,
  StoredNodeList,
  StoredListMeta,
  StoredListSource,
  StoredPoolEntry,
  Selection,
  StoreHealth,
  StoreIncident,
  StoredHonesty,
  StoredShareDevice,
  TrafficRow,
  TrafficNetwork,
  TrafficSums,
  TrafficAggregates,
  TrafficDimension,
} from './types.js';
export { TRAFFIC_DIMENSIONS } from './types.js';
export type { TrafficRepo } from './traffic-repo.js';
