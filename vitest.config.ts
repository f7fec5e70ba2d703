import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [react()],
  test: {
    include: ['test/**/*.test.ts', 'renderer/test/**/*.test.{ts,tsx}'],
    setupFiles: ['test/setup/network-guard.ts', 'test/setup/tunnel-worker.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests open real sockets and child processes; two workers fit a 2-core machine.
    maxWorkers: 2,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
