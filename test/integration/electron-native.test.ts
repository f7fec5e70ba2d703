/**
 * `npm start` on a desktop (issue #21): better-sqlite3 as built by `npm ci` is for Node's ABI and
 * Electron refuses it, so start.mjs makes an Electron build in a cache and hands its path to the
 * app (GATEHOP_SQLITE_BINDING); the Node build stays for the CLI and tests. Electron's binary and
 * the Internet are not here: the Electron is a stand-in script, and the prebuilt binaries come
 * from a loopback server (prebuild-install's own mirror setting), serving the real Node build.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORE_ENV } from '../../scripts/core-env.mjs';
import { CORE_V8_FLAGS } from '../../scripts/core-v8-flags.mjs';
// @ts-expect-error a plain ESM script without types
import { ensureNativeBinding, nativeBindingPlan } from '../../scripts/electron-native.mjs';

const ROOT = resolve(__dirname, '../..');
const SQLITE = join(ROOT, 'node_modules/better-sqlite3');
const VERSION = (JSON.parse(readFileSync(join(SQLITE, 'package.json'), 'utf8')) as { version: string }).version;
const ELECTRON_VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'node_modules/electron/package.json'), 'utf8')) as { version: string }
).version;

let server: Server;
let mirror = '';
const requested: string[] = [];
let serving = true;
const work = mkdtempSync(join(tmpdir(), 'gh-native-'));
const tarball = join(work, 'prebuilt.tar.gz');

beforeAll(async () => {
  // A prebuilt archive as prebuild-install unpacks it: build/Release/better_sqlite3.node.
  execFileSync('tar', ['-czf', tarball, '-C', SQLITE, 'build/Release/better_sqlite3.node']);
  server = createServer((req, res) => {
    requested.push(req.url ?? '');
    if (!serving || !req.url?.endsWith('.tar.gz')) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/gzip' }).end(readFileSync(tarball));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  mirror = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** Nothing leaves the machine: the mirror is loopback, Electron's headers a closed loopback port, the caches ours. */
function offlineEnv(cache: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    npm_config_better_sqlite3_binary_host: mirror,
    npm_config_cache: join(cache, 'npm'),
    GATEHOP_NATIVE_CACHE: cache,
    GATEHOP_ELECTRON_HEADERS: 'http://127.0.0.1:9/headers',
    http_proxy: '',
    https_proxy: '',
  };
}

/** A stand-in for Electron's binary: writes what it was started with, then exits 0. */
function fakeElectron(dir: string): {
  bin: string;
  seen: () => { args: string[]; binding: string; arenaMax: string };
} {
  const bin = join(dir, 'electron');
  const out = join(dir, 'started.json');
  writeFileSync(
    bin,
    `#!/bin/sh\nprintf '{"binding":"%s","arenaMax":"%s","args":"%s"}' "$GATEHOP_SQLITE_BINDING" "$MALLOC_ARENA_MAX" "$*" > '${out}'\n`,
  );
  chmodSync(bin, 0o755);
  return {
    bin,
    seen: () =>
      ((j) => ({ binding: j.binding, arenaMax: j.arenaMax, args: j.args.split(' ') }))(
        JSON.parse(readFileSync(out, 'utf8')) as { binding: string; arenaMax: string; args: string },
      ),
  };
}

function runStart(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs'), ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout.resume();
  return new Promise((r) => child.on('exit', (code) => r({ code, err })));
}

