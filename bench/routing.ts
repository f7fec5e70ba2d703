/**
 * Routing benchmark (issue #33), side by side in one run on this machine:
 *   - the proxy with a 100,000-domain rule set and a 10,000-network CIDR set loaded (mode rule)
 *     against the same proxy in mode global: bulk throughput (curl through each, best of N) and
 *     SOCKS5 CONNECT to first byte (p50/p99 over sequential connects);
 *   - the decision's own cost per TCP flow (a name) and per UDP packet (an address), p50/p99,
 *     measured in-process on the same table;
 *   - the RSS the rule sets add (the two proxies' RSS after the same load) and what GeoIP adds.
 *   - the rule formats of #45 in-process: a GEOSITE list of the `cn` list's size, a 100,000-name
 *     mrs set (load time, RSS, decision p50/p99) and the worst regexes RE2 accepts (cost per flow).
 * Targets: throughput ≥ 0.95× global, CONNECT-to-first-byte p99 + ≤ 0.2 ms.
 * Usage: npm run bench:routing [-- --bytes N --connections N --runs N] [--formats-only]
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  compileUserRegex,
  GeoIp,
  GeoSite,
  parseMrsRuleSet,
  parseRuleSet,
  RuleTable,
  type Flow,
  type RuleSet,
} from '../core/rules/index.js';
import { bigSiteList, writeGeoSite } from '../test/helpers/geosite-writer.js';
import { writeMrsDomains } from '../test/helpers/mrs-writer.js';
import { freePort, startProcess } from './lib/processes.js';
import { curlSpeed as curlSpeedOf, percentile as pct, socksTtfb as ttfb } from './lib/socks-measure.js';
import { coreEnv, coreV8Flags } from './lib/core-flags.js';
import { FigureSheet } from './lib/figures.js';

/** bench/figures/routing.json: what bench:ab pairs and bench:check compares (#61's decision latency). */
const sheet = new FigureSheet('routing');

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const BYTES = arg('bytes', 512 << 20);
const curlSpeed = (url: string, proxy: string): number => curlSpeedOf(url, BYTES, proxy);
const CONNECTIONS = arg('connections', 2000);
const RUNS = arg('runs', 5);
const DOMAINS = 100_000;
const CIDRS = 10_000;
const root = resolve(import.meta.dirname, '..');

