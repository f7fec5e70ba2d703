/**
 * bench:traffic-db (#64): the traffic ledger's database after a simulated year of a heavy user.
 * Every day: 6 networks (home, work, cafés, a hotspot), 25 nodes, the three routes, 80 rules, 40
 * programs and 4 devices, about 1,500 distinct combinations a day (far more than one person
 * makes), written as the core writes them (one transaction per 30-s flush, 2,880 a day, each
 * adding to that day's rows). Printed side by side: the database's size against the same rows as
 * the CSV export (the peer: the plainest way to keep them), the time a flush takes, and how long
 * the window's summary of 30 and 365 days takes to read.
 * Usage: npm run bench:traffic-db [-- --days N --combos N] [--short]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../core/common/index.js';
import { Store } from '../core/store/index.js';
import { TrafficBook, daysBefore } from '../core/traffic/index.js';
import { isShort } from './lib/figures.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const DAYS = arg('days', isShort() ? 60 : 365);
const COMBOS = arg('combos', 1500);
const FLUSHES_SAMPLED = 48; // a day's 2,880 flushes cost about 60× this many: timed on a sample
const dir = mkdtempSync(join(tmpdir(), 'gh-traffic-db-'));
const path = join(dir, 'gatehop.db');
const log = silentLogger();
const store = new Store({ path, logger: log });
const now = Date.now();

/** A deterministic pseudo-random stream (the same fill every run). */
let seed = 7;
const rnd = (n: number): number => {
  // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) % n;
};

const flushMs: number[] = [];
const t0 = performance.now();
for (let d = DAYS - 1; d >= 0; d--) {
  const day = daysBefore(now, d);
  const combos = Array.from({ length: COMBOS }, () => ({
    day,
    network: `net${rnd(6)}`,
    node: rnd(4) === 0 ? '' : `vpn${100000 + rnd(25)}`,
    route: ['TUNNEL', 'DIRECT', 'REJECT'][rnd(3)]!,
    rule: `DOMAIN-SUFFIX,site${rnd(80)}.example`,
    program: rnd(3) === 0 ? '' : `program-${rnd(40)}`,
    device: ['', "Mum's phone", 'TV', 'tablet'][rnd(4)]!,
  }));
  // The day's flushes: each adds to some of its combinations (a sample of them is timed).
  for (let f = 0; f < FLUSHES_SAMPLED; f++) {
    const rows = Array.from({ length: 40 }, () => ({
      ...combos[rnd(combos.length)]!,
      bytesUp: rnd(5_000_000),
      bytesDown: rnd(50_000_000),
      flows: 1 + rnd(20),
    }));
    const a = performance.now();
    store.traffic.addTraffic(rows, []);
    flushMs.push(performance.now() - a);
  }
  // Every combination of the day at least once.
  store.traffic.addTraffic(
    combos.map((c) => ({ ...c, bytesUp: 1, bytesDown: 1, flows: 1 })),
    [],
  );
}
const fillS = (performance.now() - t0) / 1000;
const book = new TrafficBook({
  repo: store.traffic,
  settings: store,
  network: () => ({ key: 'net0', label: 'home' }),
  logger: log,
});
const timed = (fn: () => unknown): number => {
  const a = performance.now();
  fn();
  return performance.now() - a;
};
book.setOptions({ retentionDays: 3650 }); // a user who keeps the whole year
const summary30 = timed(() => book.summary(30, false));
const summary365 = timed(() => book.summary(365, false));
// What the window pays every 10 s while it shows a year: the past days are read once a day.
book.record(
  {
    id: '1',
    listener: 'local',
    kind: 'socks5',
    client: '',
    user: null,
    host: 'x',
    port: 443,
    route: 'TUNNEL',
    rule: 'MATCH',
    rulePayload: '',
    nodeId: 'vpn100001',
    program: null,
    bytesUp: 1,
    bytesDown: 1,
    startedAt: now,
    endedAt: now,
    end: 'closed',
    errCode: null,
  },
  '',
);
book.flush();
const again365 = timed(() => book.summary(365, false));
const csvBytes = Buffer.byteLength(book.csv(DAYS).csv);
const rows = store.traffic.trafficRows('0000-00-00', '9999-99-99').length;
book.close();
store.close(); // checkpoints the WAL into the file
const dbBytes = statSync(path).size;
flushMs.sort((a, b) => a - b);
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
console.log(`traffic ledger after ${DAYS} days of ${COMBOS} combinations a day (fill ${fillS.toFixed(1)} s)`);
console.log(`  rows                          ${rows}`);
console.log(
  `  database file                 ${mb(dbBytes)}   vs the same rows as CSV ${mb(csvBytes)}   ratio ${(dbBytes / csvBytes).toFixed(2)}`,
);
console.log(
  `  one flush (40 rows), median   ${flushMs[flushMs.length >> 1]!.toFixed(2)} ms, p99 ${flushMs[Math.floor(flushMs.length * 0.99)]!.toFixed(2)} ms`,
);
console.log(`  summary of 30 days            ${summary30.toFixed(0)} ms`);
console.log(
  `  summary of 365 days           ${summary365.toFixed(0)} ms first, ${again365.toFixed(0)} ms after a flush`,
);
rmSync(dir, { recursive: true, force: true });
