/**
 * npm run bench:check [-- --only tunnel,proxy] [-- --save]
 *
 * Reruns the short version (`--short`) of each bench that stores figures and prints every figure
 * beside the stored one (bench/figures/NAME.short.json, else the full run's NAME.json) with the
 * ratio. Never a pass or a fail: these machines are noisy, and a figure stored on another machine
 * says more about the machines than about the code (it is said when the machines differ; bench:ab
 * is the tool for "did this change cost anything"). `--save` makes this run's figures the stored
 * short ones. Root for the rig benches (tunnel, honesty); without it they are skipped, said so.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { printComparison, rowsOf } from './lib/compare.js';
import { describeMachine, machine, readFigures, sameMachine, storedPath } from './lib/figures.js';

/** Each bench with stored figures: its script, whether it needs `npm run build` and root. */
const BENCHES = [
  { name: 'proxy', script: 'bench/proxy.ts', build: true, root: false },
  { name: 'netstack', script: 'bench/netstack.ts', build: false, root: false },
  { name: 'tunnel', script: 'bench/tunnel.ts', build: false, root: true },
  { name: 'honesty', script: 'bench/honesty.ts', build: false, root: true },
  { name: 'capture', script: 'bench/capture.ts', build: true, root: true },
] as const;

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { only: { type: 'string' }, save: { type: 'boolean', default: false } } });
const only = values.only?.split(',');
const unknown = only?.filter((n) => !BENCHES.some((b) => b.name === n));
if (unknown?.length) {
  console.error(`bench:check: no bench ${unknown.join(', ')} (${BENCHES.map((b) => b.name).join(', ')})`);
  process.exit(2);
}
const isRoot = process.getuid?.() === 0;
const chosen = BENCHES.filter((b) => !only || only.includes(b.name));
const skipped = chosen.filter((b) => b.root && !isRoot);
const runs = chosen.filter((b) => !b.root || isRoot);
for (const b of skipped) console.log(`bench:check: ${b.name} skipped (the rig needs root)`);
if (runs.some((b) => b.build)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });

const here = machine();
const out = mkdtempSync(join(tmpdir(), 'gatehop-check-'));
for (const b of runs) {
  const file = join(out, `${b.name}.json`);
  console.log(`\n## ${b.name} (--short)\n`);
  execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', b.script, '--short'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, GATEHOP_BENCH_FIGURES: file },
  });
  const now = readFigures(file);
  if (!now) throw new Error(`bench:check: ${b.name} wrote no figures`);
  const shortStored = readFigures(storedPath(b.name, true));
  const stored = shortStored ?? readFigures(storedPath(b.name, false));
  console.log('');
  if (!stored) console.log(`no stored figures for ${b.name}: run \`npm run bench:check -- --save\` to store these`);
  else {
    console.log(
      `stored: ${stored.short ? 'short' : 'full (a short run moves less data)'} run of ${stored.commit ?? '?'} on ${stored.at.slice(0, 10)}, ` +
        `${describeMachine(stored.machine)}`,
    );
    console.log(`now:    ${now.commit ?? '?'}, ${describeMachine(here)}`);
    if (!sameMachine(stored.machine, here))
      console.log('ANOTHER MACHINE: the ratios compare the machines as much as the code; use bench:ab for the code.');
    console.log('');
    printComparison(rowsOf([stored.figures], [now.figures]), 'stored', 'now');
  }
  if (values.save) {
    mkdirSync(resolve(root, 'bench/figures'), { recursive: true });
    copyFileSync(file, storedPath(b.name, true));
    console.log(`saved as ${storedPath(b.name, true)}`);
  }
}
console.log(
  '\nOne run a side: a ratio within ±10 % is this machine’s noise; a bigger one is worth a `bench:ab` of the commits between.',
);
