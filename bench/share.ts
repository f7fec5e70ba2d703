/**
 * bench:share (#63): "Share with this network" under load. One core on the rig's OpenVPN node
 * (global mode), this machine's own download through the loopback proxy beside two "phones" (each
 * a namespace behind a veth, as a device on the home LAN) through the shared listener with their
 * own generated passwords. Printed side by side in one run:
 *   - each alone: MiB/s and the core's CPU seconds per GiB: this machine through the loopback
 *     listener, and phone 1 through the main listener (open on the LAN for this bench) and through
 *     the shared one, over the same veth: that pair is what the shared listener costs;
 *   - all three at once through the one tunnel: each one's MiB/s, their sum, and the sessions and
 *     bytes the core counted per device (what the window shows).
 * Root: the namespaces and the rig.
 * Usage: npm run bench:share [-- --mib N --rounds N] [--short]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { statusSchema } from '../core/api/index.js';
import { apiRequest } from '../test/helpers/admin-client.js';
import { until } from '../test/helpers/fds.js';
import { phoneOnThisMachine, type NetNs } from '../test/helpers/netns.js';
import { writeRigCliConfig } from '../test/helpers/rig-app.js';
import { Rig } from '../test/rig/rig.js';
import { coreEnv, coreV8Flags } from './lib/core-flags.js';
import { FigureSheet, isShort } from './lib/figures.js';
import { freePort, startProcess } from './lib/processes.js';

const run = promisify(execFile);
const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const MIB = arg('mib', isShort() ? 48 : 192);
const ROUNDS = arg('rounds', 3);
const root = resolve(import.meta.dirname, '..');
const BIN = join(root, 'bin/gatehop.js');
const SHARE_PORT = 1081;

if (process.getuid?.() !== 0) {
  console.error('bench:share needs root (namespaces for the phones, the rig)');
  process.exit(2);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Client {
  label: string;
  /** The curl command line before the URL: a namespace's, through the shared listener, or this machine's. */
  curl: string[];
}

/** One download of `bytes`: MiB/s (a short transfer throws). */
async function download(c: Client, url: string, bytes: number): Promise<number> {
  const { stdout } = await run(c.curl[0]!, [
    ...c.curl.slice(1),
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{speed_download} %{size_download}',
    url,
  ]);
  const [speed, size] = stdout.trim().split(' ').map(Number);
  if (size !== bytes) throw new Error(`${c.label}: short transfer, ${size} of ${bytes}`);
  return speed! / (1 << 20);
}

