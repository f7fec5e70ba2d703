/**
 * npm run bench:ab -- <rev> --bench <name> [--rounds 3] [--own-harness] [--fresh] [-- <bench args>]
 *
 * "Did my change cost anything?" as a number: builds <rev> beside the working tree (a temporary
 * clone in /tmp/gatehop-ab, installed with the same steps as CI: `npm ci`, then the bench's build
 * if its npm script has one), then runs bench <name> on both, alternated (A B, B A, A B, …, so a
 * machine that warms up or slows down during the run does not favour one side), <rounds> rounds,
 * and prints each figure's medians side by side with the ratio working tree / <rev>.
 *
 * Both sides run the working tree's harness (bench/, test/rig/, test/helpers/ are copied over the
 * clone's): the same measurement of two builds of core/ and native/. `--own-harness` runs each
 * side's own bench instead (for a bench that needs an API <rev> lacks, or to measure the harness).
 * An installed clone is kept and reused for the same commit (the harness is copied afresh each
 * time); `--fresh` clones and installs it again.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { printComparison, rowsOf } from './lib/compare.js';
import { describeMachine, machine, readFigures, type Figure } from './lib/figures.js';

const root = resolve(import.meta.dirname, '..');
const HARNESS = ['bench', 'test/rig', 'test/helpers'];

const dash = process.argv.indexOf('--', 2);
const own = dash > 0 ? process.argv.slice(2, dash) : process.argv.slice(2);
const benchArgs = dash > 0 ? process.argv.slice(dash + 1) : [];
const { values, positionals } = parseArgs({
  args: own,
  allowPositionals: true,
  options: {
    bench: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    'own-harness': { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
  },
});
const usage =
  'usage: npm run bench:ab -- <rev> --bench <name> [--rounds N] [--own-harness] [--fresh] [-- <bench args>]';
if (positionals.length !== 1 || !values.bench) fail(usage);
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) fail('--rounds: 1 to 20');

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const git = (...args: string[]): string => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();

let sha: string;
try {
  sha = git('rev-parse', '--verify', `${positionals[0]}^{commit}`);
} catch {
  fail(`bench:ab: ${positionals[0]} is not a commit here`);
}

/** The bench's npm script: an optional build step, then the node command that runs it. */
function benchCommand(dir: string, name: string): { build: boolean; argv: string[] } {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const script = pkg.scripts[`bench:${name}`];
  if (!script) fail(`bench:ab: no script bench:${name} in ${dir}/package.json`);
  const parts = script.split('&&').map((p) => p.trim());
  const run = parts.at(-1)!.split(/\s+/);
  if (run[0] !== 'node') fail(`bench:ab: bench:${name} does not end in a node command: ${script}`);
  return { build: parts.some((p) => p === 'npm run build'), argv: [process.execPath, ...run.slice(1)] };
}

/** Runs a command to completion with its output in `log`; a failure ends bench:ab with the log's tail. */
async function run(argv: string[], cwd: string, log: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const t0 = performance.now();
  const out = createWriteStream(log);
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  const code = await new Promise<number>((r) => child.once('close', (c) => r(c ?? 1)));
  await new Promise<void>((r) => out.end(r));
  if (code !== 0) {
    const tail = readFileSync(log, 'utf8').split('\n').slice(-25).join('\n');
    fail(`bench:ab: ${argv.join(' ')} in ${cwd} exited ${code}:\n${tail}\n(whole log: ${log})`);
  }
  return (performance.now() - t0) / 1000;
}

const short = sha.slice(0, 12);
const base = '/tmp/gatehop-ab';
const clone = join(base, short);
const logs = join(base, `${short}-runs-${Date.now()}`);
mkdirSync(logs, { recursive: true });
const ownHarness = values['own-harness'];
const installed = join(clone, '.ab-installed');

if (values.fresh || !existsSync(installed) || readFileSync(installed, 'utf8') !== sha) {
  console.log(`bench:ab: installing ${short} in ${clone} (git clone, npm ci)…`);
  rmSync(clone, { recursive: true, force: true });
  execFileSync('git', ['clone', '--quiet', '--no-checkout', root, clone]);
  execFileSync('git', ['-C', clone, 'checkout', '--quiet', '--detach', sha]);
  await run(['npm', 'ci', '--no-audit', '--no-fund'], clone, join(logs, 'install.log'));
  writeFileSync(installed, sha);
}
// The harness: the working tree's (the same measurement both sides), or the clone's own as committed.
for (const d of HARNESS) {
  rmSync(join(clone, d), { recursive: true, force: true });
  if (ownHarness) execFileSync('git', ['-C', clone, 'checkout', '--quiet', sha, '--', d]);
  else cpSync(join(root, d), join(clone, d), { recursive: true });
}
const sides = [
  { label: short, dir: clone },
  { label: 'working tree', dir: root },
];
const commands = sides.map((s) => benchCommand(ownHarness ? s.dir : root, values.bench!));
for (const [i, s] of sides.entries())
  if (commands[i]!.build) {
    console.log(`bench:ab: npm run build in ${s.label}…`);
    await run(['npm', 'run', 'build', '--silent'], s.dir, join(logs, `build-${i}.log`));
  }

console.log(
  `bench:ab: bench:${values.bench} ${benchArgs.join(' ')}, ${rounds} round${rounds > 1 ? 's' : ''}, ` +
    `${short} against the working tree, alternated; logs in ${logs}`,
);
const figures: Array<Array<Record<string, Figure>>> = [[], []];
for (let r = 0; r < rounds; r++) {
  for (const i of r % 2 ? [1, 0] : [0, 1]) {
    const out = join(logs, `${i ? 'b' : 'a'}-${r + 1}.json`);
    const secs = await run(
      [...commands[i]!.argv, ...benchArgs],
      sides[i]!.dir,
      join(logs, `${i ? 'b' : 'a'}-${r + 1}.log`),
      { ...process.env, GATEHOP_BENCH_FIGURES: out },
    );
    const f = readFigures(out);
    if (!f)
      fail(
        `bench:ab: bench:${values.bench} in ${sides[i]!.label} wrote no figures` +
          (ownHarness ? ' (its harness may predate bench/lib/figures.ts: run without --own-harness)' : ''),
      );
    figures[i]!.push(f.figures);
    console.log(`  round ${r + 1}/${rounds}: ${sides[i]!.label.padEnd(12)} ${secs.toFixed(0)} s`);
  }
}

console.log(`\n${describeMachine(machine())}; medians of ${rounds} (range), B / A = working tree / ${short}\n`);
printComparison(rowsOf(figures[0]!, figures[1]!), short, 'working tree');
console.log(`\n"within noise": the two sides' ranges overlap; otherwise better or WORSE by the medians' difference.`);
