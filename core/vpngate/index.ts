export type { VpnGateNode } from './node.js';
export { parseVpnGateCsv, type ParsedList } from './csv.js';
export { fetchNodeList, OFFICIAL_ENDPOINTS, type FetchOptions, type FetchedList } from './fetcher.js';
export { staticNodeFromFile } from './static-nodes.js';
export { NodeList, type ListCache, type NodeListOptions } from './node-list.js';
