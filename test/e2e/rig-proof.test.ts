import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRoot } from '../helpers/netns.js';
import { Rig } from '../rig/rig.js';

/** The proof that the rig is a faithful VPN Gate world: Debian's own openvpn client goes through
 *  every server kind and transport, fetches the large file intact and leaves by the node's exit. */
const VARIANTS = ['gcm-udp', 'gcm-tcp', 'cbc-udp', 'cbc-tcp', 'tlsauth-udp', 'tlscrypt-tcp', 'reneg-udp'];
const BIG_MIB = Number(process.env.GATEHOP_RIG_BIG_MIB ?? 16);

describe.skipIf(!isRoot)('rig proof: Debian openvpn client through every node', () => {
  let rig: Rig;
  const tmp = mkdtempSync(join(tmpdir(), 'gh-rig-'));

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 2, openvpn: VARIANTS, client: true, bigMib: BIG_MIB });
  }, 240_000);

  afterAll(() => {
    rig?.down();
    rmSync(tmp, { recursive: true, force: true });
  });

  async function prove(nodeName: string, proto: 'tcp' | 'udp'): Promise<void> {
    const node = rig.node(nodeName);
    const client = await rig.nativeClient(nodeName, proto);
    try {
      expect(client.curl([rig.url('/ip')])).toBe(node.exitAddress);
      const file = join(tmp, `${node.id}-${proto}.bin`);
      const size = client.curl(['-o', file, '-w', '%{size_download}', rig.url('/big')]);
      expect(Number(size)).toBe(rig.state.bigBytes);
      expect(createHash('sha256').update(readFileSync(file)).digest('hex')).toBe(rig.state.bigSha256);
      rmSync(file);
    } finally {
      await client.close();
    }
  }

  for (const proto of ['tcp', 'udp'] as const) {
    for (const n of ['n1', 'n2']) {
      it(
        `SoftEther node ${n} over ${proto}: large file intact, node's own exit address`,
        () => prove(n, proto),
        120_000,
      );
    }
  }
  VARIANTS.forEach((variant, i) => {
    const proto = variant.endsWith('tcp') ? 'tcp' : 'udp';
    it(`OpenVPN 2.6 ${variant}: large file intact, node's own exit address`, () => prove(`o${i + 1}`, proto), 120_000);
  });

  it('the internet namespace is unreachable without a tunnel, and nothing of the rig leaves by the default route', () => {
    // The root namespace must fail locally (an unreachable route), never send such packets off the machine.
    expect(() => execFileSync('ip', ['route', 'get', rig.state.inetAddress], { stdio: 'pipe' })).toThrow(
      /No route to host|unreachable/i,
    );
    expect(() => execFileSync('curl', ['-s', '--max-time', '3', rig.url('/ip')], { stdio: 'pipe' })).toThrow();
  });

  it('every node answers on its VPN port from the root namespace', () => {
    for (const n of rig.state.nodes) {
      const proto = n.profiles.tcp ? 'tcp' : 'udp';
      if (proto === 'tcp') execFileSync('bash', ['-c', `exec 3<>/dev/tcp/${n.vpnAddress}/${n.port}`]);
    }
  });

  it('the API look-alike serves the VPN Gate CSV and can be made to misbehave', async () => {
    const ok = await (await fetch(rig.state.apiPlainUrl)).text();
    const lines = ok.split('\r\n');
    expect(lines[0]).toBe('*vpn_servers');
    expect(lines[1]!.startsWith('#HostName,IP,Score,Ping,Speed,CountryLong,CountryShort,NumVpnSessions,Uptime')).toBe(
      true,
    );
    expect(lines.filter((l) => l.startsWith('rig-'))).toHaveLength(rig.state.nodes.length);
    expect(lines.at(-2)).toBe('*');
    const profile = Buffer.from(lines[2]!.split(',').at(-1)!, 'base64').toString();
    expect(profile).toMatch(/^remote 10\.\d+\.0\.\d+ 1194\r$/m);
    expect(profile).toMatch(/<cert>/);
    await rig.apiMode('html');
    expect(await (await fetch(rig.state.apiPlainUrl)).text()).toMatch(/<html>/);
    await rig.apiMode('fail');
    expect((await fetch(rig.state.apiPlainUrl)).status).toBe(503);
    await rig.apiMode('truncated');
    expect((await (await fetch(rig.state.apiPlainUrl)).text()).length).toBeLessThan(ok.length);
    await rig.apiMode('ok');
  });

  it('a paused node stops answering and answers again when resumed', async () => {
    rig.pause('n2');
    const node = rig.node('n2');
    expect(() =>
      execFileSync(
        'bash',
        ['-c', `timeout 2 bash -c 'exec 3<>/dev/tcp/${node.vpnAddress}/443; echo x >&3; read -t 1 <&3'`],
        { stdio: 'pipe' },
      ),
    ).toThrow();
    rig.resume('n2');
    const client = await rig.nativeClient('n2', 'tcp');
    expect(client.curl([rig.url('/ip')])).toBe(node.exitAddress);
    await client.close();
  }, 60_000);

  it('down removes every namespace and interface of the rig, and is idempotent', () => {
    const prefix = rig.state.prefix;
    rig.down();
    rig.down();
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toContain(prefix);
    expect(execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' })).not.toContain(prefix);
  });
});

