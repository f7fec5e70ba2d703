export {
  SstpClient,
  type SstpClientOptions,
  type SstpLinkConfig,
  type SstpState,
  type SstpStats,
} from './sstp-client.js';
export { dialSstp, SSTP_URI, type SstpConnection, type SstpDialOptions } from './sstp-dial.js';
export {
  PppLink,
  type PppAuth,
  type PppLinkOptions,
  type PppUp,
  type PppAuthenticated,
  type PppPhase,
} from './ppp-link.js';
export {
  decodePacket,
  encodeControl,
  encodeData,
  callConnected,
  callConnectRequest,
  parseCryptoBindingRequest,
  statusInfoOf,
  SstpReader,
  MsgType,
  AttrId,
  MAX_SSTP_PACKET,
  type SstpPacket,
  type SstpAttribute,
} from './sstp-codec.js';
export {
  decodeFrame,
  encodeFrame,
  decodeCp,
  encodeCp,
  decodeOptions,
  encodeOptions,
  Proto,
  Code,
  type CpOption,
  type CpPacket,
  type PppFrame,
} from './ppp-codec.js';
export {
  ntPasswordHash,
  challengeHash,
  challengeResponse,
  generateNtResponse,
  authenticatorResponse,
  verifyAuthenticatorResponse,
  mppeMasterKey,
  mppeStartKey,
  clientMppeKeys,
} from './mschapv2.js';
export {
  certHashField,
  compoundMac,
  compoundMacKey,
  hlakOf,
  pickBindingHash,
  HASH_SHA1,
  HASH_SHA256,
  type BindingHash,
} from './crypto-binding.js';
export { md4 } from './md4.js';
