export {
  SystemProxy,
  type RecoverOutcome,
  type ReleaseOutcome,
  type RestoreOutcome,
  type SysProxyEvent,
  type SysProxyStatus,
  type SystemProxyOptions,
} from './system-proxy.js';
export { SnapshotKeeper, snapshotSchema, type SnapshotMirror, type SysProxySnapshot } from './snapshot-keeper.js';
export { detectBackend, type DetectEnv } from './detect.js';
export { CommandError, createExecRunner, execRunner, RESTORE_DEADLINE_MS } from './runner.js';
export { processAlive, processStart } from './process-identity.js';
export {
  DEFAULT_BYPASS,
  exportLines,
  hostPort,
  sameSettings,
  type BackendId,
  type FlatSettings,
  type ProxyBackend,
  type ProxyTarget,
  type Runner,
  pacUrlOf,
} from './types.js';
export {
  gnomeBackend,
  gnomeDesired,
  gnomeReadCommands,
  gnomeWriteCommands,
  gvString,
  gvStringArray,
  gvParseString,
  GNOME_KEYS,
} from './gnome.js';
export {
  kdeBackend,
  kdeDesired,
  kdeReadCommands,
  kdeWriteCommands,
  kdeNotifyCommand,
  kdeParseProxy,
  kdeProxyValue,
  KDE_ABSENT,
  KDE_KEYS,
} from './kde.js';
export {
  macosBackend,
  macDesired,
  macReadCommands,
  macWriteCommands,
  macParseServices,
  macParseProxy,
  macParseAutoProxy,
  macParseBypass,
} from './macos.js';
export {
  windowsBackend,
  winDesired,
  winReadLan,
  winLanWriteCommands,
  winParseRegValue,
  winParseEntries,
  winConnScript,
  winPowerShellArgv,
  winBypass,
  INTERNET_SETTINGS,
  PS_PAYLOAD,
  PROXY_TYPE,
  type ConnSettings,
} from './windows.js';
