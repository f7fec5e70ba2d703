/**
 * The ceiling for Gatehop's own tunnel: Debian's openvpn client (kernel TUN) downloading the rig's
 * large file through each server kind, in one run. Root only.
 * Usage: npm run bench:rig-native [-- --mib N]
 */
import { Rig } from '../test/rig/rig.js';

const argMib = process.argv.indexOf('--mib');
const MIB = argMib > 0 ? Number(process.argv[argMib + 1]) : 100;
const rig = await Rig.up({
  nodes: 1,
  openvpn: ['gcm-udp', 'cbc-udp', 'gcm-tcp', 'cbc-tcp'],
  client: true,
  bigMib: MIB,
});
try {
  console.log(`native openvpn client, ${MIB} MiB download through each server (MiB/s, best of 2)`);
  const cases: Array<[string, 'tcp' | 'udp', string]> = [
    ['n1', 'udp', 'SoftEther 5.01, UDP, AES-128-CBC/SHA1'],
    ['n1', 'tcp', 'SoftEther 5.01, TCP, AES-128-CBC/SHA1'],
    ['o1', 'udp', 'OpenVPN 2.6, UDP, AES-256-GCM'],
    ['o2', 'udp', 'OpenVPN 2.6, UDP, AES-128-CBC/SHA1'],
    ['o3', 'tcp', 'OpenVPN 2.6, TCP, AES-256-GCM'],
    ['o4', 'tcp', 'OpenVPN 2.6, TCP, AES-128-CBC/SHA1'],
  ];
  for (const [node, proto, label] of cases) {
    const client = await rig.nativeClient(node, proto);
    let best = 0;
    for (let i = 0; i < 2; i++) {
      const out = client
        .curl(['-o', '/dev/null', '-w', '%{speed_download} %{size_download}', rig.url('/big')])
        .split(' ');
      if (Number(out[1]) !== rig.state.bigBytes) throw new Error(`short transfer through ${node}`);
      best = Math.max(best, Number(out[0]) / (1 << 20));
    }
    await client.close();
    console.log(`  ${label.padEnd(40)} ${best.toFixed(1).padStart(6)}`);
  }
} finally {
  rig.down();
}
