export type { VpnGateNode } from './node.js';
export { parseVpnGateCsv, describeSkipped, type ParsedList } from './csv.js';
export { fetchListFrom, raceSources, type RaceOptions, type RaceResult, type SourceAttempt } from './list-race.js';
export { parseMirrorDirectory, directoryUrlOf } from './mirror-directory.js';
export {
  candidateSources,
  orderSources,
  DEMOTE_MS,
  FORGET_MIRROR_MS,
  type ListSource,
  type SourceKind,
  type SourceRecord,
} from './sources.js';
export { NodePool, type MergeResult, type PoolEntry } from './pool.js';
export { profileCaKey } from './profile-ca.js';
export { OFFICIAL_ENDPOINTS } from './official.js';
export { staticNodeFromFile } from './static-nodes.js';
export {
  NodeList,
  type ListMeta,
  type ListStatus,
  type ListVia,
  type NodeListOptions,
  type NodeListStore,
  type SourceOptions,
  type SourceState,
} from './node-list.js';
