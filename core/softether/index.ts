export { sha0 } from './sha0.js';
export { hashPassword, securePassword } from './password.js';
export { Pack, PackType, DEFAULT_PACK_LIMITS, type PackLimits } from './pack.js';
export { BlockReader, encodeBlocks, encodeKeepAlive, MAX_FRAME, MAX_BLOCK, MAX_KEEPALIVE } from './blocks.js';
export { parseResponseHead, MAX_HEAD, MAX_BODY, type HttpResponseHead } from './http-head.js';
export {
  dialSeVpn,
  dialSeVpnAdditional,
  type LaneDirection,
  type SeAdditionalConnection,
  type SeDialOptions,
  type SeConnection,
  type Welcome,
} from './se-dial.js';
export { SeSession, type SeSessionOptions, type SeSessionStats } from './se-session.js';
