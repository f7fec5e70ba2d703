// better-sqlite3 for Electron's ABI, for `npm start` on a desktop. `npm ci` builds it for Node
// (the CLI and the tests use that one), and Electron refuses an addon built for another ABI
// ("was compiled against a different Node.js version"). Packaged builds are rebuilt by
// electron-builder; the dev path gets a second copy of the package, built for Electron, in
// node_modules/.cache, whose addon the core is pointed at (GATEHOP_SQLITE_BINDING). The Node
// build stays where it is.
//
// First the prebuilt binary for that Electron (prebuild-install, as better-sqlite3's own install
// does), else a compile against Electron's headers (node-gyp, as @electron/rebuild does).
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';

const require = createRequire(import.meta.url);
const MODULE = 'better-sqlite3';
export const ELECTRON_HEADERS = 'https://electronjs.org/headers';

/** node-gyp: the one npm runs scripts with, else npm's own copy next to this Node. */
export function findNodeGyp(env = process.env) {
  const candidates = [
    env.npm_config_node_gyp,
    join(dirname(process.execPath), '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js'),
  ];
  return candidates.find((p) => p && existsSync(p)) ?? null;
}

/**
 * What to do, without doing it: where the copy and its addon go, and the commands that make the
 * addon (each tried in turn until the addon exists). `runtime` is 'electron' for `npm start`;
 * a test passes 'node' to run the same steps offline.
 */
export function nativeBindingPlan({
  root,
  runtime = 'electron',
  target,
  platform = process.platform,
  arch = process.arch,
  nodeGyp = findNodeGyp(),
  cacheDir = join(root, 'node_modules', '.cache', 'gatehop-native'),
  headersUrl = ELECTRON_HEADERS,
}) {
  const source = dirname(require.resolve(`${MODULE}/package.json`, { paths: [root] }));
  const { version } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'));
  const dir = join(cacheDir, `${MODULE}-${version}-${runtime}-${target}-${platform}-${arch}`);
  const copy = join(dir, MODULE);
  const prebuildInstall = require.resolve('prebuild-install/bin.js', { paths: [source] });
  const steps = [
    {
      what: 'prebuilt binary',
      cmd: process.execPath,
      args: [prebuildInstall, '--runtime', runtime, '--target', target, '--arch', arch, '--platform', platform],
      cwd: copy,
    },
  ];
  if (nodeGyp) {
    const headers = runtime === 'electron' ? [`--dist-url=${headersUrl}`] : [];
    steps.push({
      what: 'compile',
      cmd: process.execPath,
      args: [
        nodeGyp,
        'rebuild',
        '--release',
        `--target=${target}`,
        `--runtime=${runtime}`,
        `--arch=${arch}`,
        ...headers,
      ],
      cwd: copy,
    });
  }
  return { source, dir, copy, binding: join(copy, 'build', 'Release', 'better_sqlite3.node'), steps };
}

/**
 * Makes the addon if it is not there yet and returns its path. Throws with what each step said
 * when none produced it (no network for the prebuilt binary and no compiler, say).
 */
export async function ensureNativeBinding(opts, log = (line) => process.stderr.write(`${line}\n`), env = process.env) {
  const plan = nativeBindingPlan(opts);
  if (existsSync(plan.binding)) return plan.binding;
  rmSync(plan.dir, { recursive: true, force: true });
  mkdirSync(plan.dir, { recursive: true });
  // The package without its Node build; what it requires at run time stays resolvable from the source.
  const nodeBuild = join(plan.source, 'build');
  cpSync(plan.source, plan.copy, { recursive: true, filter: (p) => p !== nodeBuild && !p.startsWith(nodeBuild + sep) });
  // An npm `nodedir` (set on machines that build offline against Node's headers) would make
  // node-gyp compile against Node's headers whatever --target says: an addon Electron refuses.
  const stepEnv = { ...env };
  if ((opts.runtime ?? 'electron') === 'electron')
    for (const k of Object.keys(stepEnv)) if (/^npm_config_nodedir$/i.test(k)) delete stepEnv[k];
  const said = [];
  for (const step of plan.steps) {
    log(`gatehop: building ${MODULE} for ${opts.runtime ?? 'electron'} ${opts.target} (${step.what})…`);
    const r = await run(step, stepEnv);
    if (existsSync(plan.binding)) return plan.binding;
    said.push(`${step.what}: exit ${r.code}: ${r.tail.trim().split('\n').slice(-3).join(' | ')}`);
  }
  rmSync(plan.dir, { recursive: true, force: true });
  throw new Error(
    `could not build ${MODULE} for ${opts.runtime ?? 'electron'} ${opts.target}: ${said.join('; ') || 'no way to build it (node-gyp not found)'}`,
  );
}

/** Runs one step; what it printed last (the reason, when it fails) is kept, not the whole compile log. */
function run(step, env) {
  return new Promise((resolve) => {
    const child = spawn(step.cmd, step.args, { cwd: step.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (chunk) => void (tail = (tail + chunk.toString()).slice(-4096));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => resolve({ code: err.message, tail }));
    child.on('close', (code, signal) => resolve({ code: code ?? signal, tail }));
  });
}

/** The Electron version `npm start` runs (its package's version is its binary's). */
export function electronVersion(root) {
  return JSON.parse(readFileSync(require.resolve('electron/package.json', { paths: [root] }), 'utf8')).version;
}
