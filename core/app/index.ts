export { main, buildCli } from './cli.js';
export { startApp, type RunningApp, type StartExtras } from './app.js';
export { describeListening } from './status-lines.js';
export { resolveConfig, SettingsFile, loadSavedSettings } from './settings-file.js';
export { buildConfig, readConfigFile, configSchema, type GatehopConfig, type ConfigInput } from './config.js';
export { defaultDataDir, defaultUiDir } from './paths.js';
export { RESTORE_DEADLINE_MS } from '../sysproxy/index.js';