const rig = await Rig.up({ nodes: 0, openvpn: ['gcm-udp'], bigMib: 1 });
const dir = mkdtempSync(join(tmpdir(), 'gh-bench-share-'));
const phones: NetNs[] = [];
let stop = (): void => {};
const sheet = new FigureSheet('share');
try {
  const proxyPort = await freePort();
  const adminPort = await freePort();
  const config = writeRigCliConfig(rig, join(dir, 'config.yaml'), { mode: 'global', share: { port: SHARE_PORT } });
  const { child } = await startProcess(
    process.execPath,
    [
      ...coreV8Flags(),
      BIN,
      // On every address, open (this machine's networks only): the phone can reach the main
      // listener over the same veth, the peer that isolates what the shared listener costs.
      '--listen',
      `0.0.0.0:${proxyPort}`,
      '--no-auth',
      '--admin',
      `127.0.0.1:${adminPort}`,
      '--data-dir',
      dir,
      '--log-file',
      'off',
      '--log-level',
      'warn',
      '--egress',
      'vpngate',
      '--api',
      rig.state.apiUrl,
      '--config',
      config,
    ],
    undefined,
    coreEnv(),
  );
  stop = () => void child.kill('SIGTERM');
  const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
  const api = async (method: string, path: string, body?: object) =>
    (await apiRequest(adminPort, method, path, { token, ...(body ? { body } : {}) })).json<Record<string, unknown>>();
  await until(
    async () => statusSchema.parse(await api('GET', '/status')).active?.nodeId ?? undefined,
    90_000,
    'a tunnel up',
  );
  await api('PUT', '/share', { enabled: true });
  // Two phones, each on a LAN of its own with this machine (a veth each): this machine's networks.
  const tag = process.pid % 10_000;
  const clients: Client[] = [{ label: 'this machine', curl: ['curl', '--socks5-hostname', `127.0.0.1:${proxyPort}`] }];
  for (const n of [1, 2]) {
    const subnet = `10.${214 + n}.${tag % 250}`;
    const ns = phoneOnThisMachine(subnet);
    phones.push(ns);
    const d = (await api('POST', '/share/devices', { name: `phone ${n}` })) as { id: string; proxyUrl: string };
    const secret = d.proxyUrl.split(':')[2]!.split('@')[0]!;
    if (n === 1)
      clients.push({
        label: 'phone 1 → main listener',
        curl: ['ip', 'netns', 'exec', ns.name, 'curl', '--socks5-hostname', `${subnet}.1:${proxyPort}`],
      });
    clients.push({
      label: `phone ${n}`,
      curl: [
        'ip',
        'netns',
        'exec',
        ns.name,
        'curl',
        '--socks5-hostname',
        `${d.id}:${secret}@${subnet}.1:${SHARE_PORT}`,
      ],
    });
  }
  const bytes = MIB << 20;
  const url = rig.url(`/bytes/${bytes}`);
  const gib = bytes / 2 ** 30;

  console.log(`bench:share — ${MIB} MiB downloads through the rig's OpenVPN node (GCM over UDP), median of ${ROUNDS}`);
  console.log('\neach alone:');
  const alone = new Map<string, { speed: number[]; cpu: number[] }>();
  // Alternated, A B C then C B A: no one of them always runs first or last.
  for (let round = 0; round < ROUNDS; round++)
    for (const c of round % 2 ? clients.slice(0, 3).reverse() : clients.slice(0, 3)) {
      const c0 = cpuSeconds(child.pid!);
      const speed = await download(c, url, bytes);
      const cpu = (cpuSeconds(child.pid!) - c0) / gib;
      const m = alone.get(c.label) ?? { speed: [], cpu: [] };
      m.speed.push(speed);
      m.cpu.push(cpu);
      alone.set(c.label, m);
    }
  const keys: Record<string, string> = {
    'this machine': 'alone.host',
    'phone 1 → main listener': 'alone.phoneMain',
    'phone 1': 'alone.phoneShared',
  };
  for (const [label, m] of alone) {
    console.log(
      `  ${label.padEnd(24)} ${median(m.speed).toFixed(1)} MiB/s   core ${median(m.cpu).toFixed(2)} CPU s/GiB`,
    );
    sheet.set(`${keys[label]}.MiBps`, median(m.speed), 'MiB/s', 'higher');
    sheet.set(`${keys[label]}.cpuSecPerGiB`, median(m.cpu), 's/GiB', 'lower');
  }
  const main = alone.get('phone 1 → main listener')!;
  const phone = alone.get('phone 1')!;
  console.log(
    `  the shared listener against the main one, same phone, same LAN: ${(median(phone.speed) / median(main.speed)).toFixed(2)}× the speed, ` +
      `${(median(phone.cpu) - median(main.cpu)).toFixed(2)} CPU s/GiB more`,
  );
  sheet.set('shared/main.speed', median(phone.speed) / median(main.speed), '×', 'higher');

  console.log('\nall three at once through the one tunnel:');
  const at = clients.filter((c) => c.label !== 'phone 1 → main listener');
  const together: number[][] = at.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const speeds = await Promise.all(at.map((c) => download(c, url, bytes)));
    speeds.forEach((s, i) => together[i]!.push(s));
  }
  let sum = 0;
  at.forEach((c, i) => {
    const m = median(together[i]!);
    sum += m;
    console.log(`  ${c.label.padEnd(24)} ${m.toFixed(1)} MiB/s`);
    sheet.set(`together.${i === 0 ? 'host' : `phone${i}`}.MiBps`, m, 'MiB/s', 'higher');
  });
  console.log(
    `  ${'sum'.padEnd(24)} ${sum.toFixed(1)} MiB/s (alone, this machine: ${median(alone.get('this machine')!.speed).toFixed(1)})`,
  );
  sheet.set('together.sum.MiBps', sum, 'MiB/s', 'higher');
  const view = (await api('GET', '/share')) as {
    devices: Array<{ name: string; sessionsTotal: number; bytesDown: number }>;
  };
  console.log('\nwhat the core counted per device (the window shows these):');
  for (const d of view.devices)
    console.log(`  ${d.name}: ${d.sessionsTotal} sessions, ${(d.bytesDown / 2 ** 20).toFixed(0)} MiB down`);
  sheet.save();
} finally {
  stop();
  for (const p of phones) p.close();
  await rig.down();
  rmSync(dir, { recursive: true, force: true });
}