describe.skipIf(!isRoot)('rig fault controls', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await Rig.up({ nodes: 1, openvpn: ['gcm-tcp'], client: false, bigMib: 1 });
  }, 240_000);
  afterAll(() => rig?.down());

  /** Time to complete a TCP handshake from the root namespace, or null when nothing answers. */
  function connectMs(nodeName: string, port = 1194): number | null {
    const n = rig.node(nodeName);
    const out = execFileSync(
      'bash',
      [
        '-c',
        `s=$(date +%s%N); timeout 2 bash -c 'exec 3<>/dev/tcp/${n.vpnAddress}/${port}' && echo $(( ($(date +%s%N) - s) / 1000000 )) || echo none`,
      ],
      {
        encoding: 'utf8',
      },
    ).trim();
    return out === 'none' ? null : Number(out);
  }

  it('impair adds delay to both directions and clearImpairment removes it', async () => {
    const before = connectMs('n1')!;
    rig.impair('n1', { delayMs: 150 });
    // The SYN and the SYN-ACK each wait 150 ms; the daemon starts asynchronously, so retry a little.
    let during = 0;
    for (let i = 0; i < 20 && during < 250; i++) {
      during = connectMs('n1') ?? 0;
      if (during < 250) await new Promise((r) => setTimeout(r, 100));
    }
    expect(during).toBeGreaterThanOrEqual(250);
    rig.clearImpairment('n1');
    // Removed means back below the impaired handshake (two 150 ms waits), not a wall-clock figure.
    expect(before).toBeLessThan(during);
    expect(connectMs('n1')!).toBeLessThan(during);
  }, 30_000);

  it('blackhole makes a node silent and unblackhole brings it back', () => {
    rig.blackhole('o1');
    expect(connectMs('o1')).toBeNull();
    rig.unblackhole('o1');
    expect(connectMs('o1')).not.toBeNull();
  }, 30_000);

  it('kill stops a server and restart brings it back with its configuration', async () => {
    rig.kill('o1');
    await new Promise((r) => setTimeout(r, 200));
    expect(connectMs('o1')).toBeNull();
    await rig.restart('o1');
    expect(connectMs('o1')).not.toBeNull();
  }, 60_000);

  it('rateLimit installs a token bucket on the node and clearRateLimit removes it', () => {
    rig.rateLimit('n1', 800);
    expect(
      execFileSync('ip', ['netns', 'exec', rig.node('n1').ns, 'tc', 'qdisc', 'show', 'dev', 'eth0'], {
        encoding: 'utf8',
      }),
    ).toMatch(/tbf .*rate 800Kbit/);
    rig.clearRateLimit('n1');
    expect(
      execFileSync('ip', ['netns', 'exec', rig.node('n1').ns, 'tc', 'qdisc', 'show', 'dev', 'eth0'], {
        encoding: 'utf8',
      }),
    ).not.toMatch(/tbf/);
  });
});
