import react from '@vitejs/plugin-react';
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

// The renderer builds into the package (dist/renderer), served by the core at /ui/ and loaded
// by the Electron window from the file system; relative asset paths serve both.
export default defineConfig({
  root: resolve(import.meta.dirname),
  base: './',
  plugins: [react()],
  build: {
    outDir: resolve(import.meta.dirname, '../dist/renderer'),
    emptyOutDir: true,
    sourcemap: false,
    // No inline scripts or styles: the Content-Security-Policy allows only 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
