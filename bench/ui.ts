/**
 * The window's cost at a thousand nodes and more, measured in Debian's Chromium through
 * playwright-core, against the real core (the CLI) whose list has N nodes (a loopback list
 * endpoint; each node's OpenVPN port is a loopback listener that accepts and never answers, so
 * probes see them and tunnels do not come up — the window is busy, as while connecting):
 *   - JS + CSS transferred, raw and gzip (what the dashboard at /ui sends);
 *   - navigation → the Nodes view showing the table of N rows (median of --runs, fresh context);
 *   - sort by a column and filter by text, measured in the page: the event → painted (two
 *     animation frames), p50 and p95 of --reps each;
 *   - main-thread CPU (Chromium's TaskDuration) per minute of live updates on the Overview and
 *     on the Nodes view: the core's status every second, and a ranking every 30 s (the bench asks
 *     for a list refresh, which fetches, ranks and sends nodes + latency). The events the page was
 *     sent are counted from a second /events stream and printed beside the figure.
 * Targets (issue #23): at 1,000 nodes nav ≤ 1 s, sort/filter ≤ 100 ms, ≤ 3 s CPU per minute; at
 * 5,000 within 2× of those; JS + CSS gzip ≤ 250 KB.
 * Usage: npm run bench:ui [-- --sizes 1000,5000 --runs 5 --reps 20 --seconds 60]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../test/helpers/browser.js';
import { vpnGateCsv, vpnGateProfile } from '../test/helpers/vpngate-fixtures.js';
import { coreEnv, coreV8Flags } from './lib/core-flags.js';

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
};
const SIZES = arg('sizes', '1000,5000').split(',').map(Number);
const RUNS = Number(arg('runs', '5'));
const REPS = Number(arg('reps', '20'));
const SECONDS = Number(arg('seconds', '60'));
const RANK_EVERY_MS = 30_000;
const root = resolve(import.meta.dirname, '..');
const TOKEN = 'bench-ui-token-0123456789abcdef';
const COUNTRIES: Array<[string, string]> = [
  ['Japan', 'JP'],
  ['Korea Republic of', 'KR'],
  ['United States', 'US'],
  ['Viet Nam', 'VN'],
  ['Thailand', 'TH'],
  ['Russian Federation', 'RU'],
];

function assetSizes(): { raw: number; gzip: number } {
  const dir = join(root, 'dist/renderer/assets');
  let raw = 0;
  let gzip = 0;
  for (const f of readdirSync(dir).filter((x) => /\.(js|css)$/.test(x))) {
    raw += statSync(join(dir, f)).size;
    gzip += gzipSync(readFileSync(join(dir, f)), { level: 9 }).length;
  }
  return { raw, gzip };
}

const pct = (a: number[], p: number): number => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

interface Core {
  url: string;
  admin: string;
  stop: () => Promise<void>;
}

/** The CLI over a list of `n` nodes whose ports accept and stay silent. */
async function startCore(n: number): Promise<Core> {
  const held = new Set<Socket>();
  const silent = createTcpServer((s) => {
    held.add(s);
    s.on('error', () => undefined).on('close', () => held.delete(s));
  });
  await new Promise<void>((r) => silent.listen(0, '0.0.0.0', () => r()));
  const port = (silent.address() as AddressInfo).port;
  const rows = Array.from({ length: n }, (_, i) => {
    const ip = `127.${1 + Math.floor(i / 62500)}.${Math.floor(i / 250) % 250}.${(i % 250) + 2}`;
    return {
      host: `public-vpn-${i}`,
      ip,
      score: 100_000 + ((i * 7919) % 900_000),
      ping: 5 + (i % 200),
      speed: 1e6 * (1 + (i % 90)),
      country: COUNTRIES[i % COUNTRIES.length]!,
      profile: vpnGateProfile(ip, port, 'tcp'),
    };
  });
  const csv = vpnGateCsv(rows);
  const list = createHttpServer((_req, res) => res.end(csv));
  await new Promise<void>((r) => list.listen(0, '127.0.0.1', () => r()));
  const api = `http://127.0.0.1:${(list.address() as AddressInfo).port}/api/iphone/`;
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-bench-ui-'));
  const core: ChildProcess = spawn(
    process.execPath,
    [
      ...coreV8Flags(),
      join(root, 'bin/gatehop.js'),
      '--egress',
      'vpngate',
      '--api',
      api,
      '--allow-private-nodes',
      '--mode',
      'global',
      '--listen',
      '127.0.0.1:0',
      '--admin',
      '127.0.0.1:0',
      '--admin-token',
      TOKEN,
      '--data-dir',
      dataDir,
      '--log-file',
      'off',
      '--log-level',
      'info',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: coreEnv() },
  );
  let out = '';
  const url = await new Promise<string>((res, rej) => {
    core.once('exit', (code) => rej(new Error(`core exited ${code}: ${out.slice(-2000)}`)));
    core.stdout!.on('data', (c: Buffer) => {
      out = (out + c.toString()).slice(-20_000);
      const m = /dashboard: (\S+)/.exec(out);
      if (m) res(m[1]!);
    });
  });
  const admin = new URL(url).origin;
  // Ready when the core lists all n nodes.
  for (;;) {
    const r = await fetch(`${admin}/nodes`, { headers: { authorization: `Bearer ${TOKEN}` } })
      .then((x) => x.json() as Promise<{ nodes: unknown[] }>)
      .catch(() => null);
    if (r && r.nodes.length >= n) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    admin,
    stop: async () => {
      const exited = new Promise((r) => core.once('exit', r));
      core.kill('SIGTERM');
      await exited;
      list.close();
      for (const s of held) s.destroy();
      silent.close();
    },
  };
}

