/**
 * core/ovpn + core/netstack throughput against Debian's openvpn client (kernel TUN) on the same
 * rig servers in one run: one HTTP download of the rig's large file each way, MiB/s, ratio, and
 * CPU seconds per GiB of this process (which hosts the whole tunnel). Then core/sstp against the
 * same SoftEther server in the same run as OpenVPN over TCP (both TLS over TCP): the ratio to it.
 * Root only. Usage: npm run bench:tunnel [-- --mib N]
 */
import { readFileSync } from 'node:fs';
import { silentLogger } from '../core/common/index.js';
import { openLink, stackOptionsOf, type LinkSpec } from '../core/egress/index.js';
import { Stack } from '../core/netstack/index.js';
import { Rig } from '../test/rig/rig.js';

const argMib = process.argv.indexOf('--mib');
const MIB = argMib > 0 ? Number(process.argv[argMib + 1]) : 64;

async function gatehopDownload(rig: Rig, node: string, proto: 'tcp' | 'udp' | 'sstp'): Promise<{ mibs: number; cpuPerGiB: number }> {
  const n = rig.node(node);
  const spec: LinkSpec =
    proto === 'sstp'
      ? { protocol: 'sstp', host: n.vpnAddress, port: 443, serverName: n.ddns!, ca: [readFileSync(rig.state.caFile, 'utf8')] }
      : { protocol: 'openvpn', profileText: readFileSync(n.profiles[proto]!, 'utf8') };
  const { link, config } = await openLink(spec, { logger: silentLogger(), timeoutMs: 30_000 });
  const stack = new Stack({ ...stackOptionsOf(config), output: (p) => link.write(p) });
  link.onPacket((p) => stack.input(p));
  const client = link;
  try {
    const s = await stack.connectTcp(rig.state.inetAddress, 80);
    s.on('error', () => {});
    let n = 0;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    s.on('data', (c: Buffer) => (n += c.length));
    s.write('GET /big HTTP/1.1\r\nHost: files.test\r\nConnection: close\r\n\r\n');
    await new Promise((r) => s.once('end', r));
    const secs = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(c0);
    if (n < rig.state.bigBytes) throw new Error(`short download through ${node}`);
    return { mibs: n / secs / (1 << 20), cpuPerGiB: ((cpu.user + cpu.system) / 1e6) * ((1 << 30) / n) };
  } finally {
    stack.close();
    client.close();
  }
}

async function nativeDownload(rig: Rig, node: string, proto: 'tcp' | 'udp'): Promise<number> {
  const c = await rig.nativeClient(node, proto);
  try {
    const out = c.curl(['-o', '/dev/null', '-w', '%{speed_download}', rig.url('/big')]);
    return Number(out) / (1 << 20);
  } finally {
    await c.close();
  }
}

const rig = await Rig.up({ nodes: 1, openvpn: ['gcm-udp', 'cbc-udp', 'gcm-tcp'], client: true, bigMib: MIB });
try {
  console.log(`tunnel benchmark: ${MIB} MiB HTTP download through each server (MiB/s)`);
  console.log('  server                                   gatehop   native   ratio   gatehop CPU s/GiB');
  const cases: Array<[string, 'tcp' | 'udp', string]> = [
    ['n1', 'udp', 'SoftEther 5.01 UDP AES-128-CBC/SHA1'],
    ['n1', 'tcp', 'SoftEther 5.01 TCP AES-128-CBC/SHA1'],
    ['o1', 'udp', 'OpenVPN 2.6 UDP AES-256-GCM (EKM, V2)'],
    ['o2', 'udp', 'OpenVPN 2.6 UDP AES-128-CBC/SHA1'],
    ['o3', 'tcp', 'OpenVPN 2.6 TCP AES-256-GCM'],
  ];
  for (const [node, proto, label] of cases) {
    const g = await gatehopDownload(rig, node, proto);
    const n = await nativeDownload(rig, node, proto);
    console.log(`  ${label.padEnd(40)} ${g.mibs.toFixed(1).padStart(7)} ${n.toFixed(1).padStart(8)} ${(g.mibs / n).toFixed(2).padStart(7)}   ${g.cpuPerGiB.toFixed(1).padStart(6)}`);
  }
  // SSTP beside OpenVPN over TCP on the same SoftEther server, alternating, best of two each.
  console.log(`\nSSTP against OpenVPN over TCP, same SoftEther server, same run (MiB/s, best of 2; target ratio >= 0.8)`);
  console.log('  protocol                                 gatehop   CPU s/GiB');
  const best = async (proto: 'tcp' | 'sstp'): Promise<{ mibs: number; cpuPerGiB: number }> => {
    const runs = [await gatehopDownload(rig, 'n1', proto), await gatehopDownload(rig, 'n1', proto)];
    return runs.sort((a, b) => b.mibs - a.mibs)[0]!;
  };
  const ovpnTcp = await best('tcp');
  const sstp = await best('sstp');
  for (const [label, r] of [['OpenVPN TCP (SoftEther 5.01)', ovpnTcp], ['SSTP (SoftEther 5.01, TLS 1.3)', sstp]] as const) {
    console.log(`  ${label.padEnd(40)} ${r.mibs.toFixed(1).padStart(7)}   ${r.cpuPerGiB.toFixed(1).padStart(6)}`);
  }
  console.log(`  SSTP / OpenVPN TCP: ${(sstp.mibs / ovpnTcp.mibs).toFixed(2)}×`);
} finally {
  rig.down();
}
