export {
  ErrorCodes,
  GatehopError,
  isGatehopError,
  errorToJson,
  errorFromJson,
  abortReason,
  type ErrorCode,
} from './errors.js';
export {
  parseEndpoint,
  formatEndpoint,
  isLoopbackHost,
  isWildcardHost,
  unbracket,
  bracketed,
  hostPort,
  type Endpoint,
} from './endpoints.js';
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
export { limitMallocArenas, MALLOC_ARENAS, raiseMallocTrimThreshold } from './malloc-tuning.js';
export { LogTap, type TappedLine } from './log-tap.js';
export { makePrivateDir, runSocketPath } from './private-dir.js';
export { GATEHOP_VERSION } from './version.js';
export { Listeners } from './listeners.js';
export {
  NetworkWatch,
  countedAddresses,
  isOnline,
  networkKeyOf,
  readNetworkSnapshot,
  type CountedAddress,
  type NetworkChange,
  type NetworkChangeReason,
  type NetworkSnapshot,
  type NetworkWatchOptions,
} from './network-watch.js';
export { wifiNamesOf, ssidOfIwLink, ssidOfNetsh, ssidOfNetworksetup, type RunTool } from './wifi-name.js';
export { writeFileAtomic, writeFileAtomicAsync } from './atomic-write.js';
export { settleFirst, waitAbortably, type Settle, type SettleFirstOptions, type Teardown } from './settle-first.js';
export { decodeChunked } from './http-chunked.js';
export { HttpFraming } from './http-framing.js';
export { isHttpToken, readHttpHead, type HttpHead } from './http-head.js';
export { SleepDetector } from './sleep-detector.js';
export {
  dataEngineStatus,
  loadNative,
  nativeStatus,
  captureHelperPath,
  type DataEngine,
  type NativeDataKey,
  type NativeDataKeySpec,
  type DataKeyBytes,
  type NativeModule,
  type NativeStatus,
  type NativeUdpSocket,
} from './native.js';
export { HeapTrimmer, type HeapTrimmerOptions } from './heap-trimmer.js';
export {
  BufferCollector,
  BUFFER_COLLECTOR_DEFAULTS,
  exposeGc,
  type BufferCollectorOptions,
  type CollectGarbage,
} from './buffer-collector.js';
export {
  threadTransferCollector,
  TransferCollector,
  TRANSFER_COLLECTOR_DEFAULTS,
  type TransferCollectorOptions,
} from './transfer-collector.js';
export { detach, ignoreRejection, type DetachLog } from './detach.js';
export { withDeadline } from './deadline.js';
export { wholeNumber } from './setting-schemas.js';
