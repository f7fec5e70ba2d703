/**
 * What the packaged app loads at run time must be inside what electron-builder packages, so a
 * missing file fails here and not on a user's machine: the built main entry's import graph (and
 * the runtime files it reads by path) against the `files` and `asarUnpack` globs, and every bare
 * import against the production dependencies.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import picomatch from 'picomatch';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { main: string; dependencies: Record<string, string> };
const builder = parse(readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8')) as { files: string[]; asarUnpack: string[]; extraMetadata?: { main?: string } };

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
    for (const m of text.matchAll(/(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (spec.startsWith('.')) todo.push(resolve(dirname(f), spec));
      else if (!spec.startsWith('node:') && !builtinModules.includes(spec)) bare.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  return { files, bare };
}

describe('the package', () => {
  beforeAll(() => {
    if (!existsSync(join(ROOT, pkg.main))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
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

  it('has the tunnel worker (started by URL, not imported) and everything it imports, all from production dependencies', () => {
    const worker = join(ROOT, 'dist/core/egress/worker/tunnel-worker.js');
    expect(existsSync(worker)).toBe(true);
    const { files, bare } = importGraph(worker);
    expect([...files].filter((f) => !packaged(f)).map((f) => relative(ROOT, f))).toEqual([]);
    expect([...bare].filter((b) => !(b in pkg.dependencies))).toEqual([]);
  });

  it('has the files read by path at run time: the preload, the renderer build, lwip.wasm (unpacked), the tray icons', () => {
    const runtime = [
      'dist/electron/preload.cjs',
      'dist/renderer/index.html',
      'dist/core/netstack/lwip/lwip.wasm',
      ...['connected', 'switching', 'no-node', 'error'].flatMap((s) => [`assets/tray/tray-${s}-32.png`, `assets/tray/tray-${s}Template.png`, `assets/tray/tray-${s}-light.ico`, `assets/tray/tray-${s}-dark.ico`]),
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
});

function readdirAll(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? readdirAll(join(dir, n)) : [join(dir, n)]));
}
