/**
 * Proxy front end benchmark: Gatehop (direct egress) vs the same transfer with no proxy vs
 * microsocks, in one run on this machine.
 *   - bulk: one 1 GiB HTTP download with curl (direct, --socks5 through each proxy), 3 runs, best;
 *     also through a bare Node.js pipe() relay (bench/lib/bare-relay.mjs), the ceiling of a relay
 *     on Node's sockets on this machine
 *   - latency: 2,000 sequential SOCKS5 CONNECTs, time from TCP connect start to the first payload byte
 * Usage: npm run bench:proxy [-- --bytes N --connections N --runs N] [-- --short]
 * `--short` (bench:check's version): 256 MiB, 500 connections, best of 2. Figures are saved with
 * bench/lib/figures.ts.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort, startProcess } from './lib/processes.js';
import { curlSpeed as curlSpeedOf, percentile as pct, socksTtfb as ttfb } from './lib/socks-measure.js';
import { FigureSheet, isShort } from './lib/figures.js';
import { coreEnv, coreV8Flags } from './lib/core-flags.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const SHORT = isShort();
const sheet = new FigureSheet('proxy');
const BYTES = arg('bytes', SHORT ? 256 << 20 : 1 << 30);
const curlSpeed = (url: string, proxy?: string): number => curlSpeedOf(url, BYTES, proxy);
const CONNECTIONS = arg('connections', SHORT ? 500 : 2000);
const RUNS = arg('runs', SHORT ? 2 : 3);
const root = resolve(import.meta.dirname, '..');

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function main(): Promise<void> {
  const source = await startProcess(process.execPath, [resolve(root, 'bench/lib/source-server.mjs')]);
  const ports = JSON.parse(source.stdout().split('\n')[0]!) as { http: number; ttfb: number };
  const ghPort = await freePort();
  const msPort = await freePort();
  const gatehop = await startProcess(
    process.execPath,
    [
      ...coreV8Flags(),
      resolve(root, 'bin/gatehop.js'),
      '--egress',
      'direct',
      '--listen',
      `127.0.0.1:${ghPort}`,
      '--admin',
      'off',
      '--log-level',
      'warn',
      '--log-file',
      'off',
      '--data-dir',
      '/tmp/gatehop-bench',
    ],
    ghPort,
    coreEnv(),
  );
  const microsocks = await startProcess('microsocks', ['-i', '127.0.0.1', '-p', String(msPort)], msPort);
  const barePort = await freePort();
  const bare = await startProcess(
    process.execPath,
    [resolve(root, 'bench/lib/bare-relay.mjs'), String(barePort)],
    barePort,
  );
  const url = `http://127.0.0.1:${ports.http}/bytes/${BYTES}`;
  try {
    console.log(`bulk: ${(BYTES / (1 << 20)).toFixed(0)} MiB with curl, best of ${RUNS} (MiB/s)`);
    const rows: Array<[string, number, number]> = [];
    for (const [name, proxy, pid] of [
      ['direct', undefined, undefined],
      ['gatehop', `127.0.0.1:${ghPort}`, gatehop.child.pid],
      ['microsocks', `127.0.0.1:${msPort}`, microsocks.child.pid],
      ['node pipe()', `127.0.0.1:${barePort}`, bare.child.pid],
    ] as const) {
      let best = 0;
      const cpu0 = pid ? cpuSeconds(pid) : 0;
      for (let i = 0; i < RUNS; i++) best = Math.max(best, curlSpeed(url, proxy));
      const cpuPerGiB = pid ? ((cpuSeconds(pid) - cpu0) / RUNS) * ((1 << 30) / BYTES) : 0;
      rows.push([name, best, cpuPerGiB]);
    }
    const direct = rows[0]![1];
    for (const [name, speed, cpu] of rows) {
      console.log(
        `  ${name.padEnd(11)} ${speed.toFixed(0).padStart(6)} MiB/s  ${(speed / direct).toFixed(2)}x direct` +
          (cpu ? `  proxy CPU ${cpu.toFixed(2)} s/GiB` : ''),
      );
      sheet.set(`bulk ${name}`, speed, 'MiB/s', 'higher');
      if (name !== 'direct') sheet.set(`bulk ${name} / direct`, speed / direct, '×', 'higher');
      if (cpu) sheet.set(`bulk ${name} CPU`, cpu, 's/GiB', 'lower');
    }
    console.log(`latency: ${CONNECTIONS} sequential SOCKS5 CONNECTs, connect start → first byte (ms)`);
    const lat: Record<string, { p50: number; p99: number }> = {};
    for (const [name, port] of [
      ['gatehop', ghPort],
      ['microsocks', msPort],
    ] as const) {
      for (let i = 0; i < 100; i++) await ttfb(port, ports.ttfb); // warm-up
      const samples: number[] = [];
      for (let i = 0; i < CONNECTIONS; i++) samples.push(await ttfb(port, ports.ttfb));
      samples.sort((a, b) => a - b);
      lat[name] = { p50: pct(samples, 50), p99: pct(samples, 99) };
      console.log(`  ${name.padEnd(11)} p50 ${lat[name]!.p50.toFixed(3)}  p99 ${lat[name]!.p99.toFixed(3)}`);
      sheet.set(`connect→first byte ${name} p50`, lat[name]!.p50, 'ms', 'lower');
      sheet.set(`connect→first byte ${name} p99`, lat[name]!.p99, 'ms', 'lower');
    }
    console.log(`  gatehop/microsocks p99 ratio ${(lat.gatehop!.p99 / lat.microsocks!.p99).toFixed(2)}`);
    sheet.set('connect→first byte p99 gatehop / microsocks', lat.gatehop!.p99 / lat.microsocks!.p99, '×', 'lower');
    sheet.save();
  } finally {
    for (const p of [source, gatehop, microsocks, bare]) p.child.kill('SIGTERM');
  }
}

await main();
