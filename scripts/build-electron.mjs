// The preload runs sandboxed, where only 'electron' can be required: bundle it (and the contract
// it derives the bridge from) into one CommonJS file beside the compiled main process.
import { build } from 'esbuild';

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
