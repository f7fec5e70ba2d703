/**
 * Figures side by side: bench:ab (two builds, several rounds each) and bench:check (today against
 * the stored figures) print with this. A difference is only called one when the two sides' ranges
 * do not overlap; with one value a side, the ratio is printed and the reader judges the noise.
 */
import type { Better, Figure } from './figures.js';

export interface Compared {
  key: string;
  unit: string;
  better: Better;
  a: number[];
  b: number[];
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const fmt = (x: number): string =>
  Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toFixed(3);

const range = (xs: number[]): string => (xs.length > 1 ? ` (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})` : '');

/**
 * Two runs of the same build on this 2-core VM differ by up to ~10 % (netstack, tunnel: A/A runs
 * in bench/README.md); with one run a side, less than that is not called a difference.
 */
const ONE_RUN_NOISE_PCT = 10;

/** What the reader should take from one row: better, worse, or within the noise of these runs. */
export function verdict(c: Compared): string {
  if (c.better === 'none' || !c.a.length || !c.b.length) return '';
  const ma = median(c.a);
  const mb = median(c.b);
  if (ma === mb) return 'same';
  const pct = ma !== 0 ? Math.abs((mb - ma) / ma) * 100 : Infinity;
  const several = c.a.length > 1 && c.b.length > 1;
  if (several) {
    const overlap = Math.min(...c.b) <= Math.max(...c.a) && Math.min(...c.a) <= Math.max(...c.b);
    if (overlap) return 'within noise';
  } else if (pct <= ONE_RUN_NOISE_PCT) return `within noise (one run a side: ±${ONE_RUN_NOISE_PCT} %)`;
  const up = mb > ma;
  const good = c.better === 'higher' ? up : !up;
  return `${good ? 'better' : 'WORSE'} ${pct.toFixed(0)} %${several ? '' : ' (one run: confirm with bench:ab)'}`;
}

/** Prints a Markdown table: figure, side A, side B (medians, ranges), B/A and the verdict. */
export function printComparison(rows: Compared[], labelA: string, labelB: string): void {
  console.log(`| figure | ${labelA} | ${labelB} | ${labelB} / ${labelA} | |`);
  console.log('|---|---|---|---|---|');
  for (const r of rows) {
    const a = r.a.length ? `${fmt(median(r.a))}${range(r.a)}` : '—';
    const b = r.b.length ? `${fmt(median(r.b))}${range(r.b)}` : '—';
    const ratio = r.a.length && r.b.length && median(r.a) !== 0 ? `${(median(r.b) / median(r.a)).toFixed(2)}×` : '';
    console.log(`| ${r.key} (${r.unit}) | ${a} | ${b} | ${ratio} | ${verdict(r)} |`);
  }
}

/** Rows for every figure either side has, in the order of the first side that named it. */
export function rowsOf(a: Array<Record<string, Figure>>, b: Array<Record<string, Figure>>): Compared[] {
  const rows = new Map<string, Compared>();
  const add = (runs: Array<Record<string, Figure>>, side: 'a' | 'b'): void => {
    for (const run of runs)
      for (const [key, f] of Object.entries(run)) {
        let r = rows.get(key);
        if (!r) rows.set(key, (r = { key, unit: f.unit, better: f.better, a: [], b: [] }));
        r[side].push(f.value);
      }
  };
  add(a, 'a');
  add(b, 'b');
  return [...rows.values()];
}
