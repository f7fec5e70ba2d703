/**
 * The Electron main process entry: hands the real Electron module to runShell. Everything else
 * lives in controllers that take the module as an argument (tested against a fake). A launch with
 * one of the CLI's subcommands (`gatehop sysproxy restore`, `gatehop check`) runs the CLI instead
 * (cli-dispatch.ts), before anything of the desktop starts.
 */
import * as electron from 'electron';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCli, main as cliMain } from '../core/app/index.js';
import { cliArguments } from './cli-dispatch.js';
import type { ElectronApi } from './electron-api.js';
import { runShell } from './shell.js';

const here = dirname(fileURLToPath(import.meta.url)); // dist/electron
const root = resolve(here, '..', '..');
const api: ElectronApi = electron;

const cli = cliArguments(
  process.argv,
  Boolean(process.defaultApp),
  buildCli().commands.map((c) => c.name()),
);
if (cli)
  cliMain(['gatehop', 'gatehop', ...cli])
    .then(() => electron.app.exit(typeof process.exitCode === 'number' ? process.exitCode : 0))
    .catch((err: unknown) => {
      process.stderr.write(`gatehop: ${err instanceof Error ? err.message : String(err)}\n`);
      electron.app.exit(1);
    });
else
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
