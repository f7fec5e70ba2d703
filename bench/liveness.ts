/**
 * How soon a dead node is left, and whether a slow one that works is left by mistake (#24): tunnels
 * to rig nodes with delay, jitter and loss (nfq-delay: this kernel has no netem), each under light
 * traffic (a 1 KiB request every 3 s, idle between) for N minutes, counting the times a tunnel was
 * called silent (a false failover: the switch controller would leave the node); then each node is
 * blackholed and paused in turn and the time until its tunnel is called silent is measured.
 * Root only. Usage: npm run bench:liveness [-- --minutes 10 --unresponsive-ms 2000]
 */
import '../test/setup/tunnel-worker.js';
import { readFileSync } from 'node:fs';
import { silentLogger } from '../core/common/index.js';
import { openTunnel, type Tunnel } from '../core/egress/index.js';
import { eventually } from '../test/helpers/fds.js';
import { Rig, type Impairment } from '../test/rig/rig.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const MINUTES = arg('--minutes', 10);
const UNRESPONSIVE_MS = arg('--unresponsive-ms', 2_000);

interface Case {
  label: string;
  node: string;
  proto: 'udp' | 'tcp';
  imp: Impairment | null;
}

const rig = await Rig.up({ nodes: 2, openvpn: ['gcm-udp', 'cbc-tcp'], bigMib: 1 });
const tunnels: Tunnel[] = [];
try {
  const [se1, se2] = rig.softether;
  const [ovUdp, ovTcp] = rig.openvpn;
  const cases: Case[] = [
    { label: 'clean (SoftEther UDP)', node: se1!.name, proto: 'udp', imp: null },
    {
      label: 'RTT 300–500 ms, 3 % loss each way (SoftEther TCP)',
      node: se2!.name,
      proto: 'tcp',
      imp: { delayMs: 150, jitterMs: 100, loss: 0.03 },
    },
    {
      label: 'RTT 700–1000 ms, 5 % loss each way (OpenVPN UDP)',
      node: ovUdp!.name,
      proto: 'udp',
      imp: { delayMs: 350, jitterMs: 150, loss: 0.05 },
    },
    {
      label: 'RTT 200–300 ms, 10 % loss each way (OpenVPN TCP)',
      node: ovTcp!.name,
      proto: 'tcp',
      imp: { delayMs: 100, jitterMs: 50, loss: 0.1 },
    },
  ];
  const runs = [];
  let opened = 0;
  const open = async (c: Case): Promise<Tunnel> => {
    const n = rig.node(c.node);
    const t = await openTunnel({
      id: `live-${n.id}-${++opened}`,
      nodeId: n.name,
      link: { protocol: 'openvpn', profileText: readFileSync(n.profiles[c.proto]!, 'utf8') },
      logger: silentLogger(),
      unresponsiveMs: UNRESPONSIVE_MS,
      connectTimeoutMs: 60_000,
    });
    tunnels.push(t);
    return t;
  };
  for (const c of cases) {
    const t = await open(c);
    const r = { c, t, silent: [] as number[], requests: 0, failed: 0, silentFor: [] as number[] };
    t.onLiveness((ok, quietMs) => {
      if (!ok) {
        r.silent.push(Date.now());
        r.silentFor.push(quietMs);
      }
    });
    runs.push(r);
  }
  // Impair after the tunnels are up: a slow handshake is not what is measured.
  for (const r of runs) if (r.c.imp) rig.impair(r.c.node, r.c.imp);
  const endAt = Date.now() + MINUTES * 60_000;
  console.log(
    `liveness: ${runs.length} tunnels, unresponsiveMs ${UNRESPONSIVE_MS}, ${MINUTES} min under light traffic`,
  );
  await Promise.all(
    runs.map(async (r) => {
      while (Date.now() < endAt) {
        r.requests++;
        const ok = await get(r.t, '/bytes/1000', 15_000).then(
          (b) => b === 1000,
          () => false,
        );
        if (!ok) r.failed++;
        await new Promise((res) => setTimeout(res, 3_000));
      }
    }),
  );
  console.log('\nfalse failovers (called silent while the node worked):');
  for (const r of runs)
    console.log(
      `  ${r.c.label.padEnd(52)} ${String(r.silent.length).padStart(3)} in ${MINUTES} min   requests failed ${r.failed}/${r.requests}${r.silentFor.length ? `   quiet when called: ${r.silentFor.map((q) => q).join(', ')} ms` : ''}`,
    );

  console.log('\ndead node → called silent (impairment kept: a slow node dies too):');
  for (const how of ['blackhole', 'pause'] as const) {
    for (const r of runs) {
      // A little traffic first, so the death is met mid-use, as a user meets it.
      await get(r.t, '/bytes/1000', 15_000).catch(() => 0);
      await waitResponsive(r.t, 20_000);
      if (!r.t.responsive || r.t.state === 'closed') {
        // The server may have dropped the session while it was blackholed: a fresh tunnel, as the controller would open.
        const was = r.t.linkState();
        await r.t.close().catch(() => undefined);
        r.t = await open(r.c);
        r.t.onLiveness((ok) => void (ok || r.silent.push(Date.now())));
        console.log(`  (${r.c.label}: the tunnel was ${was} after the last death; reopened)`);
      }
      const before = r.silent.length;
      const at = Date.now();
      if (how === 'blackhole') rig.blackhole(r.c.node);
      else rig.pause(r.c.node);
      const seen = await waitFor(() => r.silent.length > before, 30_000);
      const ms = seen ? r.silent.at(-1)! - at : Number.NaN;
      if (how === 'blackhole') rig.unblackhole(r.c.node);
      else rig.resume(r.c.node);
      console.log(
        `  ${how.padEnd(9)} ${r.c.label.padEnd(52)} ${seen ? `${(ms / 1000).toFixed(2)} s` : `not within 30 s (link ${r.t.linkState()})`}`,
      );
      await waitResponsive(r.t, 60_000);
    }
  }
} finally {
  await Promise.all(tunnels.map((t) => t.close().catch(() => undefined)));
  rig.down();
}

async function get(t: Tunnel, path: string, timeoutMs: number): Promise<number> {
  const c = await t.connectTcp(rig.state.inetAddress, 80, { timeoutMs });
  return new Promise<number>((resolve, reject) => {
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => (c.stream.destroy(), reject(new Error('timeout'))), timeoutMs);
    c.stream.on('data', (chunk: Buffer) => (head = Buffer.concat([head, chunk])));
    c.stream.once('error', (err: Error) => (clearTimeout(timer), reject(err)));
    c.stream.once('end', () => {
      clearTimeout(timer);
      const end = head.indexOf('\r\n\r\n');
      resolve(end < 0 ? 0 : head.length - end - 4);
      c.stream.destroy();
    });
    c.stream.write(`GET ${path} HTTP/1.1\r\nHost: files.test\r\nConnection: close\r\n\r\n`);
  });
}

/** Whether `check` came true within `ms` (the time itself is the liveness callback's, not this poll's). */
function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  return eventually(check, ms).then(
    () => true,
    () => false,
  );
}

async function waitResponsive(t: Tunnel, ms: number): Promise<void> {
  await waitFor(() => t.responsive, ms);
}
