export { Store, SQLITE_BINDING_ENV, WEAK_TLS_REMEMBER_MS, emptyHistory, type StoreOptions } from './store.js';
export { MIGRATIONS } from './migrations.js';
export type {
  NodeHistory,
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
} from './types.js';
