export { AdminServer, type AdminServerOptions } from './admin-server.js';
export type {
  AdminCore,
  DesktopAccess,
  ExitCheckAccess,
  HonestyAccess,
  SettingsAccess,
  SystemProxyControl,
} from './admin-core.js';
export { loadOrCreateAdminToken } from './admin-token.js';
export { EventStream } from './event-stream.js';
export { failureOf, implementOperations, type OperationImpls } from './operations.js';
export * from './schemas.js';
export * from './contract.js';
export { UI_CSP } from './static-ui.js';
export { LoopDelay, type LoopDelayReading } from './loop-delay.js';
export { TunnelTotals } from './metrics.js';
export { DashboardLogin, DASHBOARD_PASSWORD_FILE, DASHBOARD_USER } from './dashboard-login.js';
