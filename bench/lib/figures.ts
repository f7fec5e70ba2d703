/**
 * A bench's figures, machine-readable: each bench names its figures here as it prints them, and
 * `save()` writes them with the machine they were measured on to `bench/figures/NAME.json` (the
 * short version, `--short`, to `NAME.short.json`), or where GATEHOP_BENCH_FIGURES says (bench:ab
 * and bench:check run benches with it, so a comparison never overwrites the stored figures).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';

/** Which way a figure is better: throughput `higher`, CPU and latency `lower`; `none` is a count or a setting. */
export type Better = 'higher' | 'lower' | 'none';

export interface Figure {
  value: number;
  unit: string;
  better: Better;
}

export interface Machine {
  cpu: string;
  cores: number;
  kernel: string;
  memoryGiB: number;
  node: string;
}

export interface FiguresFile {
  version: 1;
  bench: string;
  short: boolean;
  at: string;
  /** The commit measured, with `+dirty` when the working tree had changes. */
  commit: string | null;
  args: string[];
  machine: Machine;
  figures: Record<string, Figure>;
}

const benchDir = resolve(import.meta.dirname, '..');

export function machine(): Machine {
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) cpu = line.split(':')[1]!.trim();
  } catch {
    // Not Linux: os.cpus() said it.
  }
  return {
    cpu,
    cores: cpus().length,
    kernel: release(),
    memoryGiB: Math.round((totalmem() / (1 << 30)) * 10) / 10,
    node: process.version,
  };
}

/** Two machines are the same for a comparison when CPU, core count and kernel agree. */
export function sameMachine(a: Machine, b: Machine): boolean {
  return a.cpu === b.cpu && a.cores === b.cores && a.kernel === b.kernel;
}

export function describeMachine(m: Machine): string {
  return `${m.cpu}, ${m.cores} cores, Linux ${m.kernel}, ${m.memoryGiB} GiB, Node ${m.node}`;
}

function commitOf(dir: string): string | null {
  try {
    const head = execFileSync('git', ['-C', dir, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
    }).trim();
    return dirty ? `${head}+dirty` : head;
  } catch {
    return null;
  }
}

export const isShort = (): boolean => process.argv.includes('--short');

export function storedPath(bench: string, short: boolean): string {
  return resolve(benchDir, 'figures', `${bench}${short ? '.short' : ''}.json`);
}

export function readFigures(path: string): FiguresFile | null {
  try {
    const f = JSON.parse(readFileSync(path, 'utf8')) as FiguresFile;
    return f.version === 1 && typeof f.figures === 'object' ? f : null;
  } catch {
    return null;
  }
}

/** A bench's sheet: `set()` each figure as it is printed, `save()` at the end of a complete run. */
export class FigureSheet {
  readonly #bench: string;
  readonly #figures: Record<string, Figure> = {};

  constructor(bench: string) {
    this.#bench = bench;
  }

  set(key: string, value: number, unit: string, better: Better): void {
    if (!Number.isFinite(value)) throw new Error(`figure ${key} is not a number: ${value}`);
    this.#figures[key] = { value, unit, better };
  }

  /** Writes the file atomically (a crash mid-write never leaves half a stored figure) and says where. */
  save(): string {
    const short = isShort();
    const path = process.env.GATEHOP_BENCH_FIGURES || storedPath(this.#bench, short);
    const file: FiguresFile = {
      version: 1,
      bench: this.#bench,
      short,
      at: new Date().toISOString(),
      commit: commitOf(resolve(benchDir, '..')),
      args: process.argv.slice(2),
      machine: machine(),
      figures: this.#figures,
    };
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(`${path}.tmp`, `${JSON.stringify(file, null, 2)}\n`);
    renameSync(`${path}.tmp`, path);
    console.log(`\nfigures: ${path}`);
    return path;
  }
}
