import { CORE_V8_FLAGS } from '../../scripts/core-v8-flags.mjs';

/**
 * The V8 flags a bench starts the core with: the ones `npm start` uses (scripts/core-v8-flags.mjs),
 * or GATEHOP_BENCH_V8_FLAGS when set (space-separated; empty: V8's defaults), to measure a flag's
 * cost: run the bench both ways, alternated.
 */
export function coreV8Flags(): string[] {
  const override = process.env.GATEHOP_BENCH_V8_FLAGS;
  return override === undefined ? [...CORE_V8_FLAGS] : override.split(' ').filter(Boolean);
}
