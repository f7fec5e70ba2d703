export { ErrorCodes, GatehopError, isGatehopError, errorToJson, errorFromJson, abortReason, type ErrorCode } from './errors.js';
export { parseEndpoint, formatEndpoint, isLoopbackHost, type Endpoint } from './endpoints.js';
export { createLogger, silentLogger, type Logger, type LoggerOptions } from './logger.js';
export { raiseMallocTrimThreshold } from './malloc-tuning.js';
export { LogTap, type TappedLine } from './log-tap.js';
export { GATEHOP_VERSION } from './version.js';
export { Listeners } from './listeners.js';
export { NetworkWatch, isOnline, readNetworkSnapshot, type NetworkChange, type NetworkChangeReason, type NetworkSnapshot, type NetworkWatchOptions } from './network-watch.js';
export { writeFileAtomic } from './atomic-write.js';
