import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The tunnel worker's script. Built (dist/: the CLI and Electron, which since 17.3 loads worker
 * scripts from inside app.asar) it is the .js beside this file.
 *
 * Run from TypeScript source (vitest, `node --import tsx`), Node 20 cannot load a .ts worker: loader
 * hooks never reach worker threads there. So the worker and what it imports are bundled once per
 * process with esbuild (a dev dependency) into node_modules/.cache, keeping each file's own
 * `import.meta.url` (the netstack finds lwip.wasm by it) and leaving packages external.
 */
export async function workerScript(): Promise<URL> {
  const js = new URL('./tunnel-worker.js', import.meta.url);
  if (import.meta.url.endsWith('.js') && existsSync(fileURLToPath(js))) return js;
  devBundle ??= bundleFromSource(fileURLToPath(new URL('./tunnel-worker.ts', import.meta.url)));
  return devBundle;
}

let devBundle: Promise<URL> | undefined;

async function bundleFromSource(entry: string): Promise<URL> {
  const { build } = await import('esbuild');
  const keepMetaUrl = {
    name: 'keep-import-meta-url',
    setup(b: { onLoad(o: { filter: RegExp }, cb: (a: { path: string }) => { contents: string; loader: 'ts' }): void }) {
      b.onLoad({ filter: /\.ts$/ }, (a) => ({
        contents: readFileSync(a.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(a.path).href)),
        loader: 'ts',
      }));
    },
  };
  const out = await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', write: false, plugins: [keepMetaUrl], logLevel: 'silent' });
  const code = out.outputFiles[0]!.text;
  const root = repoRoot(dirname(entry));
  const dir = join(root, 'node_modules', '.cache', 'gatehop');
  const file = join(dir, `tunnel-worker-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, file); // atomic: parallel test processes write the same bytes
  }
  return pathToFileURL(file);
}

/** The nearest folder with node_modules, where the bundle's bare imports resolve. */
function repoRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'node_modules')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
