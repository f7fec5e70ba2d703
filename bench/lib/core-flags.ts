import { CORE_ENV } from '../../scripts/core-env.mjs';
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

/**
 * The environment a bench starts the core with: this process's and the variables `npm start` adds
 * (scripts/core-env.mjs); with GATEHOP_BENCH_CORE_ENV=off, this process's alone, to measure what
 * those variables cost or save: run the bench both ways, alternated.
 */
export function coreEnv(): NodeJS.ProcessEnv {
  return process.env.GATEHOP_BENCH_CORE_ENV === 'off' ? { ...process.env } : { ...process.env, ...CORE_ENV };
}
