/**
 * The window's cost, measured in Debian's Chromium through playwright-core, against a core whose
 * list has 250 nodes (a loopback list endpoint; the nodes do not need to answer):
 *   - JS + CSS transferred, raw and gzip (what the dashboard at /ui sends);
 *   - time from navigation to the node table showing all 250 rows (median of --runs);
 *   - main-thread CPU (Chromium's TaskDuration) per minute with the live feed running, once on
 *     the Overview and once on the Latency view with the chart updating.
 * Usage: npm run bench:ui [-- --runs 5 --seconds 60]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchChromium } from '../test/helpers/browser.js';
import { vpnGateCsv } from '../test/helpers/vpngate-fixtures.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const RUNS = arg('runs', 5);
const SECONDS = arg('seconds', 60);
const root = resolve(import.meta.dirname, '..');
const TOKEN = 'bench-ui-token-0123456789abcdef';

function assetSizes(): { raw: number; gzip: number } {
  const dir = join(root, 'dist/renderer/assets');
  let raw = 0;
  let gzip = 0;
  for (const f of readdirSync(dir).filter((x) => /\.(js|css)$/.test(x))) {
    const b = readFileSync(join(dir, f));
    raw += statSync(join(dir, f)).size;
    gzip += gzipSync(b, { level: 9 }).length;
  }
  return { raw, gzip };
}

async function main(): Promise<void> {
  const rows = Array.from({ length: 250 }, (_, i) => ({ host: `public-vpn-${i}`, ip: `127.0.${Math.floor(i / 200)}.${(i % 200) + 2}` }));
  const list = createServer((_req, res) => res.end(vpnGateCsv(rows)));
  await new Promise<void>((r) => list.listen(0, '127.0.0.1', () => r()));
  const api = `http://127.0.0.1:${(list.address() as AddressInfo).port}/api/iphone/`;
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-bench-ui-'));
  const core = spawn(process.execPath, [join(root, 'bin/gatehop.js'), '--egress', 'vpngate', '--api', api, '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--admin-token', TOKEN, '--data-dir', dataDir, '--log-file', 'off', '--log-level', 'info'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const url = await new Promise<string>((res) => core.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    const m = /dashboard: (\S+)/.exec(out);
    if (m) res(m[1]!);
  }));
  const browser = await launchChromium();
  try {
    const sizes = assetSizes();
    const times: number[] = [];
    const sorts: number[] = [];
    const filters: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await ctx.newPage();
      await page.goto(url); // a fresh context each run: nothing cached
      await page.getByRole('tab', { name: 'Nodes' }).waitFor();
      const t0 = await page.evaluate(() => performance.now());
      await page.getByRole('tab', { name: 'Nodes' }).click();
      await page.waitForFunction(() => document.querySelectorAll('table.nodes tbody tr').length === 250, undefined, { timeout: 60_000 });
      const t1 = await page.evaluate(() => performance.now());
      const nav = await page.evaluate(() => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).startTime);
      times.push(t1 - nav);
      if (i === 0) console.log(`(click on Nodes → 250 rows: ${(t1 - t0).toFixed(0)} ms)`);
      // Sorting and filtering 250 rows: click → the first row changed (a double rAF: painted).
      const timed = async (act: () => Promise<void>): Promise<number> => {
        const before = await page.evaluate(() => performance.now());
        await act();
        return (await page.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now())))))) - before;
      };
      sorts.push(await timed(() => page.getByRole('button', { name: 'Sort by Host' }).click()));
      filters.push(await timed(() => page.getByRole('searchbox').fill('public-vpn-12')));
      await ctx.close();
    }
    times.sort((a, b) => a - b);
    const cpu: Record<string, number> = {};
    for (const view of ['Overview', 'Latency']) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await ctx.newPage();
      await page.goto(url);
      await page.getByRole('tab', { name: view }).click();
      const cdp = await ctx.newCDPSession(page);
      await cdp.send('Performance.enable');
      const task = async () => ((await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0);
      const a = await task();
      await page.waitForTimeout(SECONDS * 1000);
      cpu[view] = ((await task()) - a) * (60 / SECONDS);
      await ctx.close();
    }
    console.log('\n| bench:ui (Chromium %s, 250 nodes) | value |', browser.version());
    console.log('|---|---|');
    console.log(`| JS + CSS transferred | ${(sizes.raw / 1024).toFixed(0)} KiB raw, **${(sizes.gzip / 1024).toFixed(0)} KiB gzip** |`);
    console.log(`| navigation → node table with 250 rows (median of ${RUNS}) | **${times[Math.floor(times.length / 2)]!.toFixed(0)} ms** (min ${times[0]!.toFixed(0)}, max ${times[times.length - 1]!.toFixed(0)}) |`);
    const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!.toFixed(0);
    console.log(`| sort 250 rows by a column, click → painted (median) | **${med(sorts)} ms** |`);
    console.log(`| filter 250 rows by text, typed → painted (median) | **${med(filters)} ms** |`);
    console.log(`| main-thread CPU per minute of live updates, Overview | **${(cpu.Overview! * 1000).toFixed(0)} ms** |`);
    console.log(`| main-thread CPU per minute of live updates, Latency chart | **${(cpu.Latency! * 1000).toFixed(0)} ms** |`);
  } finally {
    await browser.close();
    core.kill('SIGTERM');
    list.close();
  }
}

await main();
