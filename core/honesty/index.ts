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
  HONESTY_VERDICTS,
  isTampering,
  type CheckKind,
  type CheckOutcome,
  type HonestyEvidence,
  type HonestyRecord,
  type HonestyVerdict,
  type Tampering,
} from './types.js';
export { parseResponse as parseCheckResponse } from './through-tunnel.js';