/**
 * Navigation → the Nodes view with its table of n rows (rows in view in the DOM, aria-rowcount
 * n + 1), measured in the page from its time origin (navigation start): the Nodes tab is clicked
 * as soon as it exists, the table is painted two frames after it is complete. Then, warm: back to
 * Overview and into Nodes again, the click → painted.
 */
const OPEN_NODES = `async (rows) => {
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const tab = () => [...document.querySelectorAll('[role=tab]')].find((b) => b.textContent.trim() === 'Nodes');
  const table = () => document.querySelector('table.nodes')?.getAttribute('aria-rowcount') === String(rows + 1) && document.querySelectorAll('table.nodes tbody tr[aria-rowindex]').length > 0;
  while (!tab()) await frame();
  const clicked = performance.now();
  tab().click();
  while (!table()) await frame();
  await frame(); await frame();
  const cold = performance.now();
  const overview = [...document.querySelectorAll('[role=tab]')].find((b) => b.textContent.trim() === 'Overview');
  const warm = [];
  for (let i = 0; i < 5; i++) {
    overview.click();
    while (table()) await frame();
    await frame();
    const t0 = performance.now();
    tab().click();
    while (!table()) await frame();
    await frame();
    warm.push(performance.now() - t0);
  }
  return { cold, clicked, warm };
}`;

async function navigation(
  browser: Browser,
  core: Core,
  n: number,
): Promise<{ cold: number; tabAt: number; warm: number[]; page: Page; close: () => Promise<void> }> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await page.goto(core.url, { waitUntil: 'commit' }); // a fresh context: nothing cached
  const r = (await page.evaluate(`(${OPEN_NODES})(${n})`)) as { cold: number; clicked: number; warm: number[] };
  return { cold: r.cold, tabAt: r.clicked, warm: r.warm, page, close: () => ctx.close() };
}

/**
 * In the page: do an act, then wait two frames (painted); the milliseconds between. Plain JS in a
 * string: tsx would name the functions in a closure (`__name`), which the page does not have.
 */
const SORT_AND_FILTER = `async (reps) => {
  const painted = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))));
  const timed = async (act) => { await painted(); const t0 = performance.now(); act(); return (await painted()) - t0; };
  const sortButtons = [...document.querySelectorAll('table.nodes thead button.th')];
  const input = document.querySelector('.filters input[type=search]');
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const type = (v) => { setValue.call(input, v); input.dispatchEvent(new Event('input', { bubbles: true })); };
  const sort = [];
  const filter = [];
  for (let i = 0; i < reps; i++) sort.push(await timed(() => sortButtons[i % sortButtons.length].click()));
  const words = ['public-vpn-1', 'public-vpn-12', 'japan', '', 'korea', 'public-vpn-4', ''];
  for (let i = 0; i < reps; i++) filter.push(await timed(() => type(words[i % words.length])));
  type('');
  return { sort, filter };
}`;

async function sortAndFilter(page: Page, reps: number): Promise<{ sort: number[]; filter: number[] }> {
  return page.evaluate(`(${SORT_AND_FILTER})(${reps})`);
}