/** Deterministic pseudo-random numbers (the same sets every run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The two sets in each data directory's rule-sets/ (a rule set's path is kept inside its data directory). */
function makeSets(dataDirs: string[]): void {
  const r = rng(33);
  const word = (): string =>
    Array.from({ length: 4 + Math.floor(r() * 8) }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join('');
  const tlds = ['cn', 'ir', 'ru', 'com', 'net'];
  const domains = Array.from({ length: DOMAINS }, () => `+.${word()}.${tlds[Math.floor(r() * tlds.length)]}`);
  // Public networks only: the proxy's own target (127.0.0.1) must not match them.
  const cidrs = Array.from({ length: CIDRS }, () => {
    const a = 1 + Math.floor(r() * 120);
    return `${a}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}.0/24`;
  });
  for (const dataDir of dataDirs) {
    mkdirSync(join(dataDir, 'rule-sets'), { recursive: true });
    writeFileSync(join(dataDir, 'rule-sets', 'domains.txt'), domains.join('\n'));
    writeFileSync(join(dataDir, 'rule-sets', 'cidrs.txt'), cidrs.join('\n'));
  }
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

/** The decision's own cost: the same table the proxy loads, asked in-process. */
function decisionCost(files: { domains: string; cidrs: string }): void {
  const ctx = () => table.context;
  const texts = [readFileSync(files.domains, 'utf8'), readFileSync(files.cidrs, 'utf8')] as const;
  global.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const sets = new Map<string, RuleSet>([
    ['domains', parseRuleSet(texts[0], 'domain', 'text', ctx)],
    ['cidrs', parseRuleSet(texts[1], 'ipcidr', 'text', ctx)],
  ]);
  for (const set of sets.values()) set.match({ network: 'tcp', host: '1.2.3.4', port: 1 }, false); // build the ranges
  global.gc?.();
  console.log(`  the two sets hold ${((process.memoryUsage().heapUsed - heap0) / 1e6).toFixed(1)} MB of JS heap`);
  const table: RuleTable = new RuleTable({
    mode: 'rule',
    rules: [
      'RULE-SET,domains,DIRECT',
      'RULE-SET,cidrs,DIRECT,no-resolve',
      'GEOIP,LAN,DIRECT,no-resolve',
      'MATCH,TUNNEL',
    ],
    ruleSets: sets,
  });
  const r = rng(7);
  const names = Array.from({ length: 10_000 }, (_, i) => `host${i}.${['example.org', 'qq.cn', 'cdn.net'][i % 3]}`);
  const ips = Array.from(
    { length: 10_000 },
    () => `${1 + Math.floor(r() * 200)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}`,
  );
  for (const [label, flows] of [
    ['TCP flow (a name)', names.map((host) => ({ network: 'tcp' as const, host, port: 443 }))],
    ['UDP packet (an address)', ips.map((host) => ({ network: 'udp' as const, host, port: 443 }))],
  ] as const) {
    for (const f of flows) table.decide(f); // warm-up
    const samples: number[] = [];
    for (let round = 0; round < 10; round++)
      for (const f of flows) {
        const t0 = process.hrtime.bigint();
        table.decide(f);
        samples.push(Number(process.hrtime.bigint() - t0));
      }
    samples.sort((a, b) => a - b);
    const key = label.startsWith('TCP') ? 'decision TCP flow' : 'decision UDP packet';
    sheet.set(`${key} p50`, pct(samples, 50) / 1000, 'µs', 'lower');
    sheet.set(`${key} p99`, pct(samples, 99) / 1000, 'µs', 'lower');
    console.log(
      `  ${label.padEnd(24)} p50 ${(pct(samples, 50) / 1000).toFixed(2)} µs  p99 ${(pct(samples, 99) / 1000).toFixed(2)} µs`,
    );
  }
}

async function geoipCost(): Promise<void> {
  global.gc?.();
  const before = process.memoryUsage().rss;
  const t0 = Date.now();
  const g = await GeoIp.load();
  global.gc?.();
  await new Promise((r) => setTimeout(r, 500));
  console.log(
    `  GeoIP: ${g.ranges} ranges, tables ${(g.bytes / 1e6).toFixed(1)} MB, RSS +${((process.memoryUsage().rss - before) / 1e6).toFixed(1)} MB after load, ${Date.now() - t0} ms to load`,
  );
}

/** p50/p99 in µs of `fn` over `flows`, ten rounds after a warm-up. */
function perFlow(flows: readonly Flow[], fn: (f: Flow) => unknown): { p50: number; p99: number } {
  for (const f of flows) fn(f);
  const samples: number[] = [];
  for (let round = 0; round < 10; round++)
    for (const f of flows) {
      const t0 = process.hrtime.bigint();
      fn(f);
      samples.push(Number(process.hrtime.bigint() - t0));
    }
  samples.sort((a, b) => a - b);
  return { p50: pct(samples, 50) / 1000, p99: pct(samples, 99) / 1000 };
}

/** JS heap and external memory in use (RSS in-process is dominated by what the GC has not returned yet). */
function retained(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Load time of `load`, and the memory what it made keeps (heap and external, after a GC). */
function measured<T>(load: () => T): { value: T; ms: number; keptMb: number } {
  global.gc?.();
  const before = retained();
  const t0 = performance.now();
  const value = load();
  const ms = performance.now() - t0;
  global.gc?.();
  return { value, ms, keptMb: (retained() - before) / 1e6 };
}

/** `n` random names under the given endings (random words: compressed sizes as real lists have). */
function randomNames(n: number, seed: number): string[] {
  const r = rng(seed);
  const word = (): string =>
    Array.from({ length: 4 + Math.floor(r() * 8) }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join('');
  return Array.from({ length: n }, () => `${word()}.${['cn', 'com.cn', 'net', 'com'][Math.floor(r() * 4)]}`);
}

/** #45's formats: GEOSITE at the cn list's size, a 100,000-name mrs set, the worst regexes RE2 takes. */
function formatsCost(): void {
  const listed = randomNames(110_000, 45);
  const names = Array.from({ length: 10_000 }, (_, i) => ({
    network: 'tcp' as const,
    host: i % 2 ? `www.${listed[i * 11]!}` : `host${i}.example.org`,
    port: 443,
  }));
  // v2fly's cn list has ~110,000 entries (mostly domain:, some full:).
  const dat = writeGeoSite({
    cn: listed.map((value, i) => ({ type: i % 10 === 0 ? ('full' as const) : ('domain' as const), value })),
    other: bigSiteList(1_000),
  });
  const site = measured(() => {
    const s = GeoSite.parse(dat);
    s.matches('cn', 'warm.example'); // the list is decoded on first use: part of the load
    return s;
  });
  const siteTable = new RuleTable({ mode: 'rule', rules: ['GEOSITE,cn,DIRECT', 'MATCH,TUNNEL'], geosite: site.value });
  const sd = perFlow(names, (f) => siteTable.decide(f));
  console.log(
    `  GEOSITE cn (110,000 entries, ${(dat.length / 1e6).toFixed(1)} MB file): load ${site.ms.toFixed(0)} ms, keeps ${site.keptMb.toFixed(1)} MB; decision p50 ${sd.p50.toFixed(2)} µs p99 ${sd.p99.toFixed(2)} µs`,
  );
  const domains = listed.slice(0, 100_000).map((d) => `+.${d}`);
  const mrsBytes = writeMrsDomains(domains);
  const ctx = () => mrsTable.context;
  const mrs = measured(() => parseMrsRuleSet(mrsBytes, 'domain', ctx));
  const mrsTable: RuleTable = new RuleTable({
    mode: 'rule',
    rules: ['RULE-SET,cn,DIRECT', 'MATCH,TUNNEL'],
    ruleSets: new Map([['cn', mrs.value]]),
  });
  const md = perFlow(names, (f) => mrsTable.decide(f));
  console.log(
    `  mrs domain set (100,000 names, ${(mrsBytes.length / 1e6).toFixed(2)} MB file): load ${mrs.ms.toFixed(0)} ms, keeps ${mrs.keptMb.toFixed(1)} MB; decision p50 ${md.p50.toFixed(2)} µs p99 ${md.p99.toFixed(2)} µs`,
  );
  // A name of 253 characters that the patterns nearly match: the worst case for a backtracking engine.
  const long = `${'a'.repeat(61)}.${'a'.repeat(61)}.${'a'.repeat(61)}.${'a'.repeat(61)}.b`;
  for (const pattern of ['(a+)+$', '(a|aa)*c', `${'a?'.repeat(30)}${'a'.repeat(30)}$`, `(${'[a-z]+'.repeat(40)})c`]) {
    const re = compileUserRegex(pattern, true);
    const c = perFlow([{ network: 'tcp', host: long, port: 443 }], (f) => re.test(f.host));
    console.log(
      `  regex ${pattern.slice(0, 40).padEnd(40)} on a 253-char name: p50 ${c.p50.toFixed(1)} µs p99 ${c.p99.toFixed(1)} µs`,
    );
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--formats-only')) {
    console.log('rule formats (#45), in-process:');
    formatsCost();
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'gh-bench-routing-'));
  makeSets(['global', 'rule'].map((mode) => join(dir, mode)));
  const config = join(dir, 'gatehop.yaml');
  writeFileSync(
    config,
    [
      'ruleProviders:',
      '  domains: { type: file, behavior: domain, format: text, path: domains.txt }',
      '  cidrs: { type: file, behavior: ipcidr, format: text, path: cidrs.txt }',
      'rules:',
      '  - RULE-SET,domains,REJECT',
      '  - RULE-SET,cidrs,REJECT,no-resolve',
      '  - GEOIP,LAN,DIRECT,no-resolve',
      '  - MATCH,TUNNEL',
      '',
    ].join('\n'),
  );
  const source = await startProcess(process.execPath, [resolve(root, 'bench/lib/source-server.mjs')]);
  const ports = JSON.parse(source.stdout().split('\n')[0]!) as { http: number; ttfb: number };
  const start = async (mode: string) => {
    const port = await freePort();
    const p = await startProcess(
      process.execPath,
      [
        ...coreV8Flags(),
        resolve(root, 'bin/gatehop.js'),
        ...['--egress', 'direct', '--mode', mode, '--config', config, '--listen', `127.0.0.1:${port}`],
        ...['--admin', 'off', '--log-level', 'warn', '--log-file', 'off', '--data-dir', join(dir, mode)],
      ],
      port,
      coreEnv(),
    );
    return { mode, port, p };
  };
  // What GeoIP adds, measured first, before this process has made anything else.
  await geoipCost();
  const runs = [await start('global'), await start('rule')];
  // Idle, right after start: the rule process holds the sets, the global one the same process without them.
  await new Promise((r) => setTimeout(r, 2_000));
  const idle = runs.map((r) => rssMb(r.p.child.pid!));
  try {
    const url = `http://127.0.0.1:${ports.http}/bytes/${BYTES}`;
    console.log(`rule sets: ${DOMAINS} domains + ${CIDRS} networks (mode rule) against mode global`);
    console.log(`bulk: ${(BYTES / (1 << 20)).toFixed(0)} MiB with curl --socks5, best of ${RUNS} (MiB/s)`);
    const speed: Record<string, number> = {};
    // Interleaved, so a machine that slows down mid-run slows both.
    for (let i = 0; i < RUNS; i++)
      for (const r of runs) speed[r.mode] = Math.max(speed[r.mode] ?? 0, curlSpeed(url, `127.0.0.1:${r.port}`));
    for (const r of runs) console.log(`  ${r.mode.padEnd(7)} ${speed[r.mode]!.toFixed(0).padStart(6)} MiB/s`);
    console.log(`  rule/global throughput ${(speed.rule! / speed.global!).toFixed(3)}x (target ≥ 0.95)`);
    for (const r of runs) sheet.set(`bulk ${r.mode}`, speed[r.mode]!, 'MiB/s', 'higher');
    sheet.set('bulk rule / global', speed.rule! / speed.global!, '×', 'higher');
    console.log(`latency: ${CONNECTIONS} sequential SOCKS5 CONNECTs, connect start → first byte (ms)`);
    const lat: Record<string, { p50: number; p99: number }> = {};
    for (const r of runs) for (let i = 0; i < 200; i++) await ttfb(r.port, ports.ttfb);
    const samples: Record<string, number[]> = { global: [], rule: [] };
    for (let i = 0; i < CONNECTIONS; i++) for (const r of runs) samples[r.mode]!.push(await ttfb(r.port, ports.ttfb));
    for (const r of runs) {
      const s = samples[r.mode]!.sort((a, b) => a - b);
      lat[r.mode] = { p50: pct(s, 50), p99: pct(s, 99) };
      console.log(`  ${r.mode.padEnd(7)} p50 ${lat[r.mode]!.p50.toFixed(3)}  p99 ${lat[r.mode]!.p99.toFixed(3)}`);
      sheet.set(`connect→first byte ${r.mode} p50`, lat[r.mode]!.p50, 'ms', 'lower');
      sheet.set(`connect→first byte ${r.mode} p99`, lat[r.mode]!.p99, 'ms', 'lower');
    }
    console.log(`  rule − global p99 ${(lat.rule!.p99 - lat.global!.p99).toFixed(3)} ms (target ≤ 0.2)`);
    console.log(
      `RSS after the same load: global ${rssMb(runs[0]!.p.child.pid!).toFixed(1)} MB, rule ${rssMb(runs[1]!.p.child.pid!).toFixed(1)} MB (the sets add ${(rssMb(runs[1]!.p.child.pid!) - rssMb(runs[0]!.p.child.pid!)).toFixed(1)} MB)`,
    );
    console.log(
      `RSS idle after start: global ${idle[0]!.toFixed(1)} MB, rule ${idle[1]!.toFixed(1)} MB (the sets add ${(idle[1]! - idle[0]!).toFixed(1)} MB)`,
    );
    console.log('the decision alone, in-process, on the same sets:');
    const sets = join(dir, 'rule', 'rule-sets');
    decisionCost({ domains: join(sets, 'domains.txt'), cidrs: join(sets, 'cidrs.txt') });
    console.log('rule formats (#45), in-process:');
    formatsCost();
    sheet.save();
  } finally {
    for (const p of [source, ...runs.map((r) => r.p)]) p.child.kill('SIGTERM');
  }
}

await main();
