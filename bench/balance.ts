/**
 * Several tunnels at once (groups.balance), side by side in one run on one rig (issue #15):
 *   1. aggregate: 3 SoftEther nodes each limited to 2 MB/s (tbf on the node), 6 parallel downloads
 *      of the rig's large file, with `tunnels: 1` and then `tunnels: 3, round-robin`; prints both
 *      and the ratio (target ≥ 2.5×); every download is checked by SHA-256;
 *   2. a member killed under that load: which downloads fail, how soon new sessions succeed through
 *      the others, how soon another node replaces it (targets: only its sessions, 1 s, 10 s);
 *   3. a member whose HTTP probe starts answering 500: how soon it is out of selection and how soon
 *      one good probe brings it back (target: within interval × maxFails).
 * Root only. Usage: npm run bench:balance [-- --mib N]
 */
import '../test/setup/tunnel-worker.js';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../core/common/index.js';
import { buildConfig, type ConfigInput, type RunningApp } from '../core/app/index.js';
import type { NodeTunnel } from '../core/groups/index.js';
import { socksGet } from '../test/helpers/socks-http.js';
import { Rig } from '../test/rig/rig.js';
import { startRigCore } from '../test/helpers/rig-app.js';

const argMib = process.argv.indexOf('--mib');
const MIB = argMib > 0 ? Number(process.argv[argMib + 1]) : 20;
const DOWNLOADS = 6;
const NODE_KBIT = 16_384; // 2 MB/s

const until = async <T>(fn: () => T | undefined, ms: number, what: string): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** curl through the proxy; resolves with the body's SHA-256 (null when curl failed). */
function download(port: number, url: string): Promise<{ ok: boolean; sha: string | null; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn('curl', ['-s', '--max-time', '600', '--socks5-hostname', `127.0.0.1:${port}`, url], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const hash = createHash('sha256');
    child.stdout.on('data', (c: Buffer) => hash.update(c));
    child.once('close', (code) => resolve({ ok: code === 0, sha: code === 0 ? hash.digest('hex') : null, code }));
  });
}

async function main(): Promise<void> {
  const rig = await Rig.up({ nodes: 3, openvpn: ['gcm-udp'], bigMib: MIB });
  let app: RunningApp | null = null;
  const start = async (tunnels: number, groups: ConfigInput['groups'] = {}): Promise<RunningApp> => {
    // A data dir per run: node history from one part (a killed node backing off) must not steer the next.
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-bench-balance-'));
    const config = buildConfig(
      {},
      {
        egress: 'vpngate',
        api: [rig.state.apiUrl],
        vpngate: { allowPrivateNodes: true },
        mode: 'global', // the rig's internet is in 10/8: through the tunnel, not the LAN rule
        listen: '127.0.0.1:0',
        admin: 'off',
        dataDir,
        logFile: 'off',
        groups: {
          urlTest: { url: rig.url('/generate_204'), intervalMs: 600_000 },
          balance: { tunnels, strategy: 'round-robin' },
          ...groups,
        },
        switching: { healthDnsName: 'files.test' },
      },
    );
    const a = await startRigCore(config, silentLogger(), { tunnels });
    app = a;
    return a;
  };
  const nodesOf = (a: RunningApp): string[] => a.manager!.members.map((m) => (m.egress as NodeTunnel).nodeId);
  try {
    // Every node (the OpenVPN one too, the spare of part 2) at 2 MB/s, so whichever the selector picks is alike.
    for (const n of rig.state.nodes) rig.rateLimit(n.name, NODE_KBIT);

    console.log(
      `== 1. aggregate: ${DOWNLOADS} parallel downloads of ${MIB} MiB, SoftEther nodes limited to 2 MB/s each`,
    );
    const results: Record<string, number> = {};
    for (const tunnels of [1, 3]) {
      const a = await start(tunnels);
      const started = Date.now();
      const d = await Promise.all(
        Array.from({ length: DOWNLOADS }, () => download(a.listening.proxy.port, rig.url('/big'))),
      );
      const s = (Date.now() - started) / 1000;
      const intact = d.filter((x) => x.sha === rig.state.bigSha256).length;
      const mbps = (DOWNLOADS * MIB * 1.048576) / s;
      results[tunnels] = mbps;
      console.log(
        `tunnels: ${tunnels} (${nodesOf(a).join(', ')}): ${mbps.toFixed(2)} MB/s aggregate, ${s.toFixed(1)} s, ${intact}/${DOWNLOADS} intact (SHA-256)`,
      );
      await a.stop();
      app = null;
    }
    console.log(`ratio tunnels 3 / tunnels 1: ${(results[3]! / results[1]!).toFixed(2)}× (target ≥ 2.5×)`);

    console.log('== 2. one member killed during the load');
    {
      const a = await start(3);
      const victim = a.controller!.members[0]!.node.id;
      const loads = Array.from({ length: DOWNLOADS }, () => download(a.listening.proxy.port, rig.url('/big')));
      await until(
        () => (a.manager!.members.every((m) => m.sessions >= 2) ? true : undefined),
        30_000,
        'downloads on every member',
      );
      await new Promise((r) => setTimeout(r, 2_000));
      const onVictim = a.manager!.members.find((m) => (m.egress as NodeTunnel).nodeId === victim)!.sessions;
      const killedAt = Date.now();
      rig.kill(victim);
      let firstOk: number | null = null;
      let failedNew = 0;
      while (Date.now() - killedAt < 5_000) {
        const ok = await socksGet(a.listening.proxy.port, rig.state.inetAddress, '/ip', 10_000).then(
          (r) => r.status === 200 && r.body.toString() !== rig.node(victim).exitAddress,
          () => false,
        );
        if (ok) firstOk ??= Date.now() - killedAt;
        else failedNew++;
      }
      const replaced = await until(
        () => (nodesOf(a).length === 3 && !nodesOf(a).includes(victim) ? Date.now() - killedAt : undefined),
        60_000,
        'replacement',
      );
      const d = await Promise.all(loads);
      const failed = d.filter((x) => x.sha !== rig.state.bigSha256).length;
      console.log(
        `killed ${victim} carrying ${onVictim} of ${DOWNLOADS} downloads: ${failed} downloads failed (target: only its own), first new session ok after ${firstOk} ms (target 1 s), ${failedNew} new sessions failed, replaced after ${replaced} ms (target 10 s)`,
      );
      await a.stop();
      app = null;
      await rig.restart(victim);
    }

    console.log('== 3. a member whose probe answers 500');
    {
      const intervalMs = 1_000;
      const maxFails = 2;
      const a = await start(4, {
        probes: [{ type: 'http', url: rig.url('/health'), intervalMs, timeoutMs: 3_000 }],
        failFilter: { maxFails, failTimeoutMs: 30_000 },
      });
      const sick = a.controller!.members[0]!.node.id;
      const at = Date.now();
      rig.failHealth(sick, 500);
      const outMs = await until(
        () => (a.manager!.members.some((m) => m.down) ? Date.now() - at : undefined),
        30_000,
        'marked down',
      );
      const back = Date.now();
      rig.failHealth(sick, null);
      const backMs = await until(
        () => (a.manager!.members.every((m) => !m.down) ? Date.now() - back : undefined),
        30_000,
        'up again',
      );
      console.log(
        `${sick}: out of selection after ${outMs} ms (interval ${intervalMs} ms × maxFails ${maxFails} = ${intervalMs * maxFails} ms), back after ${backMs} ms (one probe interval)`,
      );
      await a.stop();
      app = null;
    }
  } finally {
    await (app as RunningApp | null)?.stop();
    rig.down();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
