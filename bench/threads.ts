/**
 * Tunnels in worker threads against tunnels on the main thread (#16), same rig, same run:
 *   1. one tunnel's download throughput per server, workers and in-thread alternated twice, with
 *      the main event loop's delay (this process is the main thread in both modes) meanwhile;
 *   2. two tunnels to two servers at full speed at once against one alone (aggregate ratio);
 *   3. RSS with 1,000 concurrent sessions through one tunnel (each fetched a response and stays open).
 * Root only. Usage: npm run bench:threads [-- --mib N] [--sessions N]
 */
import '../test/setup/tunnel-worker.js';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { silentLogger } from '../core/common/index.js';
import { openTunnel, type Tunnel } from '../core/egress/index.js';
import { Rig } from '../test/rig/rig.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const MIB = arg('mib', 64);
const SESSIONS = arg('sessions', 1000);
const ROUNDS = arg('rounds', 3);
/** --parts 1,2,3: which of the three parts to run. */
const PARTS = (process.argv.includes('--parts') ? process.argv[process.argv.indexOf('--parts') + 1]! : '1,2,3').split(
  ',',
);
const logger = silentLogger();

async function open(rig: Rig, node: string, proto: 'tcp' | 'udp', threads: boolean, tag: string): Promise<Tunnel> {
  const n = rig.node(node);
  return openTunnel({
    id: `bench-${tag}-${node}-${proto}`,
    nodeId: n.name,
    link: { protocol: 'openvpn', profileText: readFileSync(n.profiles[proto]!, 'utf8') },
    logger,
    threads,
    unresponsiveMs: 0,
  });
}

/** One GET of /big; MiB/s. */
async function download(t: Tunnel, bytes: number): Promise<number> {
  const c = await t.connectTcp('files.test', 80);
  let n = 0;
  const t0 = performance.now();
  c.stream.on('data', (d: Buffer) => (n += d.length));
  c.stream.write('GET /big HTTP/1.1\r\nHost: files.test\r\nConnection: close\r\n\r\n');
  await new Promise<void>((resolve, reject) => {
    c.stream.once('end', () => resolve());
    c.stream.once('error', reject);
  });
  if (n < bytes) throw new Error(`short download (${n} of ${bytes})`);
  return n / ((performance.now() - t0) / 1000) / (1 << 20);
}

/** Busy and total jiffies of the whole machine (/proc/stat), to tell our CPU from the servers'. */
function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + f[4]!;
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/**
 * Runs fn with the main loop's delay recorded (p50/p99 beyond the 10 ms resolution, ms), and the
 * CPU it cost: this process (all its threads) and the whole machine (rig servers included), in cores.
 */
async function withLoopDelay<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; p50: number; p99: number; ourCores: number; machineCores: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const m0 = machineTicks();
  try {
    const value = await fn();
    const secs = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    const m1 = machineTicks();
    const beyond = (ns: number): number => Math.max(0, ns / 1e6 - 10);
    const cores = availableParallelism();
    return {
      value,
      p50: beyond(h.percentile(50)),
      p99: beyond(h.percentile(99)),
      ourCores: (c.user + c.system) / 1e6 / secs,
      machineCores: ((m1.busy - m0.busy) / (m1.total - m0.total)) * cores,
    };
  } finally {
    h.disable();
  }
}

async function oneTunnel(rig: Rig, node: string, proto: 'tcp' | 'udp', threads: boolean) {
  const t = await open(rig, node, proto, threads, 'one');
  try {
    await download(t, rig.state.bigBytes); // warm-up: TCP windows, JIT
    const r = await withLoopDelay(() => download(t, rig.state.bigBytes));
    return { mibs: r.value, p50: r.p50, p99: r.p99, ourCores: r.ourCores, machineCores: r.machineCores };
  } finally {
    await t.close();
  }
}

