/**
 * Switching nodes under load, Gatehop (make-before-break) against Debian's openvpn client (the
 * user's alternative: stop, connect to the next server) on the same rig, in one run:
 *   - 50 parallel downloads of the rig's large file plus a new short request every 50 ms;
 *   - 10 node switches during the run;
 *   - then the active node is paused (SIGSTOP) and the time to the first successful new request
 *     through another node is measured.
 * Prints failed sessions, the pause new requests see at each switch (p50/p99) and the recovery
 * time. Root only. Usage: npm run bench:switch [-- --mib N]
 */
import '../test/setup/tunnel-worker.js';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { silentLogger } from '../core/common/index.js';
import { buildConfig, startApp, type RunningApp } from '../core/app/index.js';
import { Rig, type NativeClient } from '../test/rig/rig.js';

const argMib = process.argv.indexOf('--mib');
const MIB = argMib > 0 ? Number(process.argv[argMib + 1]) : 8;
const argLog = process.argv.indexOf('--log');
const LOG = argLog > 0 ? process.argv[argLog + 1]! : null;
const ONLY_GATEHOP = process.argv.includes('--gatehop-only');
/** `--threads false`: tunnels on the main thread (tunnel.threads), for comparison. */
const argThreads = process.argv.indexOf('--threads');
const THREADS = argThreads > 0 ? process.argv[argThreads + 1] !== 'false' : true;
const ADMIN_TOKEN = 'bench-switch-admin-token-0123456789';
/** `--warm-standby`: keep the next node's tunnel up (groups.warmStandby), for node death. */
const WARM_STANDBY = process.argv.includes('--warm-standby');
/** `--unresponsive-ms N`: switching.unresponsiveMs (how long a silent server is waited for; default 2000). */
const argQuiet = process.argv.indexOf('--unresponsive-ms');
const UNRESPONSIVE_MS = argQuiet > 0 ? Number(process.argv[argQuiet + 1]) : undefined;
/** Why downloads failed: curl exit code → count. */
const failures = new Map<string, Map<number | null, number>>();
function noteFailure(who: string, code: number | null): void {
  const m = failures.get(who) ?? new Map<number | null, number>();
  m.set(code, (m.get(code) ?? 0) + 1);
  failures.set(who, m);
}
const DOWNLOADS = 50;
/** `--switches N`: more switches give the pause's p99 more than ten samples to stand on. */
const argSwitches = process.argv.indexOf('--switches');
const SWITCHES = argSwitches > 0 ? Number(process.argv[argSwitches + 1]) : 10;
/** Per switch: where to, how long the switch took (start → the new tunnel active), the pause new requests saw. */
const switchLog: Array<{ to: string; switchMs: number }> = [];

interface Req {
  startedAt: number;
  endedAt: number;
  ok: boolean;
}

