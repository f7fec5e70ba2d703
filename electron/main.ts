/**
 * The Electron main process entry: hands the real Electron module to runShell. Everything else
 * lives in controllers that take the module as an argument (tested against a fake).
 */
import * as electron from 'electron';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ElectronApi } from './electron-api.js';
import { runShell } from './shell.js';

const here = dirname(fileURLToPath(import.meta.url)); // dist/electron
const root = resolve(here, '..', '..');
const api: ElectronApi = electron;

void runShell(api, {
  uiDir: join(root, 'dist', 'renderer'),
  assetsDir: join(root, 'assets'),
  preload: join(here, 'preload.cjs'),
  exec: process.execPath,
  argv: process.argv,
}).catch((err: unknown) => {
  console.error('gatehop: the desktop shell failed to start:', err);
  electron.app.exit(1);
});
