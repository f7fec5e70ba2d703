export { main, buildCli } from './cli.js';
export { startApp, describeListening, type RunningApp } from './app.js';
export { buildConfig, readConfigFile, configSchema, type GatehopConfig, type ConfigInput } from './config.js';
export { defaultDataDir } from './paths.js';
