/**
 * `npm run fuzz [-- --runs 1000000] [--only name,name] [--seed N]`: every fuzz target with N inputs
 * (10⁶ by default; a socket target is capped at its maxRuns), one after another, printing inputs,
 * time and inputs per second per target, and the counterexample (shrunk) of any finding.
 * Exits 1 if anything was found. test/fuzz/README.md keeps the figures.
 */
import fc from 'fast-check';
import { TARGETS } from './targets.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const runs = Number(arg('runs') ?? 1_000_000);
const only = arg('only')?.split(',');
const seed = arg('seed') ? Number(arg('seed')) : Date.now() & 0x7fffffff;

console.log(`fuzz: ${runs} inputs per target, seed ${seed}`);
console.log('| target | inputs | time | inputs/s | found |');
console.log('|---|---|---|---|---|');
let found = 0;
for (const t of TARGETS) {
  if (only && !only.includes(t.name)) continue;
  const n = Math.min(runs, t.maxRuns ?? runs);
  await t.setup?.();
  const started = process.hrtime.bigint();
  const property =
    t.run.constructor.name === 'AsyncFunction'
      ? fc.asyncProperty(t.input, (x) => t.run(x) as Promise<void>)
      : fc.property(t.input, (x) => void t.run(x));
  const result = await fc.check(property as fc.IAsyncProperty<unknown>, { numRuns: n, seed });
  const s = Number(process.hrtime.bigint() - started) / 1e9;
  await t.teardown?.();
  const ok = !result.failed;
  if (!ok) found++;
  console.log(
    `| ${t.name} | ${result.numRuns.toLocaleString('en')} | ${s.toFixed(1)} s | ${Math.round(result.numRuns / s).toLocaleString('en')} | ${ok ? '0' : '**1**'} |`,
  );
  if (!ok)
    console.error(
      `  ${t.name}: ${String(result.errorInstance)}\n  counterexample: ${fc.stringify(result.counterexample)}\n  replay: --only ${t.name} --seed ${result.seed} (path ${result.counterexamplePath})`,
    );
}
process.exit(found ? 1 : 0);
