/**
 * The admin API's contract: request and response shapes as zod schemas. The server validates what
 * it receives against the request schemas and its tests validate what it sends against the
 * response schemas; the renderer imports this file too (it has no Node imports on purpose).
 */
export * from './schemas/common.js';
export * from './schemas/list.js';
export * from './schemas/routing.js';
export * from './schemas/honesty.js';
export * from './schemas/status.js';
export * from './schemas/nodes.js';
export * from './schemas/requests.js';
export * from './schemas/connections.js';
export * from './schemas/clash.js';
export * from './schemas/share.js';
export * from './schemas/traffic.js';
export * from './schemas/profiles.js';
export * from './schemas/leak.js';
