import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type ConfigInput, type RunningApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';
import { openTunnel, type Tunnel } from '../../core/egress/index.js';
import type { NodeTunnel } from '../../core/groups/index.js';
import { SstpClient } from '../../core/sstp/index.js';
import { curl, sha256 } from '../helpers/curl.js';
import { eventually, until } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { fileLogger, rigAppConfig } from '../helpers/rig-app.js';
import { Rig, type RigNode } from '../rig/rig.js';

/**
 * MS-SSTP (issue #22) against the rig's SoftEther servers (the patched Debian binary answers SSTP,
 * test/rig/lib/patch-sstp.py), each with a certificate for its DDNS name from the rig's CA: big
 * downloads and DNS through SSTP tunnels, refusals named, a switch OpenVPN → SSTP → OpenVPN under
 * load, and a filter that breaks OpenVPN handshakes, where Gatehop comes up on SSTP by itself and
 * learns to go there first.
 */
describe.skipIf(!isRoot)('SSTP tunnels on the rig (issue #22)', () => {
  let rig: Rig;
  let ca: string;
  const tunnels: Tunnel[] = [];
  let app: RunningApp | null = null;
  const lifts: Array<() => void> = [];

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 3, openvpn: ['gcm-udp', 'cbc-tcp'], bigMib: 64 });
    ca = readFileSync(rig.state.caFile, 'utf8');
  }, 240_000);
  afterEach(async () => {
    await Promise.all(tunnels.splice(0).map((t) => t.close()));
    await app?.stop();
    app = null;
    for (const lift of lifts.splice(0)) lift();
  });
  afterAll(() => rig?.down());

  /** The rig's CA as the user's extra CA (tunnel.nodeCa): it vouches under the DDNS name only. */
  const sstpSpec = (n: RigNode, over: { serverName?: string; ca?: string[] } = {}) => ({
    protocol: 'sstp' as const,
    host: n.vpnAddress,
    port: 443,
    trust: { profileCa: [], extraRoots: over.ca ?? [ca], serverName: over.serverName ?? n.ddns! },
  });

  /** HTTP/1.0 GET through a tunnel by address; the body hashed as it streams. */
  async function fetchThrough(t: Tunnel, path: string): Promise<{ bytes: number; sha: string; body: string }> {
    const c = await t.connectTcp(rig.state.inetAddress, 80, { timeoutMs: 10_000 });
    const hash = createHash('sha256');
    let head = Buffer.alloc(0);
    let inBody = false;
    let bytes = 0;
    let small = '';
    c.stream.on('data', (chunk: Buffer) => {
      if (!inBody) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        inBody = true;
        chunk = head.subarray(end + 4);
      }
      bytes += chunk.length;
      hash.update(chunk);
      if (small.length < 200) small += chunk.toString('latin1');
    });
    c.stream.write(`GET ${path} HTTP/1.0\r\nHost: files.test\r\n\r\n`);
    await new Promise<void>((resolve, reject) => {
      c.stream.once('end', () => resolve());
      c.stream.once('error', reject);
    });
    c.stream.destroy();
    return { bytes, sha: hash.digest('hex'), body: small };
  }

  it.each([true, false])(
    'carries 64 MiB intact and DNS over UDP, leaving by the node its own exit (threads: %s)',
    async (threads) => {
      const n = rig.softether[0]!;
      expect(n.sstp).toBe(true);
      const t = await openTunnel({
        id: `sstp-${threads}`,
        nodeId: n.name,
        link: sstpSpec(n),
        logger: silentLogger(),
        threads,
      });
      tunnels.push(t);
      expect(t.protocol).toBe('sstp');
      // Names through the tunnel: SecureNAT's DNS proxy, over UDP inside PPP.
      expect(await t.resolve('files.test')).toEqual([rig.state.inetAddress]);
      expect((await fetchThrough(t, '/ip')).body).toBe(n.exitAddress);
      const big = await fetchThrough(t, '/big');
      expect(big.bytes).toBe(rig.state.bigBytes);
      expect(big.sha).toBe(rig.state.bigSha256);
      expect(t.diagnostics()).toMatchObject({ link: 'up', responsive: true });
    },
    120_000,
  );

  it('a paused server is noticed as silent within unresponsiveMs, and heard again once it resumes', async () => {
    const n = rig.softether[2]!;
    const t = await openTunnel({
      id: 'sstp-silent',
      nodeId: n.name,
      link: sstpSpec(n),
      logger: silentLogger(),
      threads: false,
      unresponsiveMs: 4_000,
    });
    tunnels.push(t);
    const seen: Array<{ ok: boolean; quietMs: number }> = [];
    t.onLiveness((ok, quietMs) => seen.push({ ok, quietMs }));
    rig.pause(n.name);
    try {
      await eventually(() => seen.some((e) => !e.ok), 30_000, 'the tunnel called silent');
    } finally {
      rig.resume(n.name);
    }
    // The gateway answered pings before, so the limit applied was unresponsiveMs (4 s), not the
    // one kept for a gateway that never answers (twice SSTP's 5 s keepalive and a second: 11 s).
    // The tunnel's own count of the silence, not this test's clock: a busy machine's late ticks
    // restart that count rather than stretch it.
    expect(seen[0]!.quietMs).toBeGreaterThanOrEqual(4_000);
    expect(seen[0]!.quietMs).toBeLessThan(11_000);
    await eventually(() => seen.at(-1)?.ok === true, 15_000, 'heard again after resume');
    expect((await fetchThrough(t, '/ip')).body).toBe(n.exitAddress);
  }, 60_000);

  it.each([true, false])(
    'a killed server ends the tunnel at once, with the reason, not after a silence (threads: %s; #44)',
    async (threads) => {
      const n = rig.softether[1]!;
      const t = await openTunnel({
        id: `sstp-killed-${threads}`,
        nodeId: n.name,
        link: sstpSpec(n),
        logger: silentLogger(),
        threads,
        // Far beyond the wait below: only the link's own end can close the tunnel in time.
        unresponsiveMs: 120_000,
      });
      tunnels.push(t);
      let reason: string | null = null;
      t.onClose((r) => (reason = r));
      rig.kill(n.name);
      try {
        await eventually(() => reason !== null, 10_000, 'the tunnel closed by the link');
      } finally {
        await rig.restart(n.name);
      }
      expect(reason).toMatch(/closed the SSTP connection/);
    },
    90_000,
  );

  it('refuses a certificate for another name, and one from a CA it does not trust, naming the node', async () => {
    const n = rig.softether[1]!;
    const wrongName = openTunnel({
      id: 'sstp-wrong-name',
      nodeId: n.name,
      link: sstpSpec(n, { serverName: 'rig-node9.opengw.net' }),
      logger: silentLogger(),
      threads: false,
      connectTimeoutMs: 10_000,
    });
    await expect(wrongName).rejects.toMatchObject({
      code: 'GH_ERR_NODE_CERT_REFUSED',
      message: expect.stringMatching(/rig-node9\.opengw\.net .*certificate is refused.*rig-node2\.opengw\.net/),
    });
    const untrusted = openTunnel({
      id: 'sstp-no-ca',
      nodeId: n.name,
      link: sstpSpec(n, { ca: [] }),
      logger: silentLogger(),
      threads: false,
      connectTimeoutMs: 10_000,
    });
    await expect(untrusted).rejects.toMatchObject({
      code: 'GH_ERR_NODE_CERT_REFUSED',
      message: expect.stringMatching(/rig-node2\.opengw\.net .*certificate is refused/),
    });
  });

  it('a refused password is GH_ERR_SSTP_AUTH_FAILED; PAP, which SoftEther offers last, works when MS-CHAPv2 is not taken', async () => {
    const n = rig.softether[1]!;
    const bad = new SstpClient({
      host: n.vpnAddress,
      port: 443,
      trust: { profileCa: [], extraRoots: [ca], serverName: n.ddns! },
      password: 'not-vpn',
      logger: silentLogger(),
    });
    bad.on('error', () => {});
    await expect(bad.connect({ timeoutMs: 20_000 })).rejects.toMatchObject({
      code: 'GH_ERR_SSTP_AUTH_FAILED',
      message: expect.stringMatching(/MS-CHAPv2 refused: the user name or password was refused/),
    });
    const pap = new SstpClient({
      host: n.vpnAddress,
      port: 443,
      trust: { profileCa: [], extraRoots: [ca], serverName: n.ddns! },
      auth: ['pap'],
      logger: silentLogger(),
    });
    pap.on('error', () => {});
    try {
      const cfg = await pap.connect({ timeoutMs: 30_000 });
      expect(cfg).toMatchObject({
        auth: 'pap',
        bindingHash: 'sha256',
        address: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/),
      });
    } finally {
      pap.close();
    }
  }, 60_000);

  /** A core over the rig; the config layers can be changed and reloaded (Settings does the same). */
  async function start(
    tag: string,
    tunnel: ConfigInput['tunnel'],
    over: ConfigInput = {},
  ): Promise<{
    app: RunningApp;
    reload: (t: ConfigInput['tunnel']) => Promise<unknown>;
    log: string;
    dataDir: string;
  }> {
    const dataDir = over.dataDir ?? mkdtempSync(join(tmpdir(), `gh-sstp-${tag}-`));
    const log = join(dataDir, `${tag}.log`);
    // The same input rigAppConfig builds from, so a reload changes only what the test changes.
    const base = {
      egress: 'vpngate',
      api: [rig.state.apiUrl],
      vpngate: { allowPrivateNodes: true },
      mode: 'global', // the rig's internet is in 10/8: through the tunnel, not the LAN rule
      listen: '127.0.0.1:0',
      admin: 'off',
      dataDir,
      logFile: 'off',
      ...over,
      tunnel,
    } as ConfigInput;
    const fromFlags: ConfigInput = {
      ...base,
      groups: { urlTest: { url: rig.url('/generate_204'), intervalMs: 600_000 }, ...over.groups },
      switching: { healthDnsName: 'files.test', ...over.switching },
    };
    const layers = { fromFile: {} as ConfigInput, fromFlags };
    const config = rigAppConfig(rig, dataDir, base);
    const a = await startApp(config, fileLogger(log), { layers, readLayers: () => layers });
    app = a;
    return {
      app: a,
      log,
      dataDir,
      reload: async (t) => {
        layers.fromFlags = { ...layers.fromFlags, tunnel: t };
        return a.reload();
      },
    };
  }

  const exitOf = (id: string): string => rig.node(id).exitAddress;
  const socksIp = async (port: number): Promise<string> => {
    const r = await curl(['--socks5-hostname', `127.0.0.1:${port}`, rig.url('/ip')]);
    if (r.code !== 0) throw new Error(`curl /ip: ${r.stderr}`);
    return r.stdout.toString();
  };

  it('switches OpenVPN → SSTP → OpenVPN make-before-break under load: every download intact, new sessions on the new tunnel', async () => {
    const [n1, n2, n3] = rig.softether.map((n) => n.name) as [string, string, string];
    const s = await start(
      'switch',
      { protocols: ['openvpn'], nodeCa: rig.state.caFile },
      { groups: { mode: 'manual', defaultNode: n1 } },
    );
    const a = s.app;
    const c = a.controller!;
    const port = a.listening.proxy.port;
    await eventually(() => c.active?.node.id === n1, 60_000, `${n1} active`);
    expect(c.active!.egress.protocol).toBe('openvpn');
    // Downloads that span both switches (rate-limited), started on the OpenVPN tunnel.
    const pull = (): ReturnType<typeof curl> =>
      curl(['--max-time', '120', '--limit-rate', '6M', '--socks5-hostname', `127.0.0.1:${port}`, rig.url('/big')]);
    const first = [pull(), pull()];
    await until(() => (a.proxy.stats.sessionsActive >= 2 ? true : undefined), 10_000, 'both downloads running');
    await s.reload({ protocols: ['sstp'], nodeCa: rig.state.caFile });
    expect(await c.switchNow({ nodeId: n2 }).done).toMatchObject({ outcome: 'switched', to: n2, protocol: 'sstp' });
    expect(c.active!.egress.protocol).toBe('sstp');
    expect(await socksIp(port)).toBe(exitOf(n2));
    const second = [pull()];
    await until(
      () => (a.proxy.stats.sessionsActive >= 3 ? true : undefined),
      10_000,
      'the download on the SSTP tunnel running',
    );
    await s.reload({ protocols: ['openvpn'], nodeCa: rig.state.caFile });
    expect(await c.switchNow({ nodeId: n3 }).done).toMatchObject({ outcome: 'switched', to: n3, protocol: 'openvpn' });
    expect(await socksIp(port)).toBe(exitOf(n3));
    // Both older tunnels drain: the SSTP one and the first OpenVPN one still carry their downloads.
    expect(a.manager!.draining.map((d) => (d.egress as NodeTunnel).protocol).sort()).toEqual(['openvpn', 'sstp']);
    for (const r of await Promise.all([...first, ...second])) {
      expect(r.stderr).toBe('');
      expect(r.stdout.length).toBe(rig.state.bigBytes);
      expect(sha256(r.stdout)).toBe(rig.state.bigSha256);
    }
    await eventually(() => a.manager!.draining.length === 0, 30_000, 'drained tunnels closed');
    expect(a.manager!.stats.forceClosedSessions).toBe(0);
  }, 180_000);

  it('behind a filter that breaks OpenVPN but passes TLS, comes up on SSTP by itself, learns it, and later switches go straight to SSTP', async () => {
    lifts.push(rig.filterOpenVpn());
    const softether = rig.softether.map((n) => n.name);
    // Short OpenVPN deadlines for the test; SSTP's CA is the rig's. The default protocol order.
    const connectTimeoutMs = 5_000;
    const maxAttempts = 3;
    const s = await start('filtered', { nodeCa: rig.state.caFile }, { groups: { connectTimeoutMs, maxAttempts } });
    const a = s.app;
    const c = a.controller!;
    const port = a.listening.proxy.port;
    // The longest a first switch may take here: each attempt tries the three protocols, each within its connect timeout.
    const firstSwitchMs = maxAttempts * 3 * connectTimeoutMs + 30_000;
    await eventually(() => c.active !== null, firstSwitchMs, 'a tunnel comes up');
    expect(c.active!.egress.protocol).toBe('sstp');
    expect(softether).toContain(c.active!.node.id);
    // OpenVPN got no answer from that very node while SSTP worked there: learnt at once (#44), before
    // the tunnel was made active. The network is this machine's way out, which the other rigs'
    // interfaces beside it do not change (#58): the lesson stays.
    expect(c.protocols.preferred).toBe('sstp');
    expect(await socksIp(port)).toBe(exitOf(c.active!.node.id));
    expect(c.protocols.preferred).toBe('sstp');
    expect(c.protocols.reason).toMatch(/OpenVPN got no answer from rig-node\d .* while SSTP worked there/);
    const learned = readFileSync(s.log, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"protocol-preference"'));
    expect(learned).toHaveLength(1);
    // From now on a switch tries SSTP first: no new OpenVPN attempt on the next node.
    const next = softether.find((id) => id !== c.active!.node.id)!;
    const nextNode = a.nodes!.nodes.find((n) => n.id === next)!;
    const triedBefore = c.protocolsFor(nextNode).find((p) => p.protocol === 'openvpn')?.record?.tried ?? 0;
    expect(await c.switchNow({ nodeId: next }).done).toMatchObject({ outcome: 'switched', protocol: 'sstp' });
    const after = c.protocolsFor(nextNode);
    expect(after[0]!.protocol).toBe('sstp');
    expect(after.find((p) => p.protocol === 'openvpn')?.record?.tried ?? 0).toBe(triedBefore);
    // Remembered for this network: a restart on it starts with SSTP first.
    await a.stop();
    app = null;
    const again = await start(
      'filtered-again',
      { nodeCa: rig.state.caFile },
      { dataDir: s.dataDir, groups: { connectTimeoutMs: 5_000 } },
    );
    expect(again.app.controller!.protocols.preferred).toBe('sstp');
    await eventually(() => again.app.controller!.active !== null, 30_000, 'up again');
    expect(again.app.controller!.active!.egress.protocol).toBe('sstp');
  }, 240_000);
});
