/**
 * bench:capture (#46): a program under `gatehop run` against the same program through the SOCKS5
 * port, side by side in one run of one core, rounds alternated, two ways:
 *   - direct: the core's egress is the host's own network and the server sits in a namespace of
 *     this bench's behind a veth, so the gateway stack and the proxy are all that is measured;
 *   - tunnel: the core runs over the rig's OpenVPN node (what a user's download goes through).
 * Each: a bulk HTTP download (curl) in MiB/s both ways and the ratio (target: run ≥ 0.9×
 * SOCKS5), the core's CPU seconds per GiB moved both ways (what the gateway stack adds); direct
 * also: time to the first byte of a new TCP connection, p50/p99 over sequential connects (connect
 * and, for SOCKS5, its handshake, to a server that sends one byte at once).
 * Root: the namespaces, and /dev/net/tun (as root it needs no 0666).
 * Usage: npm run bench:capture [-- --mib N --rounds N --connects N --only direct|tunnel] [--short]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { statusSchema } from '../core/api/index.js';
import { apiRequest } from '../test/helpers/admin-client.js';
import { until } from '../test/helpers/fds.js';
import { NetNs, waitForLine } from '../test/helpers/netns.js';
import { Rig } from '../test/rig/rig.js';
import { writeRigCliConfig } from '../test/helpers/rig-app.js';
import { FigureSheet, isShort } from './lib/figures.js';
import { coreEnv, coreV8Flags } from './lib/core-flags.js';
import { freePort, startProcess } from './lib/processes.js';
import { curlSpeed, percentile, socksTtfb } from './lib/socks-measure.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
const MIB = arg('mib', isShort() ? 256 : 1024);
const TUNNEL_MIB = arg('tunnel-mib', isShort() ? 64 : 256);
const ROUNDS = arg('rounds', 3);
const CONNECTS = arg('connects', isShort() ? 200 : 1000);
const root = resolve(import.meta.dirname, '..');
const BIN = join(root, 'bin/gatehop.js');

if (process.getuid?.() !== 0) {
  console.error('bench:capture needs root (namespaces for the servers)');
  process.exit(2);
}
if (
  !existsSync(join(root, 'native/build/Release/gatehop-capture')) ||
  !existsSync(join(root, 'dist/core/app/cli.js'))
) {
  console.error('bench:capture: build first (npm run build; npm run build:native)');
  process.exit(2);
}

/** The core's CPU seconds so far (user + system, its threads included). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Core {
  pid: number;
  proxyPort: number;
  runArgs: string[];
  stop(): void;
}

/** A core as a user runs it (`gatehop`), with `args`; resolved once `ready` says so. */
async function startCore(dir: string, args: string[], ready?: (adminPort: number) => Promise<void>): Promise<Core> {
  const proxyPort = await freePort();
  const adminPort = await freePort();
  const { child } = await startProcess(
    process.execPath,
    [
      ...coreV8Flags(),
      ...(process.env.GATEHOP_BENCH_PROFILE
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.GATEHOP_BENCH_PROFILE}`]
        : []),
      BIN,
      '--listen',
      `127.0.0.1:${proxyPort}`,
      '--admin',
      `127.0.0.1:${adminPort}`,
      '--data-dir',
      dir,
      '--log-file',
      'off',
      '--log-level',
      'warn',
      ...args,
    ],
    undefined,
    coreEnv(),
  );
  await ready?.(adminPort);
  return {
    pid: child.pid!,
    proxyPort,
    runArgs: [BIN, 'run', '--data-dir', dir, '--admin', `127.0.0.1:${adminPort}`, '--'],
    stop: () => void child.kill('SIGTERM'),
  };
}

/** ROUNDS downloads of `bytes` from `url` each way, alternated: MiB/s and the core's CPU s/GiB. */
function downloads(
  core: Core,
  url: string,
  bytes: number,
): { socks: number; run: number; socksCpu: number; runCpu: number } {
  const speeds = { socks: [] as number[], run: [] as number[] };
  const cpu = { socks: [] as number[], run: [] as number[] };
  const gib = bytes / 2 ** 30;
  for (let round = 0; round < ROUNDS; round++) {
    let c0 = cpuSeconds(core.pid);
    speeds.socks.push(curlSpeed(url, bytes, `127.0.0.1:${core.proxyPort}`));
    cpu.socks.push((cpuSeconds(core.pid) - c0) / gib);
    c0 = cpuSeconds(core.pid);
    const out = execFileSync(
      process.execPath,
      [...core.runArgs, 'curl', '-s', '-o', '/dev/null', '-w', '%{speed_download} %{size_download}', url],
      { encoding: 'utf8' },
    );
    const [speed, size] = out.trim().split(' ').map(Number);
    if (size !== bytes) throw new Error(`short transfer through run: ${size} of ${bytes}`);
    speeds.run.push(speed! / (1 << 20));
    cpu.run.push((cpuSeconds(core.pid) - c0) / gib);
    console.log(
      `  round ${round + 1}: SOCKS5 ${speeds.socks.at(-1)!.toFixed(1)} MiB/s (${cpu.socks.at(-1)!.toFixed(2)} CPU s/GiB)  ` +
        `run ${speeds.run.at(-1)!.toFixed(1)} MiB/s (${cpu.run.at(-1)!.toFixed(2)} CPU s/GiB)`,
    );
  }
  return { socks: median(speeds.socks), run: median(speeds.run), socksCpu: median(cpu.socks), runCpu: median(cpu.run) };
}

function report(sheet: FigureSheet, way: string, mib: number, d: ReturnType<typeof downloads>): void {
  console.log(`\n${way}: bulk download, ${mib} MiB, median of ${ROUNDS}:`);
  console.log(
    `  SOCKS5 ${d.socks.toFixed(1)} MiB/s   run ${d.run.toFixed(1)} MiB/s   run/SOCKS5 ${(d.run / d.socks).toFixed(2)}× (target ≥ 0.9×)`,
  );
  console.log(
    `  core CPU per GiB: SOCKS5 ${d.socksCpu.toFixed(2)} s   run ${d.runCpu.toFixed(2)} s (the gateway stack: +${(d.runCpu - d.socksCpu).toFixed(2)} s)`,
  );
  sheet.set(`${way}.socks.MiBps`, d.socks, 'MiB/s', 'higher');
  sheet.set(`${way}.run.MiBps`, d.run, 'MiB/s', 'higher');
  sheet.set(`${way}.run/socks`, d.run / d.socks, '×', 'higher');
  sheet.set(`${way}.socks.cpuSecPerGiB`, d.socksCpu, 's/GiB', 'lower');
  sheet.set(`${way}.run.cpuSecPerGiB`, d.runCpu, 's/GiB', 'lower');
}

/** The gateway against the proxy with nothing else in the way. */
async function direct(sheet: FigureSheet): Promise<void> {
  const ns = new NetNs();
  const dir = mkdtempSync(join(tmpdir(), 'gh-bench-capture-'));
  const tag = String(process.pid % 100000);
  let core: Core | null = null;
  try {
    // The source lives in its own namespace behind a veth: reachable from the host (the proxy's
    // DIRECT dial) and so from the captured program (whose own 127.0.0.1 is its namespace's).
    execFileSync('ip', ['link', 'add', `ghb${tag}h`, 'type', 'veth', 'peer', 'name', `ghb${tag}n`, 'netns', ns.name]);
    execFileSync('ip', ['addr', 'add', '10.213.0.1/30', 'dev', `ghb${tag}h`]);
    execFileSync('ip', ['link', 'set', `ghb${tag}h`, 'up']);
    ns.exec(['ip', 'addr', 'add', '10.213.0.2/30', 'dev', `ghb${tag}n`]);
    ns.exec(['ip', 'link', 'set', `ghb${tag}n`, 'up']);
    const source = ns.spawn([process.execPath, join(root, 'bench/lib/source-server.mjs'), '10.213.0.2']);
    const ports = JSON.parse(await waitForLine(source, /^\{/)) as { http: number; ttfb: number };
    core = await startCore(dir, ['--egress', 'direct']);
    const bytes = MIB << 20;
    console.log('direct (the gateway stack against the proxy, nothing else in the way):');
    report(sheet, 'direct', MIB, downloads(core, `http://10.213.0.2:${ports.http}/bytes/${bytes}`, bytes));

    // Time to the first byte of new connections: through the proxy from here, and from a program under run.
    const socksTimes: number[] = [];
    for (let i = 0; i < CONNECTS; i++) socksTimes.push(await socksTtfb(core.proxyPort, ports.ttfb, '10.213.0.2'));
    const probe = join(dir, 'ttfb.cjs');
    writeFileSync(
      probe,
      `const net = require('node:net');
const [host, port, n] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const once = () => new Promise((resolve, reject) => {
  const t0 = process.hrtime.bigint();
  const s = net.connect({ host, port, noDelay: true });
  s.once('data', () => { s.destroy(); resolve(Number(process.hrtime.bigint() - t0) / 1e6); });
  s.once('error', reject);
});
(async () => { const out = []; for (let i = 0; i < n; i++) out.push(await once()); console.log(JSON.stringify(out)); })();
`,
    );
    const runTimes = JSON.parse(
      execFileSync(
        process.execPath,
        [...core.runArgs, process.execPath, probe, '10.213.0.2', String(ports.ttfb), String(CONNECTS)],
        { encoding: 'utf8' },
      ),
    ) as number[];
    socksTimes.sort((a, b) => a - b);
    runTimes.sort((a, b) => a - b);
    console.log(`  time to the first byte of a new connection, ${CONNECTS} sequential:`);
    for (const [label, t] of [
      ['SOCKS5', socksTimes],
      ['run', runTimes],
    ] as const) {
      console.log(
        `    ${label.padEnd(6)} p50 ${percentile(t, 50).toFixed(2)} ms   p99 ${percentile(t, 99).toFixed(2)} ms`,
      );
      sheet.set(`direct.${label === 'SOCKS5' ? 'socks' : 'run'}.ttfb.p50`, percentile(t, 50), 'ms', 'lower');
      sheet.set(`direct.${label === 'SOCKS5' ? 'socks' : 'run'}.ttfb.p99`, percentile(t, 99), 'ms', 'lower');
    }
  } finally {
    core?.stop();
    ns.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same over a real tunnel: the rig's OpenVPN node (GCM over UDP). */
async function tunnel(sheet: FigureSheet): Promise<void> {
  const rig = await Rig.up({ nodes: 0, openvpn: ['gcm-udp'], bigMib: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'gh-bench-capture-'));
  let core: Core | null = null;
  try {
    const config = writeRigCliConfig(rig, join(dir, 'config.yaml'), { mode: 'global' });
    core = await startCore(
      dir,
      ['--egress', 'vpngate', '--api', rig.state.apiUrl, '--config', config],
      async (admin) => {
        const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
        await until(
          async () =>
            statusSchema.parse((await apiRequest(admin, 'GET', '/status', { token })).json()).active?.nodeId ??
            undefined,
          90_000,
          'a tunnel up',
        );
      },
    );
    const bytes = TUNNEL_MIB << 20;
    console.log('\ntunnel (both through the rig’s OpenVPN node, GCM over UDP):');
    report(sheet, 'tunnel', TUNNEL_MIB, downloads(core, rig.url(`/bytes/${bytes}`), bytes));
  } finally {
    core?.stop();
    await rig.down();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sheet = new FigureSheet('capture');
if (only !== 'tunnel') await direct(sheet);
if (only !== 'direct') await tunnel(sheet);
sheet.save();
