#!/usr/bin/env node
// Runs the compiled core (npm run build). Inside Electron the same core is imported directly.
import { main } from '../dist/core/app/index.js';

main().catch((err) => {
  process.stderr.write(`gatehop: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
