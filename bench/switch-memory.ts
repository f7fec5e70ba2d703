/**
 * npm run bench:switch-memory [-- --switches 12 --period 20] [-- --short]
 *
 * Memory per switch (#44), the short version of the soak's memory figures: the core (the CLI,
 * tunnels in worker threads) on the rig, a user pick every `period` seconds cycling through five
 * nodes, each pick followed by two rate-limited downloads and ten short requests through the new
 * node. The core's memory is read from outside at the same phase of every pick (just before the
 * next), by what holds it (bench/lib/smaps.ts: glibc's main heap and thread arenas, V8's pages,
 * WebAssembly memories…), with its JS heap and the worker pool's counts. The figure is the growth
 * from switch 3 (the pool full, everything warmed) to the last. `--short`: 8 switches of 15 s,
 * growth from switch 3. `--balance 2` runs two balance members as the soak does (a pick pins one
 * node; back to auto at the next pick's start). `--log FILE --log-level debug` keeps the core's log
 * (a tunnel thread's buffer collections are logged at info). Root only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { statusSchema, type Status } from '../core/api/index.js';
import { apiRequest } from '../test/helpers/admin-client.js';
import { freePort } from '../test/helpers/ports.js';
import { socksGet } from '../test/helpers/socks-http.js';
import { Rig } from '../test/rig/rig.js';
import { FigureSheet } from './lib/figures.js';
import { MEMORY_KINDS, memoryByKind, type MemoryKind } from './lib/smaps.js';
import { coreEnv, coreV8Flags } from './lib/core-flags.js';

const { values } = parseArgs({
  options: {
    switches: { type: 'string' },
    period: { type: 'string' },
    from: { type: 'string', default: '3' },
    short: { type: 'boolean', default: false },
    log: { type: 'string' },
    'log-level': { type: 'string', default: 'info' },
    balance: { type: 'string', default: '1' },
  },
});
const SWITCHES = Number(values.switches ?? (values.short ? 8 : 12));
const PERIOD_MS = Number(values.period ?? (values.short ? 15 : 20)) * 1000;
const FROM = Number(values.from);
if (!(SWITCHES > FROM && FROM >= 1)) throw new Error('--switches must be more than --from (3)');
const TOKEN = 'switch-memory-token-0123456789abcdef';
const ROOT = resolve(import.meta.dirname, '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (b: number) => Math.round((b / (1 << 20)) * 10) / 10;

interface Sample {
  switchNo: number;
  node: string;
  rssMb: number;
  heapMb: number;
  externalMb: number;
  kinds: Record<MemoryKind, { mb: number; mappings: number }>;
  tunnels: number;
  threadsCreated: number;
  threadsReused: number;
}

const rig = await Rig.up({ nodes: 3, openvpn: ['gcm-udp', 'cbc-tcp'], bigMib: 4 });
const dataDir = mkdtempSync(join(tmpdir(), 'gh-switch-mem-'));
let core: ChildProcess | null = null;
try {
  const proxyPort = await freePort();
  const adminPort = await freePort();
  const configPath = join(dataDir, 'gatehop.yaml');
  writeFileSync(
    configPath,
    [
      'switching:',
      '  healthDnsName: files.test',
      'tunnel: { threads: true }',
      `groups: { balance: { tunnels: ${Number(values.balance)} } }`,
    ].join('\n'),
  );
  core = spawn(
    process.execPath,
    [
      ...coreV8Flags(),
      join(ROOT, 'bin/gatehop.js'),
      ...['--egress', 'vpngate', '--api', rig.state.apiUrl, '--allow-private-nodes', '--mode', 'global'],
      ...['--listen', `127.0.0.1:${proxyPort}`, '--admin', `127.0.0.1:${adminPort}`, '--admin-token', TOKEN],
      ...['--data-dir', dataDir, '--config', configPath, '--log-level', values['log-level']],
      ...['--log-file', values.log ?? join(dataDir, 'gatehop.log')],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: coreEnv() },
  );
  let out = '';
  core.stdout!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-10_000)));
  core.stderr!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-10_000)));
  const api = (method: string, path: string, body?: object) =>
    apiRequest(adminPort, method, path, { token: TOKEN, ...(body ? { body } : {}) });
  const status = async (): Promise<Status> => statusSchema.parse((await api('GET', '/status')).json());
  const until = async (what: string, fn: () => Promise<boolean>, ms: number): Promise<void> => {
    const deadline = Date.now() + ms;
    while (!(await fn().catch(() => false))) {
      if (core!.exitCode !== null) throw new Error(`the core exited ${core!.exitCode}: ${out}`);
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms: ${out.slice(-2000)}`);
      await sleep(200);
    }
  };
  await until('a tunnel up', async () => (await status()).active !== null, 120_000);
  const pid = core.pid!;

  const metric = (text: string, name: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.trim().split(/\s+/).at(-1)) : 0;
  };
  const sample = async (switchNo: number, node: string): Promise<Sample> => {
    const [m, s] = await Promise.all([api('GET', '/metrics').then((r) => r.text), status()]);
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    return {
      switchNo,
      node,
      rssMb: mb(rss),
      heapMb: mb(metric(m, 'gatehop_nodejs_heap_size_used_bytes')),
      externalMb: mb(metric(m, 'gatehop_nodejs_external_memory_bytes')),
      kinds: memoryByKind(pid),
      tunnels: s.tunnels.length,
      threadsCreated: s.tunnelWorkers.threadsCreated,
      threadsReused: s.tunnelWorkers.threadsReused,
    };
  };

  const download = async (): Promise<void> => {
    const file = join(dataDir, `dl-${Math.random().toString(36).slice(2)}`);
    const code = await new Promise<number | null>((r) =>
      spawn(
        'curl',
        [
          ...['-s', '-o', file, '--max-time', '60', '--limit-rate', '800k'],
          ...['--socks5-hostname', `127.0.0.1:${proxyPort}`, `http://${rig.state.inetAddress}/big`],
        ],
        { stdio: 'ignore' },
      ).once('exit', r),
    );
    const ok = code === 0 && createHash('sha256').update(readFileSync(file)).digest('hex') === rig.state.bigSha256;
    rmSync(file, { force: true });
    if (!ok) throw new Error(`a download through the tunnel failed (curl ${code})`);
  };

  const nodes = rig.state.nodes.map((n) => n.name);
  const samples: Sample[] = [];
  console.log(
    `switch memory: ${SWITCHES} picks every ${PERIOD_MS / 1000} s through ${nodes.length} nodes; ` +
      'each followed by 2 rate-limited downloads (4 MiB) and 10 short requests; sampled just before the next pick\n',
  );
  const kindCols = MEMORY_KINDS.map((k) => k.padStart(9).slice(-9)).join(' ');
  console.log(` pick node           RSS   heap  extern | ${kindCols} | tunnels threads new/reused`);
  for (let i = 1; i <= SWITCHES; i++) {
    const t0 = Date.now();
    const active = (await status()).active?.nodeId;
    const target = nodes.filter((n) => n !== active)[i % (nodes.length - 1)]!;
    const r = await api('POST', '/switch', { nodeId: target, confirm: true });
    if (r.status >= 300) throw new Error(`switch to ${target}: ${r.status} ${r.text}`);
    await until(`${target} active`, async () => (await status()).active?.nodeId === target, 60_000);
    await Promise.all([
      download(),
      download(),
      (async () => {
        for (let k = 0; k < 10; k++) await socksGet(proxyPort, 'files.test', `/bytes/${1000 + k}`, 20_000);
      })(),
    ]);
    if (Number(values.balance) > 1) {
      // Back to auto, as the soak's user does a minute after a pick: the balance members come up again.
      await api('POST', '/mode', { auto: true });
      await until('the balance members', async () => (await status()).members.length >= Number(values.balance), 30_000);
    }
    await sleep(Math.max(0, t0 + PERIOD_MS - 1_000 - Date.now()));
    const s = await sample(i, target);
    samples.push(s);
    const kinds = MEMORY_KINDS.map((k) => s.kinds[k].mb.toFixed(1).padStart(9)).join(' ');
    console.log(
      ` ${String(i).padStart(4)} ${target.padEnd(12)} ${s.rssMb.toFixed(1).padStart(6)} ${s.heapMb.toFixed(1).padStart(6)} ${s.externalMb
        .toFixed(1)
        .padStart(
          7,
        )} | ${kinds} | ${String(s.tunnels).padStart(7)} ${String(s.threadsCreated).padStart(7)}/${s.threadsReused}`,
    );
    await sleep(Math.max(0, t0 + PERIOD_MS - Date.now()));
  }

  const a = samples[FROM - 1]!;
  const b = samples.at(-1)!;
  const growth = (b.rssMb - a.rssMb) / a.rssMb;
  console.log(
    `\nRSS after switch ${FROM} → ${b.switchNo}: ${a.rssMb} → ${b.rssMb} MB (${(growth * 100).toFixed(1)} %, ` +
      `${((b.rssMb - a.rssMb) / (b.switchNo - FROM)).toFixed(2)} MB per switch)`,
  );
  console.log('by kind (MB, mappings):');
  for (const k of MEMORY_KINDS)
    console.log(
      `  ${k.padEnd(16)} ${a.kinds[k].mb.toFixed(1).padStart(6)} → ${b.kinds[k].mb.toFixed(1).padStart(6)} ` +
        `(${(b.kinds[k].mb - a.kinds[k].mb >= 0 ? '+' : '') + (b.kinds[k].mb - a.kinds[k].mb).toFixed(1)})   ` +
        `${a.kinds[k].mappings} → ${b.kinds[k].mappings} mappings`,
    );
  const sheet = new FigureSheet('switch-memory');
  sheet.set(`RSS after switch ${FROM}`, a.rssMb, 'MB', 'lower');
  sheet.set('RSS after the last switch', b.rssMb, 'MB', 'lower');
  sheet.set(`RSS growth from switch ${FROM}`, growth * 100, '%', 'lower');
  sheet.set('RSS per switch', (b.rssMb - a.rssMb) / (b.switchNo - FROM), 'MB', 'lower');
  for (const k of MEMORY_KINDS) sheet.set(`${k} growth`, b.kinds[k].mb - a.kinds[k].mb, 'MB', 'lower');
  sheet.set('threads created', b.threadsCreated, 'threads', 'lower');
  sheet.save();
} finally {
  core?.kill('SIGTERM');
  rig.down();
  rmSync(dataDir, { recursive: true, force: true });
}
