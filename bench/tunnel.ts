/**
 * core/ovpn + core/netstack throughput against Debian's openvpn client (kernel TUN) on the same
 * rig servers in one run: one HTTP download of the rig's large file each way, MiB/s, ratio, and
 * CPU seconds per GiB of this process (which hosts the whole tunnel). Then core/sstp against the
 * same SoftEther server in the same run as OpenVPN over TCP (both TLS over TCP): the ratio to it.
 * Root only. Usage: npm run bench:tunnel [-- --mib N]
 */
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { LinkSpec } from '../core/egress/index.js';
import type { DownloadResult } from './lib/tunnel-download.js';
import { Rig } from '../test/rig/rig.js';

const argMib = process.argv.indexOf('--mib');
const MIB = argMib > 0 ? Number(process.argv[argMib + 1]) : 64;

type Engine = 'native' | 'javascript';

/** One download through Gatehop in a worker thread whose data channels use the given engine. */
async function gatehopDownload(
  rig: Rig,
  node: string,
  proto: 'tcp' | 'udp' | 'sstp',
  engine: Engine = 'native',
): Promise<DownloadResult & { cpuPerGiB: number }> {
  const n = rig.node(node);
  const spec: LinkSpec =
    proto === 'sstp'
      ? {
          protocol: 'sstp',
          host: n.vpnAddress,
          port: 443,
          serverName: n.ddns!,
          ca: [readFileSync(rig.state.caFile, 'utf8')],
        }
      : { protocol: 'openvpn', profileText: readFileSync(n.profiles[proto]!, 'utf8') };
  const env = { ...process.env, GATEHOP_NATIVE: engine === 'javascript' ? 'off' : (process.env.GATEHOP_NATIVE ?? '') };
  const worker = new Worker(new URL('./lib/tunnel-download-worker.mjs', import.meta.url), {
    workerData: { spec, inetAddress: rig.state.inetAddress, bigBytes: rig.state.bigBytes },
    env,
  });
  const r = await new Promise<DownloadResult>((resolvePromise, reject) => {
    worker.once('message', resolvePromise);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`download worker exited ${code}`)));
  });
  await worker.terminate();
  if (proto !== 'sstp' && r.engine !== engine)
    throw new Error(`asked for the ${engine} engine, the worker ran ${r.engine} (is gatehop-native built?)`);
  return { ...r, cpuPerGiB: r.user + r.system };
}

/** Debian's openvpn: MiB/s, and the openvpn process's own CPU per GiB (its kernel TUN and TCP work is not in it). */
async function nativeDownload(
  rig: Rig,
  node: string,
  proto: 'tcp' | 'udp',
): Promise<{ mibs: number; cpuPerGiB: number }> {
  const c = await rig.nativeClient(node, proto);
  try {
    const before = c.cpuSeconds();
    const out = c.curl(['-o', '/dev/null', '-w', '%{speed_download} %{size_download}', rig.url('/big')]);
    const after = c.cpuSeconds();
    const [speed, size] = out.split(' ').map(Number) as [number, number];
    return {
      mibs: speed / (1 << 20),
      cpuPerGiB: (after.user + after.system - before.user - before.system) * ((1 << 30) / size),
    };
  } finally {
    await c.close();
  }
}

const rig = await Rig.up({ nodes: 1, openvpn: ['gcm-udp', 'cbc-udp', 'gcm-tcp'], client: true, bigMib: MIB });
try {
  console.log(`tunnel benchmark: ${MIB} MiB HTTP download through each server; MiB/s, CPU s/GiB (user+system)`);
  console.log(
    "  openvpn = Debian's client with a kernel TUN (its process only); gatehop = native data engine; js = the JavaScript fallback",
  );
  console.log(
    '  server                                   openvpn  CPU |  gatehop  ratio  user  sys  CPU |     js  ratio   CPU',
  );
  const cases: Array<[string, 'tcp' | 'udp', string]> = [
    ['n1', 'udp', 'SoftEther 5.01 UDP AES-128-CBC/SHA1'],
    ['n1', 'tcp', 'SoftEther 5.01 TCP AES-128-CBC/SHA1'],
    ['o1', 'udp', 'OpenVPN 2.6 UDP AES-256-GCM (EKM, V2)'],
    ['o2', 'udp', 'OpenVPN 2.6 UDP AES-128-CBC/SHA1'],
    ['o3', 'tcp', 'OpenVPN 2.6 TCP AES-256-GCM'],
  ];
  const f = (x: number, w: number, d = 1): string => x.toFixed(d).padStart(w);
  for (const [node, proto, label] of cases) {
    const n = await nativeDownload(rig, node, proto);
    const g = await gatehopDownload(rig, node, proto, 'native');
    const j = await gatehopDownload(rig, node, proto, 'javascript');
    console.log(
      `  ${label.padEnd(40)} ${f(n.mibs, 7)} ${f(n.cpuPerGiB, 4)} | ${f(g.mibs, 7)} ${f(g.mibs / n.mibs, 6, 2)} ${f(g.user, 5)} ${f(g.system, 4)} ${f(g.cpuPerGiB, 4)} | ${f(j.mibs, 6)} ${f(j.mibs / n.mibs, 6, 2)} ${f(j.cpuPerGiB, 5)}`,
    );
  }
  // SSTP beside OpenVPN over TCP on the same SoftEther server, alternating, best of two each.
  console.log(
    `\nSSTP against OpenVPN over TCP, same SoftEther server, same run (MiB/s, best of 2; target ratio >= 0.8)`,
  );
  console.log('  protocol                                 gatehop   CPU s/GiB');
  const best = async (proto: 'tcp' | 'sstp'): Promise<{ mibs: number; cpuPerGiB: number }> => {
    const runs = [await gatehopDownload(rig, 'n1', proto), await gatehopDownload(rig, 'n1', proto)];
    return runs.sort((a, b) => b.mibs - a.mibs)[0]!;
  };
  const ovpnTcp = await best('tcp');
  const sstp = await best('sstp');
  for (const [label, r] of [
    ['OpenVPN TCP (SoftEther 5.01)', ovpnTcp],
    ['SSTP (SoftEther 5.01, TLS 1.3)', sstp],
  ] as const) {
    console.log(`  ${label.padEnd(40)} ${r.mibs.toFixed(1).padStart(7)}   ${r.cpuPerGiB.toFixed(1).padStart(6)}`);
  }
  console.log(`  SSTP / OpenVPN TCP: ${(sstp.mibs / ovpnTcp.mibs).toFixed(2)}×`);
} finally {
  rig.down();
}