describe('npm start with an Electron binary', () => {
  it("fetches better-sqlite3 built for that Electron's ABI once, and starts Electron pointed at it", async () => {
    const cache = mkdtempSync(join(work, 'cache-'));
    const { bin, seen } = fakeElectron(cache);
    const env = { ...offlineEnv(cache), GATEHOP_ELECTRON: bin, DISPLAY: ':0' };
    requested.length = 0;
    const first = await runStart(env, ['--hidden']);
    expect(first.code, first.err).toBe(0);
    // Electron 45 is ABI 150: the archive asked for is Electron's, not Node's.
    expect(requested.filter((u) => u.endsWith('.tar.gz'))).toEqual([
      `/v${VERSION}/better-sqlite3-v${VERSION}-electron-v150-${process.platform}-${process.arch}.tar.gz`,
    ]);
    const started = seen();
    // The core's V8 flags first: V8 reads them only at start (scripts/core-v8-flags.mjs).
    expect(started.args).toEqual([`--js-flags=${CORE_V8_FLAGS.join(' ')}`, ROOT, '--hidden']);
    // …and the core's environment, which glibc reads before any thread starts (scripts/core-env.mjs).
    expect(started.arenaMax).toBe(CORE_ENV.MALLOC_ARENA_MAX);
    expect(started.binding).toBe(nativeBindingPlan({ root: ROOT, target: ELECTRON_VERSION, cacheDir: cache }).binding);
    expect(existsSync(started.binding)).toBe(true);
    // The Node build that the CLI and tests load is untouched.
    expect(readFileSync(join(SQLITE, 'build/Release/better_sqlite3.node')).equals(readFileSync(started.binding))).toBe(
      true,
    );
    requested.length = 0;
    const second = await runStart(env);
    expect(second.code).toBe(0);
    expect(requested).toEqual([]); // built once, kept
  });

  it('falls back to the headless core, saying why, when the addon cannot be had', async () => {
    const cache = mkdtempSync(join(work, 'cache-'));
    const { bin } = fakeElectron(cache);
    serving = false;
    try {
      const env = {
        ...offlineEnv(cache),
        GATEHOP_ELECTRON: bin,
        DISPLAY: ':0',
        npm_config_node_gyp: join(cache, 'no-node-gyp.js'),
      };
      // No prebuilt binary and no Electron headers: the headless core starts instead (and is told to stop at once here).
      const child = spawn(
        process.execPath,
        [
          join(ROOT, 'scripts/start.mjs'),
          '--data-dir',
          join(cache, 'data'),
          '--api',
          'http://127.0.0.1:9/api/iphone/',
          '--listen',
          '127.0.0.1:0',
          '--admin',
          '127.0.0.1:0',
          '--log-file',
          'off',
          '--log-level',
          'warn',
        ],
        { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let err = '';
      let out = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      await new Promise<void>((res, rej) => {
        child.stdout.on('data', (c: Buffer) => (out += c.toString()).includes('dashboard: ') && res());
        void exited.then((code) => rej(new Error(`exited ${code}: ${err}`)));
      });
      expect(err).toMatch(
        /since better-sqlite3 could not be built for Electron \(could not build better-sqlite3 for electron [\d.]+: prebuilt binary: exit 1/,
      );
      expect(existsSync(join(cache, 'started.json'))).toBe(false);
      child.kill('SIGTERM');
      expect(await exited, err).toBe(0);
    } finally {
      serving = true;
    }
  });
});

describe('the same steps for Node', () => {
  it('give an addon the store opens when GATEHOP_SQLITE_BINDING names it', async () => {
    const cache = mkdtempSync(join(work, 'cache-'));
    const binding = (await ensureNativeBinding(
      { root: ROOT, runtime: 'node', target: process.versions.node, cacheDir: cache },
      () => {},
      offlineEnv(cache),
    )) as string;
    expect(binding.startsWith(cache)).toBe(true);
    // A Store in a fresh process, loading the addon from the copy (a missing file there would throw).
    const script = `import { Store } from './core/store/index.ts'; import { createLogger } from './core/common/index.ts';
      const s = new Store({ path: process.argv[1], logger: createLogger({ level: 'silent', file: null }) });
      console.log(JSON.stringify({ health: s.health, version: s.schemaVersion })); s.close();`;
    const run = (b: string) =>
      spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, join(cache, 'db.sqlite')], {
        cwd: ROOT,
        env: { ...process.env, GATEHOP_SQLITE_BINDING: b },
        encoding: 'utf8',
      });
    const ok = run(binding);
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout.trim().split('\n').pop()!)).toMatchObject({
      health: 'ok',
      version: expect.any(Number),
    });
    const bad = run(join(cache, 'missing.node'));
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/missing\.node/);
  });
});