/** Main-thread CPU per minute on `view` while the feed runs; the events sent meanwhile, by type. */
async function liveCpu(
  browser: Browser,
  core: Core,
  view: string,
): Promise<{ msPerMin: number; events: Record<string, number> }> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await page.goto(core.url);
  await page.getByRole('tab', { name: view }).click();
  await page.waitForTimeout(2000); // past the first load
  const events: Record<string, number> = {};
  const tap = new AbortController();
  void fetch(`${core.admin}/events`, { signal: tap.signal, headers: { authorization: `Bearer ${TOKEN}` } })
    .then(async (res) => {
      const dec = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        for (const m of dec.decode(chunk, { stream: true }).matchAll(/^event: (\w+)/gm))
          events[m[1]!] = (events[m[1]!] ?? 0) + 1;
    })
    .catch((err: Error) => void (tap.signal.aborted || console.error(`(the event tap failed: ${err.message})`)));
  const refresh = () =>
    void fetch(`${core.admin}/nodes/refresh`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } }).catch(
      () => undefined,
    );
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('Performance.enable');
  const task = async () =>
    (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0;
  const a = await task();
  refresh();
  const ranker = setInterval(refresh, RANK_EVERY_MS);
  await page.waitForTimeout(SECONDS * 1000);
  const b = await task();
  clearInterval(ranker);
  tap.abort();
  await ctx.close();
  return { msPerMin: (b - a) * 1000 * (60 / SECONDS), events };
}

async function main(): Promise<void> {
  const browser = await launchChromium();
  const sizes = assetSizes();
  const lines: string[] = [];
  try {
    for (const n of SIZES) {
      const core = await startCore(n);
      try {
        const navs: number[] = [];
        const tabs: number[] = [];
        const warms: number[] = [];
        const sorts: number[] = [];
        const filters: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          const r = await navigation(browser, core, n);
          navs.push(r.cold);
          tabs.push(r.tabAt);
          warms.push(...r.warm);
          const sf = await sortAndFilter(r.page, REPS);
          sorts.push(...sf.sort);
          filters.push(...sf.filter);
          await r.close();
        }
        const overview = await liveCpu(browser, core, 'Overview');
        const nodes = await liveCpu(browser, core, 'Nodes');
        const x = (v: number, target: number) => `${(v / target).toFixed(2)}× of target`;
        const scale = n > 1000 ? 2 : 1;
        const feed = (e: Record<string, number>) =>
          Object.entries(e)
            .sort()
            .map(([k, v]) => `${k} ${v}`)
            .join(', ');
        lines.push(
          `| **${n.toLocaleString('en')} nodes** | | |`,
          `| open the window → Nodes view with ${n} rows painted (median of ${RUNS}, a fresh context; the tabs were there at ${pct(tabs, 50).toFixed(0)} ms) | **${pct(navs, 50).toFixed(0)} ms** (max ${Math.max(...navs).toFixed(0)}) | ${x(pct(navs, 50), 1000 * scale)} |`,
          `| Overview → Nodes view, click → painted (p50 / p95 of ${warms.length}) | ${pct(warms, 50).toFixed(0)} / **${pct(warms, 95).toFixed(0)} ms** | ${x(pct(warms, 95), 1000 * scale)} |`,
          `| sort by a column, event → painted (p50 / p95 of ${sorts.length}) | ${pct(sorts, 50).toFixed(0)} / **${pct(sorts, 95).toFixed(0)} ms** | ${x(pct(sorts, 95), 100 * scale)} |`,
          `| filter by text, typed → painted (p50 / p95 of ${filters.length}) | ${pct(filters, 50).toFixed(0)} / **${pct(filters, 95).toFixed(0)} ms** | ${x(pct(filters, 95), 100 * scale)} |`,
          `| main-thread CPU per minute live, Overview (sent: ${feed(overview.events)}) | **${overview.msPerMin.toFixed(0)} ms** | ${x(overview.msPerMin, 3000 * scale)} |`,
          `| main-thread CPU per minute live, Nodes view (sent: ${feed(nodes.events)}) | **${nodes.msPerMin.toFixed(0)} ms** | ${x(nodes.msPerMin, 3000 * scale)} |`,
        );
      } finally {
        await core.stop();
      }
    }
    console.log(
      `\n| bench:ui (Chromium ${browser.version()}, ${SECONDS} s per live figure) | value | against the target |`,
    );
    console.log('|---|---|---|');
    console.log(
      `| JS + CSS transferred | ${(sizes.raw / 1024).toFixed(0)} KiB raw, **${(sizes.gzip / 1024).toFixed(0)} KiB gzip** | ${(sizes.gzip / 250_000).toFixed(2)}× of 250 KB |`,
    );
    for (const l of lines) console.log(l);
  } finally {
    await browser.close();
  }
}

await main();
