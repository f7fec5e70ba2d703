// Two files of the desktop app are bundled rather than left as tsc emitted them:
//
// - The preload runs sandboxed, where only 'electron' can be required: it and the contract it derives
//   the bridge from become one CommonJS file beside the compiled main process.
// - The tunnel worker is started by URL inside app.asar. There, a worker thread resolving dozens of
//   ESM files and packages is one more thing that can differ between Electron versions and
//   packaged layouts; one self-contained file cannot. Each source file keeps the meaning of its
//   own `import.meta.url` (the netstack finds lwip.wasm by it), rewritten relative to the bundle, so
//   dist/ keeps its layout and the .wasm stays where tsc's copy step put it. Its whitespace and
//   comments are minified away (names are kept, so stack traces still name functions): V8 keeps a
//   module's source for the isolate's life, and every tunnel thread, idle ones too, is an isolate.
//   As written, the bundle was 1.0 MB and held as a 2.0 MB two-byte string (a few comments are not
//   Latin-1); minified it is 0.7 MB of one-byte text, 1.3 MB less heap per thread (#44).
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');

await build({
  entryPoints: ['electron/preload.ts'],
  outfile: 'dist/electron/preload.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['electron'],
  logLevel: 'warning',
  legalComments: 'none',
});

const workerOut = resolve(ROOT, 'dist/core/egress/worker/tunnel-worker.js');
/** `import.meta.url` of core/x/y.ts becomes the URL of dist/core/x/y.js, computed from the bundle's own URL. */
const metaUrlOfSource = {
  name: 'meta-url-of-source',
  setup(b) {
    b.onLoad({ filter: /[\\/]core[\\/].*\.ts$/ }, (a) => {
      const dist = resolve(ROOT, 'dist', relative(ROOT, a.path)).replace(/\.ts$/, '.js');
      const rel = relative(dirname(workerOut), dist).split('\\').join('/');
      const expr = `new URL(${JSON.stringify(rel.startsWith('.') ? rel : `./${rel}`)}, import.meta.url).href`;
      return { contents: readFileSync(a.path, 'utf8').replaceAll('import.meta.url', expr), loader: 'ts' };
    });
  },
};
await build({
  entryPoints: ['core/egress/worker/tunnel-worker.ts'],
  outfile: workerOut,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // CommonJS packages inside an ESM bundle still call require() for Node's built-ins.
  banner: {
    js: "import { createRequire as __ghCreateRequire } from 'node:module'; const require = __ghCreateRequire(import.meta.url);",
  },
  plugins: [metaUrlOfSource],
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  legalComments: 'none',
});
