export {
  ErrorCodes,
  GatehopError,
  isGatehopError,
  errorToJson,
  errorFromJson,
  abortReason,
  type ErrorCode,
} from './errors.js';
export { parseEndpoint, formatEndpoint, isLoopbackHost, type Endpoint } from './endpoints.js';
export {
  createLogger,
  openLogger,
  silentLogger,
  LOG_FILE_MAX_BYTES,
  LOG_FILES_KEPT,
  canLinkCurrentLog,
  type LinkFs,
  type Logger,
  type LoggerOptions,
} from './logger.js';
export { raiseMallocTrimThreshold } from './malloc-tuning.js';
export { LogTap, type TappedLine } from './log-tap.js';
export { GATEHOP_VERSION } from './version.js';
export { Listeners } from './listeners.js';
export {
  NetworkWatch,
  isOnline,
  networkKeyOf,
  readNetworkSnapshot,
  type NetworkChange,
  type NetworkChangeReason,
  type NetworkSnapshot,
  type NetworkWatchOptions,
} from './network-watch.js';
export { writeFileAtomic, writeFileAtomicAsync } from './atomic-write.js';
export { bareAddress, ipv6Groups } from './ipv6.js';
export { settleFirst, waitAbortably, type Settle, type SettleFirstOptions, type Teardown } from './settle-first.js';
export {
  dialThroughUpstream,
  parseSocks5Udp,
  parseUpstreamUrl,
  socks5UdpAssociate,
  socks5UdpHeader,
  type UpstreamDialOptions,
  type UpstreamProxy,
} from './upstream-proxy.js';
export { dialNodeTcp, isNetworkFailure, tcpErrorCode, type NodeTcpOptions } from './node-tcp.js';
export { dialNodeTls, type NodeTlsConnection, type NodeTlsOptions } from './node-tls.js';
export { decodeChunked } from './http-chunked.js';
export {
  judgeNodeCertificate,
  profileCertificateProblem,
  trustedCas,
  TRUST_RULE_TEXT,
  type NodeTrust,
  type ProfileCertChecks,
  type TrustRule,
  type TrustVerdict,
} from './node-trust.js';
export {
  parseCertificate,
  pemCertificates,
  publicRoots,
  spkiSha256,
  subjectName,
  type PublicRootMatch,
  type PublicRoots,
} from './public-roots.js';
export { SleepDetector } from './sleep-detector.js';
export {
  dataEngineStatus,
  loadNative,
  nativeStatus,
  type DataEngine,
  type NativeDataKey,
  type NativeDataKeySpec,
  type DataKeyBytes,
  type NativeModule,
  type NativeStatus,
  type NativeUdpSocket,
} from './native.js';
export { HeapTrimmer, type HeapTrimmerOptions } from './heap-trimmer.js';
export { detach, ignoreRejection, type DetachLog } from './detach.js';
export {
  compressIpv6,
  encodeSocksAddress,
  encodeSocksUdpHeader,
  ipv6ToBytes,
  parseSocksAddress,
  parseSocksUdpHeader,
  SocksAddrType,
  unmapIpv4,
  type AddressParse,
  type SocksAddress,
} from './socks5-wire.js';
export { withDeadline } from './deadline.js';
export { classifyAddress, isLocalName, refusedAddress, type AddressClass } from './address-class.js';
