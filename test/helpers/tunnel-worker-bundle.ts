import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '../..');

/**
 * Tests and benches run the core from TypeScript, where Node 20 cannot start a .ts worker (loader
 * hooks never reach worker threads). This bundles core/egress/worker/tunnel-worker.ts and what it
 * imports into node_modules/.cache (packages stay external and resolve from the repo; each file
 * keeps its own `import.meta.url`, by which the netstack finds lwip.wasm) and points the core at
 * it through GATEHOP_TUNNEL_WORKER. The built app never needs this: its worker is the .js in dist/.
 */
export async function ensureTunnelWorkerBundle(): Promise<string> {
  const existing = process.env.GATEHOP_TUNNEL_WORKER;
  if (existing && existsSync(new URL(existing))) return existing;
  const keepMetaUrl = {
    name: 'keep-import-meta-url',
    setup(b: { onLoad(o: { filter: RegExp }, cb: (a: { path: string }) => { contents: string; loader: 'ts' }): void }) {
      b.onLoad({ filter: /\.ts$/ }, (a) => ({
        contents: readFileSync(a.path, 'utf8').replaceAll(
          'import.meta.url',
          JSON.stringify(pathToFileURL(a.path).href),
        ),
        loader: 'ts',
      }));
    },
  };
  const out = await build({
    entryPoints: [join(ROOT, 'core/egress/worker/tunnel-worker.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    plugins: [keepMetaUrl],
    logLevel: 'silent',
  });
  const code = out.outputFiles[0]!.text;
  const dir = join(ROOT, 'node_modules', '.cache', 'gatehop');
  const file = join(dir, `tunnel-worker-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, file); // atomic: parallel test processes write the same bytes
  }
  const url = pathToFileURL(file).href;
  process.env.GATEHOP_TUNNEL_WORKER = url;
  return url;
}