/** Runs curl (optionally inside a namespace); resolves with success, the body length and curl's exit code. */
function curlAsync(args: string[], ns?: string): Promise<{ ok: boolean; bytes: number; code: number | null }> {
  const cmd = ns ? ['ip', 'netns', 'exec', ns, 'curl'] : ['curl'];
  return new Promise((resolve) => {
    const child = spawn(
      cmd[0]!,
      [...cmd.slice(1), '-s', '-o', '/dev/null', '-w', '%{size_download}', '--max-time', '120', ...args],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    // 'close', not 'exit': the -w output may still be in the pipe when the process exits.
    child.once('close', (code) => resolve({ ok: code === 0, bytes: Number(out) || 0, code }));
  });
}

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/**
 * Drives the load: downloads and short requests via `fetchOne`, switches via `doSwitch`. The pause
 * a switch causes is the time from its start until a request started at or after it completes.
 */
async function underLoad(
  name: string,
  download: () => Promise<boolean>,
  shortOne: () => Promise<boolean>,
  doSwitch: (k: number) => Promise<void>,
) {
  const downloads = Array.from({ length: DOWNLOADS }, (_, i) =>
    new Promise((r) => setTimeout(r, i * 40)).then(download),
  );
  const reqs: Req[] = [];
  let running = true;
  const loop = (async () => {
    const inflight: Promise<void>[] = [];
    while (running) {
      const r: Req = { startedAt: Date.now(), endedAt: 0, ok: false };
      reqs.push(r);
      inflight.push(shortOne().then((ok) => void ((r.ok = ok), (r.endedAt = Date.now()))));
      await new Promise((res) => setTimeout(res, 50));
    }
    await Promise.all(inflight);
  })();
  await new Promise((r) => setTimeout(r, 1500));
  const switchStarts: number[] = [];
  for (let k = 0; k < SWITCHES; k++) {
    switchStarts.push(Date.now());
    await doSwitch(k);
    await new Promise((r) => setTimeout(r, 1500));
  }
  running = false;
  await loop;
  const dl = await Promise.all(downloads);
  const pauses = switchStarts.map((t) => {
    const first = reqs.filter((r) => r.startedAt >= t && r.ok).sort((a, b) => a.endedAt - b.endedAt)[0];
    return first ? first.endedAt - t : Number.POSITIVE_INFINITY;
  });
  const latency = reqs.filter((r) => r.ok).map((r) => r.endedAt - r.startedAt);
  return {
    name,
    failedDownloads: dl.filter((ok) => !ok).length,
    failedShort: reqs.filter((r) => !r.ok).length,
    shortTotal: reqs.length,
    pauses,
    latency,
  };
}

async function firstSuccessAfter(t0: number, shortOne: () => Promise<boolean>, limitMs = 90_000): Promise<number> {
  let done = 0;
  const inflight: Promise<void>[] = [];
  while (!done && Date.now() < t0 + limitMs) {
    inflight.push(shortOne().then((ok) => void (ok && !done && (done = Date.now()))));
    await new Promise((r) => setTimeout(r, 100));
  }
  await Promise.all(inflight);
  return done ? done - t0 : Number.POSITIVE_INFINITY;
}

const rig = await Rig.up({ nodes: 2, openvpn: ['gcm-udp', 'gcm-udp'], client: true, bigMib: MIB });
let app: RunningApp | null = null;
let native: NativeClient | null = null;
try {
  const nodes = rig.state.nodes.map((n) => n.name);
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-bench-switch-'));

  // ---- Gatehop ----
  app = await startApp(
    buildConfig(
      {},
      {
        egress: 'vpngate',
        api: [rig.state.apiUrl],
        vpngate: { allowPrivateNodes: true },
        mode: 'global', // the rig's internet is in 10/8: through the tunnel, not the LAN rule
        listen: '127.0.0.1:0',
        admin: '127.0.0.1:0',
        adminToken: ADMIN_TOKEN,
        dataDir,
        logFile: 'off',
        tunnel: { threads: THREADS },
        switching: {
          maxDraining: 12,
          healthDnsName: 'files.test',
          ...(UNRESPONSIVE_MS !== undefined ? { unresponsiveMs: UNRESPONSIVE_MS } : {}),
        },
        groups: { urlTest: { url: rig.url('/generate_204'), intervalMs: 600_000 }, warmStandby: WARM_STANDBY },
      },
    ),
    LOG ? pino({ level: 'info', base: undefined }, pino.destination({ dest: LOG, sync: false })) : silentLogger(),
  );
  while (!app.controller!.active) await new Promise((r) => setTimeout(r, 100));
  const proxy = `127.0.0.1:${app.listening.proxy.port}`;
  const c = app.controller!;
  // What a dashboard or the window feels during the load: GET /status every 250 ms, timed by a
  // separate process (this one also runs the load's curl processes).
  const statusUrl = `http://127.0.0.1:${app.listening.admin!.port}/status`;
  const pollerScript = `const ms = []; let on = true; process.stdin.on('end', () => (on = false)); process.stdin.resume();
    (async () => { while (on) { const t = performance.now(); await fetch(${JSON.stringify(statusUrl)}, { headers: { authorization: 'Bearer ${ADMIN_TOKEN}' } }).then((r) => r.text()).catch(() => '');
      ms.push(performance.now() - t); await new Promise((r) => setTimeout(r, 250)); } process.stdout.write(JSON.stringify(ms)); })();`;
  const pollerProc = spawn(process.execPath, ['-e', pollerScript], { stdio: ['pipe', 'pipe', 'inherit'] });
  let pollerOut = '';
  pollerProc.stdout.on('data', (c: Buffer) => (pollerOut += c.toString()));
  const poller = new Promise<void>((r) => pollerProc.on('exit', () => r()));
  const gh = await underLoad(
    'gatehop',
    async () => {
      const r = await curlAsync(['--socks5-hostname', proxy, rig.url('/big')]);
      if (r.bytes !== rig.state.bigBytes) noteFailure('gatehop', r.code === 0 ? -r.bytes : r.code);
      return r.bytes === rig.state.bigBytes;
    },
    async () => (await curlAsync(['--max-time', '10', '--socks5-hostname', proxy, 'http://files.test/ip'])).ok,
    async (k) => {
      const target = nodes[(nodes.indexOf(c.active!.node.id) + 1) % nodes.length]!;
      const started = Date.now();
      await c.switchNow({ nodeId: target, reason: `bench switch ${k + 1}` }).done;
      switchLog.push({ to: `${target} (${rig.node(target).kind})`, switchMs: Date.now() - started });
    },
  );
  pollerProc.stdin.end();
  await poller;
  const statusMs = JSON.parse(pollerOut || '[]') as number[];
  c.setMode(true);
  const victim = rig.state.nodes.find((n) => n.name === c.active!.node.id)!;
  const t0 = Date.now();
  rig.pause(victim.id);
  const ghRecovery = await firstSuccessAfter(t0, async () => {
    const r = await curlAsync(['--max-time', '5', '-w', '', '--socks5-hostname', proxy, 'http://files.test/ip']);
    return r.ok;
  });
  rig.resume(victim.id);
  await app.stop();
  app = null;

  console.log('per switch: target, switch start → new tunnel active, pause (start → first new request done):');
  switchLog.forEach((x, i) =>
    console.log(
      `  ${String(i + 1).padStart(2)} ${x.to.padEnd(28)} ${String(x.switchMs).padStart(6)} ms ${String(gh.pauses[i]).padStart(6)} ms`,
    ),
  );
  console.log(
    `gatehop (tunnel.threads: ${THREADS}${WARM_STANDBY ? ', warmStandby' : ''}${UNRESPONSIVE_MS !== undefined ? `, unresponsiveMs ${UNRESPONSIVE_MS}` : ''}): GET /status during the load p50 ${pct(statusMs, 50).toFixed(0)} ms, p99 ${pct(statusMs, 99).toFixed(0)} ms (${statusMs.length} requests)`,
  );
  if (ONLY_GATEHOP) {
    console.log(
      `gatehop: ${gh.failedDownloads}/${DOWNLOADS} downloads failed (curl exit codes ${JSON.stringify([...(failures.get('gatehop') ?? [])])}), ${gh.failedShort}/${gh.shortTotal} requests, pause at a switch p50 ${pct(gh.pauses, 50).toFixed(0)} ms / p99 ${pct(gh.pauses, 99).toFixed(0)} ms, request p50 ${pct(gh.latency, 50).toFixed(0)} ms, node death → first new request ${(ghRecovery / 1000).toFixed(1)} s`,
    );
  } else {
    // ---- Debian's openvpn: stop, then connect to the next server ----
    const ovpn = rig.state.nodes.filter((n) => n.kind === 'openvpn').map((n) => n.name);
    const softether = rig.state.nodes.filter((n) => n.kind === 'softether').map((n) => n.name);
    const order = [softether[0]!, ovpn[0]!, softether[1]!, ovpn[1]!];
    const protoOf = (name: string): 'tcp' | 'udp' => (rig.node(name).profiles.udp ? 'udp' : 'tcp');
    native = await rig.nativeClient(order[0]!, protoOf(order[0]!));
    let at = 0;
    const ns = rig.state.clientNs!;
    const nv = await underLoad(
      'openvpn (reconnect)',
      async () => (await curlAsync([rig.url('/big')], ns)).bytes === rig.state.bigBytes,
      async () => (await curlAsync(['--max-time', '10', rig.url('/ip')], ns)).ok,
      async () => {
        await native!.close();
        at = (at + 1) % order.length;
        native = await rig.nativeClient(order[at]!, protoOf(order[at]!));
      },
    );
    await native.close();
    // Node death: two OpenVPN servers sharing a CA in one profile (remote list); ping-restart moves on.
    native = await rig.nativeClient(ovpn[0]!, 'udp', ['--remote', rig.node(ovpn[1]!).vpnAddress, '1194', 'udp']);
    const n0 = Date.now();
    rig.pause(rig.node(ovpn[0]!).id);
    const nvRecovery = await firstSuccessAfter(
      n0,
      async () => (await curlAsync(['--max-time', '5', rig.url('/ip')], ns)).ok,
      120_000,
    );
    rig.resume(rig.node(ovpn[0]!).id);

    const line = (r: typeof gh, rec: number): string =>
      `  ${r.name.padEnd(22)} ${`${r.failedDownloads}/${DOWNLOADS}`.padStart(9)}   ${`${r.failedShort}/${r.shortTotal}`.padStart(9)}   ${pct(r.latency, 50).toFixed(0).padStart(7)}   ${pct(r.pauses, 50).toFixed(0).padStart(7)}   ${pct(r.pauses, 99).toFixed(0).padStart(7)}   ${(rec / 1000).toFixed(1).padStart(8)}`;
    console.log(
      `switch benchmark: ${DOWNLOADS} downloads of ${MIB} MiB + a request every 50 ms, ${SWITCHES} switches; then the active node is paused`,
    );
    console.log('  client                 downloads    requests   request   pause at a switch   node death → first');
    console.log('                          failed       failed    p50 ms    p50 ms    p99 ms    new request (s)');
    console.log(line(gh, ghRecovery));
    console.log(line(nv, nvRecovery));
  }
} finally {
  await app?.stop();
  await native?.close();
  rig.down();
}
