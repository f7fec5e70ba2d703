/**
 * What the packaged app loads at run time must be inside what electron-builder packages, so a
 * missing file fails here and not on a user's machine: the built main entry's import graph (and
 * the runtime files it reads by path) against the `files` and `asarUnpack` globs, and every bare
 * import against the production dependencies.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import picomatch from 'picomatch';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CORE_V8_FLAGS } from '../../scripts/core-v8-flags.mjs';

const ROOT = resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  main: string;
  dependencies: Record<string, string>;
};
const builder = parse(readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8')) as {
  files: string[];
  asarUnpack: string[];
  extraMetadata?: { main?: string };
};

function packaged(file: string): boolean {
  const rel = relative(ROOT, file).split('\\').join('/');
  const include = builder.files.filter((g) => !g.startsWith('!'));
  const exclude = builder.files.filter((g) => g.startsWith('!')).map((g) => g.slice(1));
  return picomatch(include, { dot: true })(rel) && !picomatch(exclude, { dot: true })(rel);
}

/** The built JS files reachable from `entry` through static and dynamic relative imports; bare specifiers apart. */
function importGraph(entry: string): { files: Set<string>; bare: Set<string> } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const todo = [entry];
  while (todo.length) {
    const f = todo.pop()!;
    if (files.has(f)) continue;
    files.add(f);
    const text = readFileSync(f, 'utf8');
    // `\s*`: the tunnel worker's bundle is minified (`import{x}from"node:fs"`).
    for (const m of text.matchAll(
      /(?:import|export)\s*[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm,
    )) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (spec.startsWith('.')) todo.push(resolve(dirname(f), spec));
      else if (!spec.startsWith('node:') && !builtinModules.includes(spec))
        bare.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  return { files, bare };
}

describe('the package', () => {
  beforeAll(() => {
    if (!existsSync(join(ROOT, pkg.main)))
      throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  });

  it('has the main entry electron-builder starts, and every file the main process imports', () => {
    expect(builder.extraMetadata?.main ?? pkg.main).toBe(pkg.main);
    const { files } = importGraph(join(ROOT, pkg.main));
    expect(files.size).toBeGreaterThan(50);
    const missing = [...files].filter((f) => !packaged(f)).map((f) => relative(ROOT, f));
    expect(missing).toEqual([]);
  });

  it('has every package the main process imports as a production dependency (or Electron itself)', () => {
    const { bare } = importGraph(join(ROOT, pkg.main));
    const notDeps = [...bare].filter((b) => b !== 'electron' && !(b in pkg.dependencies));
    expect(notDeps).toEqual([]);
  });

  it("has the tunnel worker (started by URL, not imported) as one self-contained file: it imports nothing but Node's own modules", () => {
    const worker = join(ROOT, 'dist/core/egress/worker/tunnel-worker.js');
    expect(existsSync(worker)).toBe(true);
    expect(packaged(worker)).toBe(true);
    const { files, bare } = importGraph(worker);
    expect([...files].map((f) => relative(ROOT, f))).toEqual(['dist/core/egress/worker/tunnel-worker.js']);
    expect([...bare]).toEqual([]);
  });

  it('has the tunnel worker minified to ASCII text with no comments: every tunnel thread, idle ones too, keeps its source in its heap', () => {
    // One non-Latin-1 character makes V8 hold the whole source as a two-byte string: 2.0 MB per
    // thread as written, 0.7 MB minified (scripts/build-electron.mjs).
    const text = readFileSync(join(ROOT, 'dist/core/egress/worker/tunnel-worker.js'), 'utf8');
    expect(text.match(/[^\x00-\x7f]/)).toBeNull();
    expect(text.match(/^\s*\/\/ /m)).toBeNull();
  });

  it("starts the tunnel worker from the packaged layout (app.asar's files, the .wasm in app.asar.unpacked, no node_modules) and it opens a tunnel as far as the network lets it", async () => {
    // Node cannot read an asar archive: lay its contents out as Electron presents them, in a
    // folder named app.asar, and the asarUnpack files beside it in app.asar.unpacked.
    const base = mkdtempSync(join(tmpdir(), 'gh-packaged-'));
    const unpack = picomatch(builder.asarUnpack, { dot: true });
    for (const f of readdirAll(join(ROOT, 'dist')).concat([join(ROOT, 'package.json')])) {
      if (!packaged(f)) continue;
      const rel = relative(ROOT, f);
      const to = join(base, unpack(rel) ? 'app.asar.unpacked' : 'app.asar', rel);
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(f, to);
    }
    expect(existsSync(join(base, 'app.asar/dist/core/netstack/lwip/lwip.wasm'))).toBe(false);
    const worker = new Worker(pathToFileURL(join(base, 'app.asar/dist/core/egress/worker/tunnel-worker.js')));
    try {
      const reply = await new Promise<{ t: string; error?: { code: string; message: string } }>(
        (resolvePromise, reject) => {
          worker.once('error', reject);
          worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) before answering`)));
          worker.on('message', (batch: Array<{ t: string }>) => {
            for (const m of batch) if (m.t === 'opened' || m.t === 'open-failed') resolvePromise(m);
          });
          // A profile for a UDP port nothing answers on: the worker loads everything, compiles lwIP and tries.
          const profileText = [
            'client',
            'dev tun',
            'proto udp',
            'remote 127.0.0.1 9',
            '<ca>',
            '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
            '</ca>',
            '',
          ].join('\n');
          worker.postMessage([
            {
              t: 'open',
              data: {
                id: 'packaged-1',
                nodeId: 'packaged',
                link: { protocol: 'openvpn', profileText },
                connectTimeoutMs: 1_000,
                unresponsiveMs: 0,
                logLevel: 'silent',
              },
            },
          ]);
        },
      );
      // Refused (ICMP port unreachable) or timed out: either way the tunnel client ran and met the network.
      expect(reply).toMatchObject({
        t: 'open-failed',
        error: {
          code: expect.stringMatching(/^GH_ERR_EGRESS_(FAILED|CONNECT_TIMEOUT)$/),
          message: expect.stringMatching(/127\.0\.0\.1:9/),
        },
      });
    } finally {
      await worker.terminate();
    }
  });

  it('installs on Debian 12: each Depends of the .deb has an install candidate there, and the list is what Electron needs', () => {
    const deb = (builder as unknown as { deb: { depends: string[]; recommends?: string[] } }).deb;
    // electron-builder 26's own defaults (FpmTarget.getDefaultDepends): setting depends replaces them, so each must stay.
    for (const d of [
      'libgtk-3-0',
      'libnotify4',
      'libnss3',
      'libxss1',
      'libxtst6',
      'xdg-utils',
      'libatspi2.0-0',
      'libuuid1',
      'libsecret-1-0',
    ])
      expect(deb.depends, d).toContain(d);
    // What the Electron binary links beyond those (libasound.so.2, libgbm.so.1, libdrm.so.2); Ubuntu 24.04 renamed ALSA's.
    for (const d of ['libasound2 | libasound2t64', 'libgbm1', 'libdrm2']) expect(deb.depends, d).toContain(d);
    // gatehop-native's data path under Electron opens the system's libcrypto.so.3 (native/README.md).
    expect(deb.depends).toContain('libssl3 | libssl3t64');
    // Debian 12 has no libappindicator3-1, and Electron's tray does not need it (StatusNotifierItem over D-Bus).
    expect([...deb.depends, ...(deb.recommends ?? [])].join(' ')).not.toMatch(/appindicator/);
    if (
      !existsSync('/usr/bin/apt-cache') ||
      !/bookworm|^12/.test(readFileSync('/etc/debian_version', 'utf8').trim() + readFileSync('/etc/os-release', 'utf8'))
    )
      return;
    // One apt-cache call for every alternative: "name:\n  Installed: …\n  Candidate: …" per package.
    const alts = deb.depends.flatMap((d) => d.split('|').map((a) => a.trim()));
    const out = execFileSync('apt-cache', ['policy', ...alts], { encoding: 'utf8' });
    const candidate = new Map(
      [...out.matchAll(/^(\S+):\n(?:\s+.*\n)*?\s+Candidate: (\S+)/gm)].map((m) => [m[1]!, m[2]!]),
    );
    const noCandidate = deb.depends.filter((dep) =>
      dep.split('|').every((alt) => (candidate.get(alt.trim()) ?? '(none)') === '(none)'),
    );
    expect(noCandidate).toEqual([]);
  });

  it("starts the Linux desktop entry with the core's V8 flags (scripts/core-v8-flags.mjs), as npm start does", () => {
    const linux = (builder as unknown as { linux?: { executableArgs?: string[] } }).linux;
    expect(linux?.executableArgs).toEqual([`--js-flags=${CORE_V8_FLAGS.join(' ')}`]);
  });

  it('sets Electron fuses: no RunAsNode, no NODE_OPTIONS, no --inspect, asar integrity, only the app from its asar', () => {
    const fuses = (builder as unknown as { electronFuses?: Record<string, boolean> }).electronFuses;
    expect(fuses).toEqual({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      enableCookieEncryption: true,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  it('has the files read by path at run time: the preload, the renderer build, lwip.wasm (unpacked), the tray icons', () => {
    const runtime = [
      'dist/electron/preload.cjs',
      'dist/renderer/index.html',
      'dist/core/netstack/lwip/lwip.wasm',
      ...['connected', 'switching', 'no-node', 'error'].flatMap((s) => [
        `assets/tray/tray-${s}-32.png`,
        `assets/tray/tray-${s}Template.png`,
        `assets/tray/tray-${s}-light.ico`,
        `assets/tray/tray-${s}-dark.ico`,
      ]),
    ];
    for (const f of runtime) {
      expect(existsSync(join(ROOT, f)), f).toBe(true);
      expect(packaged(join(ROOT, f)), f).toBe(true);
    }
    const assets = readdirAll(join(ROOT, 'dist/renderer'));
    expect(assets.filter((f) => !packaged(f))).toEqual([]);
    expect(picomatch(builder.asarUnpack)('dist/core/netstack/lwip/lwip.wasm')).toBe(true);
    expect(picomatch(builder.asarUnpack)('node_modules/better-sqlite3/build/Release/better_sqlite3.node')).toBe(true);
  });

  it('has gatehop-native (built at install) packaged and unpacked from the asar, where the core looks for it', () => {
    const rel = 'native/build/Release/gatehop_native.node';
    // CI builds it from source (a failed build fails npm ci there); elsewhere a machine may lack a compiler.
    if (process.env.CI === 'true') expect(existsSync(join(ROOT, rel)), rel).toBe(true);
    expect(packaged(join(ROOT, rel))).toBe(true);
    expect(picomatch(builder.asarUnpack)(rel)).toBe(true);
    // core/common/native.ts looks in the folders above dist/core/common: app.asar is one of them.
    const { files } = importGraph(join(ROOT, pkg.main));
    expect([...files].map((f) => relative(ROOT, f))).toContain('dist/core/common/native.js');
  });
});

function readdirAll(dir: string): string[] {
  return readdirSync(dir).flatMap((n) =>
    statSync(join(dir, n)).isDirectory() ? readdirAll(join(dir, n)) : [join(dir, n)],
  );
}
