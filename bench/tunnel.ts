/**
 * core/ovpn + core/netstack throughput against Debian's openvpn client (kernel TUN) on the same
 * rig servers in one run: one HTTP download of the rig's large file each way, MiB/s, ratio, and
 * CPU seconds per GiB of this process (which hosts the whole tunnel). Then core/sstp against the
 * same SoftEther server in the same run as OpenVPN over TCP (both TLS over TCP): the ratio to it.
 * Then SE-VPN against SoftEther's own client (softether-vpnclient) and OpenVPN over TCP on the same
 * server. Root only. Usage: npm run bench:tunnel [-- --mib N] [-- --only ovpn|sevpn|sevpn1|se]
 * [-- --cases n1-udp,o3-tcp] [-- --conns 1,4,8] [-- --impair MS,LOSS] [-- --short]
 * `--short` (bench:check's version): 16 MiB, no JavaScript engine column, one connection, one run
 * each. Figures are saved with bench/lib/figures.ts.
 */
import { readFileSync } from 'node:fs';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { LinkSpec } from '../core/egress/index.js';
import type { DownloadResult } from './lib/tunnel-download.js';
import { Rig } from '../test/rig/rig.js';
import { SoftEtherClient } from '../test/rig/softether-client.js';
import { FigureSheet, isShort } from './lib/figures.js';

const SHORT = isShort();
const argMib = process.argv.indexOf('--mib');
const MIB = argMib > 0 ? Number(process.argv[argMib + 1]) : SHORT ? 16 : 64;
const sheet = new FigureSheet('tunnel');

type Engine = 'native' | 'javascript';

/** One download through Gatehop in a worker thread whose data channels use the given engine. */
async function gatehopDownload(
  rig: Rig,
  node: string,
  proto: 'tcp' | 'udp' | 'sstp' | 'sevpn',
  engine: Engine = 'native',
  sevpnConnections = 1,
): Promise<DownloadResult & { cpuPerGiB: number }> {
  const n = rig.node(node);
  // Imported here, not at the top: bench:ab runs this file against commits from before SE-VPN.
  const spec: LinkSpec =
    proto === 'sevpn'
      ? (await import('../test/helpers/rig-links.js')).sevpnLinkOf(rig, node, sevpnConnections)
      : proto === 'sstp'
        ? {
            protocol: 'sstp',
            host: n.vpnAddress,
            port: 443,
            trust: { profileCa: [readFileSync(rig.state.caFile, 'utf8')], serverName: n.ddns! },
          }
        : { protocol: 'openvpn', profileText: readFileSync(n.profiles[proto]!, 'utf8') };
  const env = { ...process.env, GATEHOP_NATIVE: engine === 'javascript' ? 'off' : (process.env.GATEHOP_NATIVE ?? '') };
  const worker = new Worker(new URL('./lib/tunnel-download-worker.mjs', import.meta.url), {
    workerData: { spec, inetAddress: rig.state.inetAddress, bigBytes: rig.state.bigBytes },
    env,
    resourceLimits: await tunnelThreadLimits(),
  });
  const r = await new Promise<DownloadResult>((resolvePromise, reject) => {
    worker.once('message', resolvePromise);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`download worker exited ${code}`)));
  });
  await worker.terminate();
  if (proto !== 'sstp' && proto !== 'sevpn' && r.engine !== engine)
    throw new Error(`asked for the ${engine} engine, the worker ran ${r.engine} (is gatehop-native built?)`);
  return { ...r, cpuPerGiB: r.user + r.system };
}

/**
 * The app's tunnel threads' heap limits (core/egress), so that a download here collects its garbage
 * as one in the app does: the young generation's size decides how often (bench/README.md,
 * "SoftEther over UDP"). A commit from before they were exported (bench:ab) runs with V8's defaults.
 */
async function tunnelThreadLimits(): Promise<ResourceLimits | undefined> {
  const egress = (await import('../core/egress/index.js')) as {
    tunnelThreadLimits?: (heapMb: number) => ResourceLimits;
  };
  return egress.tunnelThreadLimits?.(256); // the app's default tunnel.workerHeapMb
}

/** A client with a kernel network device in the rig's client namespace: curl through it, its own CPU. */
interface KernelClient {
  curl(args: string[]): string;
  cpuSeconds(): { user: number; system: number };
  close(): Promise<void>;
}

/** One download of the big file through `c` (closed after): MiB/s, and the client's own CPU per GiB. */
async function kernelClientDownload(rig: Rig, c: KernelClient): Promise<{ mibs: number; cpuPerGiB: number }> {
  try {
    const before = c.cpuSeconds();
    const out = c.curl(['-o', '/dev/null', '-w', '%{speed_download} %{size_download}', rig.url('/big')]);
    const after = c.cpuSeconds();
    const [speed, size] = out.split(' ').map(Number) as [number, number];
    if (size < rig.state.bigBytes) throw new Error(`short download: ${size} bytes`);
    return {
      mibs: speed / (1 << 20),
      cpuPerGiB: (after.user + after.system - before.user - before.system) * ((1 << 30) / size),
    };
  } finally {
    await c.close();
  }
}