async function twoAtOnce(rig: Rig, threads: boolean) {
  const a = await open(rig, 'n1', 'udp', threads, 'pair');
  const b = await open(rig, 'n2', 'udp', threads, 'pair');
  try {
    await Promise.all([download(a, rig.state.bigBytes), download(b, rig.state.bigBytes)]); // warm-up
    const one = await withLoopDelay(() => download(a, rig.state.bigBytes));
    const t0 = performance.now();
    const r = await withLoopDelay(() =>
      Promise.all([download(a, rig.state.bigBytes), download(b, rig.state.bigBytes)]),
    );
    const together = (2 * rig.state.bigBytes) / ((performance.now() - t0) / 1000) / (1 << 20);
    return {
      alone: one.value,
      together,
      p99: r.p99,
      aloneCpu: `${one.ourCores.toFixed(2)} / ${one.machineCores.toFixed(2)}`,
      togetherCpu: `${r.ourCores.toFixed(2)} / ${r.machineCores.toFixed(2)}`,
    };
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

/** RSS with `count` sessions open through one tunnel, each having fetched a small response. */
async function manySessions(
  rig: Rig,
  threads: boolean,
  count: number,
): Promise<{ rssMb: number; baseMb: number; opened: number }> {
  global.gc?.();
  const baseMb = process.memoryUsage().rss / (1 << 20);
  const t = await open(rig, 'n1', 'udp', threads, 'many');
  const streams: Array<{ destroy(): void }> = [];
  try {
    let opened = 0;
    for (let i = 0; i < count; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, count - i) }, async () => {
          const c = await t.connectTcp('files.test', 80, { timeoutMs: 30_000 });
          streams.push(c.stream);
          await new Promise<void>((resolve, reject) => {
            let got = Buffer.alloc(0);
            c.stream.on('data', (d: Buffer) => {
              got = Buffer.concat([got, d]);
              const body = got.indexOf('\r\n\r\n');
              if (body >= 0 && got.length - body - 4 >= 1024) resolve();
            });
            c.stream.once('error', reject);
            c.stream.write('GET /bytes/1024 HTTP/1.1\r\nHost: files.test\r\n\r\n');
            setTimeout(() => reject(new Error('no response in 20 s')), 20_000).unref();
          });
          opened++;
        }),
      );
    }
    await new Promise((r) => setTimeout(r, 1_000));
    return { rssMb: process.memoryUsage().rss / (1 << 20), baseMb, opened };
  } finally {
    for (const s of streams) s.destroy();
    await t.close();
  }
}

const rig = await Rig.up({ nodes: 2, openvpn: ['gcm-udp'], bigMib: MIB });
try {
  const cases: Array<[string, 'tcp' | 'udp', string]> = [
    ['n1', 'udp', 'SoftEther 5.01 UDP'],
    ['n1', 'tcp', 'SoftEther 5.01 TCP'],
    ['o1', 'udp', 'OpenVPN 2.6 GCM UDP'],
  ];
  if (PARTS.includes('1')) {
    console.log(`threads benchmark: ${MIB} MiB downloads; workers and in-thread alternated, ${ROUNDS} rounds (median)`);
    console.log(
      `CPU in cores (this machine has ${availableParallelism()}): ours = this process, all threads; machine = everything, the rig's servers included`,
    );
    console.log(
      '| server | workers MiB/s | in-thread MiB/s | ratio (median) | main loop p99 workers / in-thread, ms | CPU ours / machine, workers | in-thread |',
    );
    console.log('|---|---|---|---|---|---|---|');
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1]! : null; // e.g. n1-tcp
    for (const [node, proto, label] of cases.filter(([n, p]) => !only || only === `${n}-${p}`)) {
      const w: Awaited<ReturnType<typeof oneTunnel>>[] = [];
      const m: Awaited<ReturnType<typeof oneTunnel>>[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        w.push(await oneTunnel(rig, node, proto, true));
        m.push(await oneTunnel(rig, node, proto, false));
      }
      const cpu = (xs: typeof w): string =>
        `${med(xs.map((x) => x.ourCores)).toFixed(2)} / ${med(xs.map((x) => x.machineCores)).toFixed(2)}`;
      console.log(
        `| ${label} | ${w.map((x) => x.mibs.toFixed(1)).join(', ')} | ${m.map((x) => x.mibs.toFixed(1)).join(', ')} | **${(med(w.map((x) => x.mibs)) / med(m.map((x) => x.mibs))).toFixed(2)}×** | ${med(w.map((x) => x.p99)).toFixed(1)} / ${med(m.map((x) => x.p99)).toFixed(1)} | ${cpu(w)} | ${cpu(m)} |`,
      );
    }
  }
  if (PARTS.includes('2')) {
    console.log(
      '\n| two tunnels (SoftEther UDP, two servers) | one alone MiB/s | both at once MiB/s | aggregate ratio | main loop p99, ms | CPU ours / machine: alone | both |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const threads of [true, false]) {
      const r = await twoAtOnce(rig, threads);
      console.log(
        `| ${threads ? 'workers' : 'in-thread'} | ${r.alone.toFixed(1)} | ${r.together.toFixed(1)} | **${(r.together / r.alone).toFixed(2)}×** | ${r.p99.toFixed(1)} | ${r.aloneCpu} | ${r.togetherCpu} |`,
      );
    }
  }
  if (PARTS.includes('3')) {
    console.log(`\n| ${SESSIONS} sessions through one tunnel | sessions open | RSS before, MB | RSS with them, MB |`);
    console.log('|---|---|---|---|');
    for (const threads of [true, false]) {
      const r = await manySessions(rig, threads, SESSIONS);
      console.log(
        `| ${threads ? 'workers' : 'in-thread'} | ${r.opened} | ${r.baseMb.toFixed(0)} | **${r.rssMb.toFixed(0)}** |`,
      );
    }
  }
} finally {
  await rig.down();
}
