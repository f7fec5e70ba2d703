import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The OS application-data folder, as Electron's app.getPath('appData') names it, plus "Gatehop". */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'Gatehop');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'Gatehop');
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'Gatehop');
}

/**
 * The built renderer: dist/renderer beside the built core (dist/core/app → dist/renderer), or,
 * when the core runs from source (tests, tsx), the same dist/renderer under the repository.
 */
export function defaultUiDir(): string | null {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = resolve(here, '../..');
  // Never the source folder renderer/ (its index.html points at .tsx files).
  const dir = basename(root) === 'dist' ? join(root, 'renderer') : join(root, 'dist', 'renderer');
  return existsSync(join(dir, 'index.html')) ? dir : null;
}

/**
 * The `gatehop` command's script (bin/gatehop.js at the repository's or the package's root, above
 * dist/core/app or core/app): what a service unit starts. Its shebang carries the core's V8 flags
 * and environment (scripts/core-v8-flags.mjs, core-env.mjs), so a unit that runs it needs none.
 */
export function gatehopBin(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = resolve(here, '../..');
  return join(basename(root) === 'dist' ? dirname(root) : root, 'bin', 'gatehop.js');
}
