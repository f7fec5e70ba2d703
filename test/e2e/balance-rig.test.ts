import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ConfigInput, type RunningApp } from '../../core/app/index.js';
import type { Tunnel } from '../../core/egress/index.js';
import type { NodeTunnel } from '../../core/groups/index.js';
import { curl, sha256 } from '../helpers/curl.js';
import { eventually, until } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { fileLogger, rigAppConfig, startRigCore } from '../helpers/rig-app.js';
import { socksGet } from '../helpers/socks-http.js';
import { Rig } from '../rig/rig.js';

/**
 * Several tunnels at once (groups.balance) against real SoftEther and OpenVPN servers: sessions
 * spread over the members, a killed member costs only its own sessions and is replaced, a member
 * whose probe fails is avoided until one probe passes. Sizes are modest; `npm run bench:balance`
 * measures the aggregate speed.
 */
describe.skipIf(!isRoot)('balancing over several tunnels on the rig (issue #15)', () => {
  let rig: Rig;
  let app: RunningApp | null = null;
  let dataDir = '';

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 3, openvpn: ['gcm-udp'], bigMib: 2 });
  }, 240_000);

  afterEach(async () => {
    await app?.stop();
    app = null;
    for (const n of rig.state.nodes) rig.failHealth(n.name, null);
  });

  afterAll(() => rig?.down());

  const exitOf = (nodeId: string): string => rig.node(nodeId).exitAddress;
  const port = (): number => app!.listening.proxy.port;
  const memberNodes = (a: RunningApp): string[] => a.manager!.members.map((m) => (m.egress as NodeTunnel).nodeId);

  async function start(tunnels: number, over: ConfigInput = {}): Promise<RunningApp> {
    // A data dir per test: node history (a node killed by an earlier test) must not steer this one.
    dataDir = mkdtempSync(join(tmpdir(), 'gh-balance-'));
    const config = rigAppConfig(rig, dataDir, {
      ...over,
      groups: { balance: { tunnels, strategy: 'round-robin' }, ...over.groups },
    });
    app = await startRigCore(config, fileLogger(join(dataDir, 'gatehop.log'), process.env.GH_TEST_LOG_LEVEL), {
      tunnels,
    });
    return app;
  }

  const exitsOf = async (n: number): Promise<string[]> => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      try {
        out.push((await socksGet(port(), rig.state.inetAddress, '/ip', 20_000)).body.toString());
      } catch (err) {
        // Said on failure: which member it was and what its tunnel and stack had seen.
        const dump = app!.manager!.members.map((m) => {
          const t = m.egress as Tunnel;
          return `${t.id} ${t.nodeId} ${JSON.stringify(t.diagnostics())}`;
        });
        throw new Error(`request ${i + 1} failed: ${(err as Error).message}\n${dump.join('\n')}`);
      }
    }
    return out;
  };

  it('tunnels: 3, round-robin: new sessions take each member in turn, and parallel downloads through all three arrive intact', async () => {
    const a = await start(3);
    const members = memberNodes(a).map(exitOf);
    expect(new Set(members).size).toBe(3);
    // Nothing else leases while this runs: six sessions are two per member, in member order.
    expect(await exitsOf(6)).toEqual([...members, ...members]);
    const downloads = await Promise.all(
      Array.from({ length: 6 }, () =>
        curl(['--max-time', '120', '--socks5-hostname', `127.0.0.1:${port()}`, rig.url('/big')]),
      ),
    );
    for (const d of downloads) {
      expect(d.stderr).toBe('');
      expect(sha256(d.stdout)).toBe(rig.state.bigSha256);
    }
    // Each member carried downloads (a tunnel counts a stream's bytes when the proxy closes it, just after curl ends).
    await eventually(
      () => a.manager!.members.every((m) => m.egress.stats.bytesDown > rig.state.bigBytes),
      10_000,
      () =>
        `every member carried a download (${a.manager!.members.map((m) => m.egress.stats.bytesDown).join(', ')} bytes)`,
    );
  }, 240_000);

  it('a member whose HTTP probe answers 500 is avoided within interval × maxFails and takes sessions again after one good probe', async () => {
    // Four tunnels on four nodes: no node to spare, so the sick member stays (down) and is probed on.
    const a = await start(4, {
      groups: {
        urlTest: { url: rig.url('/generate_204'), intervalMs: 600_000 },
        balance: { tunnels: 4, strategy: 'round-robin' },
        probes: [{ type: 'http', url: rig.url('/health'), intervalMs: 1_000, timeoutMs: 3_000 }],
        failFilter: { maxFails: 2, failTimeoutMs: 30_000 },
      },
    });
    const sick = a.controller!.members[0]!.node.id;
    rig.failHealth(sick, 500);
    const failedAt = Date.now();
    await eventually(() => a.controller!.failFilter.isDead(sick), 15_000, `${sick} marked dead`);
    const deadAfter = Date.now() - failedAt;
    expect(await exitsOf(6)).not.toContain(exitOf(sick));
    rig.failHealth(sick, null);
    await eventually(
      () => a.controller!.failFilter.allows(sick) && a.manager!.members.every((m) => !m.down),
      15_000,
      `${sick} up again after a good probe`,
    );
    expect(await exitsOf(8)).toContain(exitOf(sick));
    console.log(`probe failing on ${sick}: dead after ${deadAfter} ms (interval 1 s × maxFails 2)`);
  }, 240_000);
  it('a member killed under load: only its sessions fail, new sessions keep succeeding through the others, and another node replaces it', async () => {
    const a = await start(3);
    const c = a.controller!;
    const victim = c.members[0]!.node.id;
    const spare = rig.state.nodes.map((n) => n.name).find((n) => !memberNodes(a).includes(n))!;
    // Six downloads paced by the server (2 MiB at 256 KiB/s, 8 s): two per member. Paced at the
    // server, not by curl: a client-side limit lets the proxy's socket buffers take the whole file
    // early, and a victim's download that had left the tunnel before the kill would survive it.
    const downloads = Array.from({ length: 6 }, () =>
      curl(['--max-time', '120', '--socks5-hostname', `127.0.0.1:${port()}`, rig.url('/big?rate=262144')]),
    );
    await eventually(() => a.manager!.members.every((m) => m.sessions === 2), 20_000, 'two downloads on each member');
    // Flowing, not just connecting: a session that has moved nothing yet would move to another member.
    await eventually(
      () => [...a.proxy.sessions].filter((x) => x.bytesDown > 0).length === 6,
      20_000,
      'all six downloads flowing',
    );
    const killedAt = Date.now();
    rig.kill(victim);
    // New sessions right after the kill: each one must succeed (one that was connecting through the
    // victim when it was found dead moves to another member), none by the dead node.
    const after: Array<{ ms: number; ip: string }> = [];
    while (Date.now() - killedAt < 3_000) {
      const r = await socksGet(port(), rig.state.inetAddress, '/ip', 20_000);
      after.push({ ms: Date.now() - killedAt, ip: r.body.toString() });
    }
    expect(after.length).toBeGreaterThan(0);
    expect(after.map((x) => x.ip)).not.toContain(exitOf(victim));
    const replacedAfter = await until(
      () => (memberNodes(a).includes(spare) ? Date.now() - killedAt : undefined),
      60_000,
      `${spare} replacing ${victim}`,
    );
    const results = await Promise.all(downloads);
    const intact = results.filter((r) => r.code === 0 && sha256(r.stdout) === rig.state.bigSha256).length;
    console.log(
      `member ${victim} killed: first new session ok after ${after[0]!.ms} ms, ${after.length} new sessions ok in 3 s, replaced by ${spare} after ${replacedAfter} ms, ${intact}/6 downloads intact`,
    );
    // The victim's two downloads die with it (they had data in flight); the other four finish.
    expect(intact).toBe(4);
    expect(memberNodes(a)).not.toContain(victim);
  }, 240_000);
});
