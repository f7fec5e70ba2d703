export { ProxyServer, type UserUsage, type ProxyFlowEnd } from './proxy-server.js';
export { proxyOptionsSchema, type ProxyOptions, type ClientCredentials, type LocalPages } from './options.js';
export { Credentials, formatAuthLine, upsertAuthFile, hashPassword } from './credentials.js';
export type { ProxyStats } from './proxy-stats.js';
export type { ProxySession } from './session.js';
export type { UdpRelay } from './udp-relay.js';
export * as socks5Codec from './socks5-codec.js';
export { stripHopByHop, parseBasicAuth, parseAuthority } from './http-headers.js';
