#!/usr/bin/env -S MALLOC_ARENA_MAX=1 node --max-semi-space-size=8
// Runs the compiled core (npm run build). Inside Electron the same core is imported directly.
// The shebang's environment and flags are scripts/core-env.mjs's and core-v8-flags.mjs's
// (test/unit/core-v8-flags.test.ts keeps them in step); `node bin/gatehop.js` skips the shebang,
// so scripts/start.mjs passes them itself.
import { main } from '../dist/core/app/index.js';

main().catch((err) => {
  process.stderr.write(`gatehop: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
