export { parseProfile, type OvpnProfile, type OvpnRemote, type OvpnProto } from './profile.js';
export { TunnelClient, type TunnelClientOptions, type TunnelState, type TunnelStats } from './tunnel-client.js';
export type { PushedConfig } from './control-messages.js';
export { tls1Prf, openvpnPrfKeys, sliceKey2 } from './keys.js';
export { DataChannel, dataEngineStatus, SUPPORTED_CIPHERS, PING_PAYLOAD, type DataEngine } from './data-channel.js';
export { encodeControl, decodeControl, Op, TcpRecordReader, type ControlPacket } from './packet.js';
export { parsePushOptions, optionsString, parseServerKeyMethod2 } from './control-messages.js';
export { parseStaticKey, tlsAuthWrapper, tlsCryptWrapper, type ControlWrapper } from './control-wrap.js';
export { framingFor, frame, unframe, type Framing } from './compression-framing.js';