/** Debian's openvpn: MiB/s, and the openvpn process's own CPU per GiB (its kernel TUN and TCP work is not in it). */
const nativeDownload = async (rig: Rig, node: string, proto: 'tcp' | 'udp') =>
  kernelClientDownload(rig, await rig.nativeClient(node, proto));

/** SoftEther's own client (a tap adapter, `connections` TCP connections): MiB/s and its processes' CPU per GiB. */
const softetherClientDownload = async (rig: Rig, node: string, connections: number) =>
  kernelClientDownload(rig, await SoftEtherClient.start(rig, node, { connections }));

/**
 * `--only ovpn` runs the first table alone (each server against Debian's client); `--only sevpn`
 * skips it (the same-server comparison alone); `--only sevpn1` also SE-VPN's extra connections;
 * `--only se` runs SE-VPN and SoftEther's own client alone (a slow lossy run of several connection
 * counts). `--cases` names the first table's rows (node-proto). `--conns` names the connection
 * counts (1,2,4,8).
 */
const argOnly = process.argv.indexOf('--only');
const ONLY = argOnly > 0 ? process.argv[argOnly + 1] : null;
if (ONLY && !['ovpn', 'sevpn', 'sevpn1', 'se'].includes(ONLY)) throw new Error('--only: ovpn, sevpn, sevpn1 or se');
const argCases = process.argv.indexOf('--cases');
const CASES = argCases > 0 ? process.argv[argCases + 1]!.split(',') : null;
const argConns = process.argv.indexOf('--conns');
const CONNS =
  argConns > 0 ? process.argv[argConns + 1]!.split(',').map(Number) : ONLY === 'sevpn1' || SHORT ? [1] : [1, 2, 4, 8];
if (!CONNS.every((k) => Number.isInteger(k) && k >= 1 && k <= 32))
  throw new Error('--conns: counts from 1 to 32, e.g. 1,4,8');

