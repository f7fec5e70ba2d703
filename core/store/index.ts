export { Store, type StoreOptions } from './store.js';
export { MIGRATIONS } from './migrations.js';
export type { NodeHistory, LatencySample, LatencyKind, StoredNodeList, Selection, StoreHealth } from './types.js';
