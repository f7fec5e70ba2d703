/**
 * The main event loop's delay while one tunnel downloads at full speed, the tunnel in a worker and on the main thread: what the tray menu, the
 * window's IPC and the admin API wait for when they share the loop with a tunnel (issues #14, #16).
 * A core (the CLI) on the rig, one node per path, curl pulling /big through SOCKS5 with no rate
 * limit; the core's own gatehop_event_loop_delay_seconds (10 s windows) is read every 2 s,
 * and /status is timed from outside as a client would feel it. An idle window comes first; last,
 * 50 downloads at once (the switching bench's load, without switches).
 * Usage (root): npm run bench:loop-delay [-- --mib 512]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Rig } from '../test/rig/rig.js';
import { freePort } from './lib/processes.js';
import { coreEnv, coreV8Flags } from './lib/core-flags.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const MIB = arg('mib', 512);
const root = resolve(import.meta.dirname, '..');
const TOKEN = 'loop-delay-bench-token-0123456789';

const pct = (a: number[], p: number): number =>
  [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor((a.length * p) / 100))] ?? NaN;

async function main(): Promise<void> {
  const rig = await Rig.up({ nodes: 1, openvpn: ['gcm-udp'], bigMib: MIB });
  const rows: string[] = [];
  try {
    for (const n of rig.state.nodes) {
      for (const [proto, profile] of Object.entries(n.profiles)) {
        for (const threads of [true, false]) {
          const dataDir = mkdtempSync(join(tmpdir(), 'gh-loop-'));
          const ovpn = join(dataDir, 'node.ovpn');
          writeFileSync(ovpn, (await import('node:fs')).readFileSync(profile!, 'utf8'));
          const configFile = join(dataDir, 'config.yaml');
          writeFileSync(configFile, `tunnel:\n  threads: ${threads}\n`);
          const [proxyPort, adminPort] = [await freePort(), await freePort()];
          const core = spawn(
            process.execPath,
            [
              ...coreV8Flags(),
              join(root, 'bin/gatehop.js'),
              '--config',
              configFile,
              '--egress',
              'vpngate',
              '--ovpn',
              ovpn,
              '--listen',
              `127.0.0.1:${proxyPort}`,
              '--admin',
              `127.0.0.1:${adminPort}`,
              '--admin-token',
              TOKEN,
              '--data-dir',
              dataDir,
              '--log-file',
              'off',
              '--log-level',
              'warn',
            ],
            { stdio: ['ignore', 'pipe', 'inherit'], env: coreEnv() },
          );
          const api = (path: string) =>
            fetch(`http://127.0.0.1:${adminPort}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
          for (let i = 0; ; i++) {
            const st = await api('/status')
              .then((r) => r.json() as Promise<{ active: unknown }>)
              .catch(() => null);
            if (st?.active) break;
            if (i > 300) throw new Error('no tunnel');
            await new Promise((r) => setTimeout(r, 200));
          }
          const sample = async (ms: number) => {
            const p99s: number[] = [];
            const statusMs: number[] = [];
            const start = Date.now();
            const end = start + ms;
            while (Date.now() < end) {
              const t0 = performance.now();
              await api('/status').then((r) => r.text());
              statusMs.push(performance.now() - t0);
              await new Promise((r) => setTimeout(r, 200));
              const text = await api('/metrics').then((r) => r.text());
              const m = /gatehop_event_loop_delay_seconds\{quantile="0\.99"\} ([\d.e-]+)/.exec(text);
              // The core reports its last complete 10 s window: only readings taken a window after
              // the phase began cover this phase alone.
              if (m && Date.now() - start >= 10_500) p99s.push(Number(m[1]) * 1000);
            }
            return { p99: pct(p99s, 50), worstWindowP99: Math.max(...p99s), statusP99: pct(statusMs, 99) };
          };
          const idle = await sample(12_000);
          const started = Date.now();
          const curl = spawn('curl', [
            '-s',
            '-o',
            '/dev/null',
            '-w',
            '%{speed_download}',
            '--socks5-hostname',
            `127.0.0.1:${proxyPort}`,
            rig.url('/big'),
          ]);
          let speed = '';
          curl.stdout.on('data', (c: Buffer) => (speed += c.toString()));
          const busy = await sample(20_000);
          await new Promise((r) => curl.on('exit', r));
          const mibs = Number(speed) / 1048576;
          // The switching bench's load, without the switches: 50 downloads at once.
          const many = Array.from({ length: 50 }, () =>
            spawn('curl', ['-s', '-o', '/dev/null', '--socks5-hostname', `127.0.0.1:${proxyPort}`, rig.url('/big')], {
              stdio: 'ignore',
            }),
          );
          const load = await sample(20_000);
          for (const c of many) c.kill('SIGTERM');
          await Promise.all(many.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.on('exit', r)))));
          rows.push(
            `| ${n.kind === 'softether' ? 'SoftEther' : 'OpenVPN'} ${proto.toUpperCase()}, ${threads ? 'worker' : 'in-thread'} | ${idle.p99.toFixed(1)} | **${busy.p99.toFixed(1)}** (worst window ${busy.worstWindowP99.toFixed(1)}) | ${load.p99.toFixed(1)} | ${idle.statusP99.toFixed(1)} / ${busy.statusP99.toFixed(1)} / **${load.statusP99.toFixed(1)}** | ${mibs.toFixed(1)} (${((Date.now() - started) / 1000).toFixed(0)} s) |`,
          );
          core.kill('SIGTERM');
          await new Promise((r) => core.on('exit', r));
        }
      }
    }
  } finally {
    rig.down();
  }
  console.log(
    '\n| path (one tunnel) | loop delay p99 idle, ms | loop delay p99 during a full-speed download, ms (median of 10 s windows, read every 2 s) | loop delay p99, 50 downloads at once | /status p99 idle / one download / 50 downloads, ms | download MiB/s |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

await main();