/** The second table: every protocol Gatehop speaks to one SoftEther server, and its own client. */
async function sameServerTable(): Promise<void> {
  // Every protocol Gatehop speaks to one SoftEther server, and SoftEther's own client, in the same
  // run, best of two each: SSTP against OpenVPN over TCP (target >= 0.8x), SE-VPN against
  // SoftEther's client (>= 1.0x) and OpenVPN over TCP (>= 1.2x), <= 10 CPU s/GiB; SE-VPN with one
  // TCP connection against several. With --impair DELAY_MS,LOSS (e.g. 40,0.005) the node's
  // traffic is delayed and lost both ways (the rig's NFQUEUE), as on a long lossy path.
  const argImpair = process.argv.indexOf('--impair');
  const impair = argImpair > 0 ? process.argv[argImpair + 1]!.split(',').map(Number) : null;
  if (impair) rig.impair('n1', { delayMs: impair[0]!, loss: impair[1] ?? 0 });
  console.log(
    `\nEvery protocol to one SoftEther 5.01 server, same run (MiB/s, best of 2${
      impair ? `; ${impair[0]} ms each way, ${((impair[1] ?? 0) * 100).toFixed(1)} % loss` : ''
    })`,
  );
  console.log(
    "  vpnclient = Debian's softether-vpnclient, a tap adapter, UDP acceleration off (its processes' CPU only)",
  );
  console.log('  client                                   MiB/s   CPU s/GiB');
  const row = (label: string, key: string, r: { mibs: number; cpuPerGiB: number }): void => {
    console.log(`  ${label.padEnd(40)} ${r.mibs.toFixed(1).padStart(7)}   ${r.cpuPerGiB.toFixed(1).padStart(6)}`);
    sheet.set(`${key}`, r.mibs, 'MiB/s', 'higher');
    sheet.set(`${key} CPU`, r.cpuPerGiB, 's/GiB', 'lower');
  };
  const bestOf = async (run: () => Promise<{ mibs: number; cpuPerGiB: number }>) => {
    const runs = SHORT ? [await run()] : [await run(), await run()];
    return runs.sort((a, b) => b.mibs - a.mibs)[0]!;
  };
  type Result = { mibs: number; cpuPerGiB: number };
  let ovpnUdp: Result | null = null;
  let ovpnTcp: Result | null = null;
  if (ONLY !== 'se') {
    ovpnUdp = await bestOf(() => gatehopDownload(rig, 'n1', 'udp'));
    ovpnTcp = await bestOf(() => gatehopDownload(rig, 'n1', 'tcp'));
    const sstp = await bestOf(() => gatehopDownload(rig, 'n1', 'sstp'));
    row('Gatehop OpenVPN UDP', 'se-server openvpn-udp', ovpnUdp);
    row('Gatehop OpenVPN TCP', 'se-server openvpn-tcp', ovpnTcp);
    row('Gatehop SSTP (TLS 1.3)', 'se-server sstp', sstp);
    console.log(`    SSTP / OpenVPN TCP: ${(sstp.mibs / ovpnTcp.mibs).toFixed(2)}×`);
    sheet.set('sstp / openvpn-tcp', sstp.mibs / ovpnTcp.mibs, '×', 'higher');
  }
  for (const k of CONNS) {
    const se = await bestOf(() => gatehopDownload(rig, 'n1', 'sevpn', 'native', k));
    const vc = await bestOf(() => softetherClientDownload(rig, 'n1', k));
    const conns = `${k} connection${k > 1 ? 's' : ''}`;
    row(`Gatehop SE-VPN, ${conns}`, `se-server sevpn x${k}`, se);
    row(`vpnclient, ${conns}`, `se-server vpnclient x${k}`, vc);
    sheet.set(`sevpn / vpnclient x${k}`, se.mibs / vc.mibs, '×', 'higher');
    if (ovpnTcp) sheet.set(`sevpn / openvpn-tcp x${k}`, se.mibs / ovpnTcp.mibs, '×', 'higher');
    const vsOpenVpn =
      ovpnTcp && ovpnUdp
        ? `   SE-VPN / OpenVPN TCP: ${(se.mibs / ovpnTcp.mibs).toFixed(2)}×   SE-VPN / OpenVPN UDP: ${(se.mibs / ovpnUdp.mibs).toFixed(2)}×`
        : '';
    console.log(`    SE-VPN / vpnclient: ${(se.mibs / vc.mibs).toFixed(2)}×${vsOpenVpn}`);
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
  const unknown = CASES?.filter((c) => !cases.some(([node, proto]) => `${node}-${proto}` === c));
  if (unknown?.length) throw new Error(`--cases: no row ${unknown.join(', ')} (n1-udp n1-tcp o1-udp o2-udp o3-tcp)`);
  const firstTable = ONLY === null || ONLY === 'ovpn' ? cases : [];
  for (const [node, proto, label] of firstTable.filter(([n, p]) => !CASES || CASES.includes(`${n}-${p}`))) {
    const id = `${node}-${proto}`;
    const n = await nativeDownload(rig, node, proto);
    const g = await gatehopDownload(rig, node, proto, 'native');
    const j = SHORT ? null : await gatehopDownload(rig, node, proto, 'javascript');
    console.log(
      `  ${label.padEnd(40)} ${f(n.mibs, 7)} ${f(n.cpuPerGiB, 4)} | ${f(g.mibs, 7)} ${f(g.mibs / n.mibs, 6, 2)} ${f(g.user, 5)} ${f(g.system, 4)} ${f(g.cpuPerGiB, 4)} | ${
        j ? `${f(j.mibs, 6)} ${f(j.mibs / n.mibs, 6, 2)} ${f(j.cpuPerGiB, 5)}` : '     (--short)'
      }`,
    );
    sheet.set(`${id} openvpn`, n.mibs, 'MiB/s', 'higher');
    sheet.set(`${id} openvpn CPU`, n.cpuPerGiB, 's/GiB', 'lower');
    sheet.set(`${id} gatehop`, g.mibs, 'MiB/s', 'higher');
    sheet.set(`${id} gatehop CPU`, g.cpuPerGiB, 's/GiB', 'lower');
    sheet.set(`${id} gatehop / openvpn`, g.mibs / n.mibs, '×', 'higher');
    console.log(
      `  ${''.padEnd(40)} its thread's collections per GiB: ${f(g.markCompacts, 1)} mark-compacts, ${f(g.scavenges, 1)} scavenges${
        j ? ` (js: ${f(j.markCompacts, 1)}, ${f(j.scavenges, 1)})` : ''
      }`,
    );
    sheet.set(`${id} gatehop mark-compacts`, g.markCompacts, '/GiB', 'lower');
    if (j) {
      sheet.set(`${id} js`, j.mibs, 'MiB/s', 'higher');
      sheet.set(`${id} js CPU`, j.cpuPerGiB, 's/GiB', 'lower');
      sheet.set(`${id} js mark-compacts`, j.markCompacts, '/GiB', 'lower');
    }
  }
  if (ONLY !== 'ovpn' && !(CASES && !ONLY)) await sameServerTable();
  sheet.save();
} finally {
  rig.down();
}
