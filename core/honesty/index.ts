export {
  DEFAULT_DOH_SERVERS,
  dohServerSchema,
  honestyOptions,
  honestyOptionsSchema,
  type DohServer,
  type HonestyOptions,
} from './options.js';
export { checkNodeHonesty, type HonestyReport } from './honesty-check.js';
export { HonestyMonitor, type CheckTunnel, type HonestyMonitorDeps, type HonestyStore } from './honesty-monitor.js';
export {
  CLEAN_CHECKS_TO_CLEAR,
  HONESTY_VERDICTS,
  isTampering,
  type CheckKind,
  type CheckOutcome,
  type HonestyEvidence,
  type HonestyRecord,
  type HonestyVerdict,
  type Tampering,
} from './types.js';
export { browserRequest, parseResponse as parseCheckResponse } from './through-tunnel.js';
