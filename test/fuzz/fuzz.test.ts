/**
 * Every fuzz target with 10⁴ inputs (GATEHOP_FUZZ_RUNS overrides): what CI runs. `npm run fuzz`
 * runs 10⁶ each by hand (test/fuzz/README.md).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { TARGETS } from './targets.js';

const RUNS = Number(process.env.GATEHOP_FUZZ_RUNS ?? 10_000);

describe('fuzzing every parser that reads bytes from outside (issue #24)', () => {
  for (const t of TARGETS) {
    describe(t.name, () => {
      beforeAll(() => t.setup?.(), 30_000);
      afterAll(() => t.teardown?.(), 30_000);
      it(`${t.what}: ${RUNS} inputs, each refused with a coded error or read within the invariants`, async () => {
        const property =
          t.run.constructor.name === 'AsyncFunction'
            ? fc.asyncProperty(t.input, (x) => t.run(x) as Promise<void>)
            : fc.property(t.input, (x) => void t.run(x));
        await fc.assert(property as fc.IAsyncProperty<unknown>, { numRuns: RUNS });
      }, 600_000);
    });
  }
});
