#!/usr/bin/env node
// Builds native/ (gatehop-native, Node-API) with node-gyp: at `npm ci` (the install script) and at
// `npm run build` when a source is newer than the build. The core runs without it, so a machine
// without a C toolchain still installs: the failure is printed and the JavaScript path is used.
// In CI (CI=true) or with GATEHOP_NATIVE_REQUIRED=1 a failed build fails the command instead.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, 'native');
const built = join(dir, 'build', 'Release', 'gatehop_native.node');
const force = process.argv.includes('--force');
const required = process.env.CI === 'true' || process.env.GATEHOP_NATIVE_REQUIRED === '1';

function newestSource() {
  const files = ['binding.gyp', ...readdirSync(join(dir, 'src')).map((f) => join('src', f))];
  return Math.max(...files.map((f) => statSync(join(dir, f)).mtimeMs));
}

/** node-gyp as npm runs it: npm names its own in npm_config_node_gyp; else the one beside npm, else PATH. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    join(
      dirname(process.execPath),
      '..',
      'lib',
      'node_modules',
      'npm',
      'node_modules',
      'node-gyp',
      'bin',
      'node-gyp.js',
    ),
    join(dirname(process.execPath), 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  const js = candidates.find((p) => p && existsSync(p));
  return js ? [process.execPath, [js]] : ['node-gyp', []];
}

/**
 * Node's own headers when they sit beside it (a distribution's node, or an official tarball), so
 * node-gyp needs no download; npm passes its configured nodedir itself (npm_config_nodedir).
 */
function nodedirArgs() {
  if (process.env.npm_config_nodedir) return [];
  const prefix = resolve(dirname(process.execPath), '..');
  return existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? [`--nodedir=${prefix}`] : [];
}

if (!force && existsSync(built) && statSync(built).mtimeMs >= newestSource()) process.exit(0);

const [cmd, pre] = nodeGyp();
const run = spawnSync(cmd, [...pre, 'rebuild', '--release', ...nodedirArgs()], {
  cwd: dir,
  stdio: ['ignore', 'pipe', 'pipe'],
  encoding: 'utf8',
  shell: process.platform === 'win32' && cmd === 'node-gyp',
});
if (run.status === 0 && existsSync(built)) {
  console.log(`gatehop-native: built ${built}`);
  process.exit(0);
}
const why = run.error?.message ?? `node-gyp exited ${run.status}`;
process.stderr.write(`${run.stdout ?? ''}${run.stderr ?? ''}`.split('\n').slice(-15).join('\n') + '\n');
if (required) {
  console.error(`gatehop-native: build failed (${why}); CI needs it (CI=true or GATEHOP_NATIVE_REQUIRED=1)`);
  process.exit(1);
}
console.warn(`gatehop-native: not built (${why}); Gatehop runs on its JavaScript path without it`);
