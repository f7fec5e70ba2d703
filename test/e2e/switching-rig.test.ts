import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ConfigInput, type RunningApp } from '../../core/app/index.js';
import { WorkerTunnelEgress, type Tunnel } from '../../core/egress/index.js';
import type { WorkerTcpStream } from '../../core/egress/worker/worker-tcp-stream.js';
import type { SwitchRecord } from '../../core/groups/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { curl } from '../helpers/curl.js';
import { eventually, until } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { fileLogger, rigAppConfig, startRigCore } from '../helpers/rig-app.js';
import { socksGet } from '../helpers/socks-http.js';
import { Rig } from '../rig/rig.js';
import { seededSha256 } from '../rig/services/stream.mjs';

/**
 * Make-before-break switching against real SoftEther and OpenVPN servers: the core runs in this
 * process (so the test can switch and read its counters); the load is real curl processes plus
 * in-process short requests through the proxy's SOCKS5 port.
 */
describe.skipIf(!isRoot)('switching nodes under load on the rig', () => {
  let rig: Rig;
  let app: RunningApp | null = null;
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-switch-'));

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 2, openvpn: ['gcm-udp', 'cbc-tcp'], bigMib: 2 });
  }, 240_000);

  afterEach(async () => {
    await app?.stop();
    app = null;
  });

  afterAll(() => rig?.down());

  const exitOf = (nodeId: string): string => rig.node(nodeId).exitAddress;
  const nodeIds = (): string[] => rig.state.nodes.map((n) => n.name);

  async function start(over: ConfigInput = {}, logName = 'gatehop.log'): Promise<RunningApp> {
    app = await startRigCore(rigAppConfig(rig, dataDir, over), fileLogger(join(dataDir, logName)));
    return app;
  }

  const port = (): number => app!.listening.proxy.port;

  /** Each unfinished session with its upstream's windows, and each tunnel's streams as its worker sees them. */
  async function describeStalls(a: RunningApp): Promise<string> {
    const sessions = [...a.proxy.sessions].map((s) => {
      const ups = [...(s as unknown as { upstreams: Set<Duplex> }).upstreams];
      return {
        id: s.id,
        target: s.target,
        egress: s.egressId,
        bytesDown: s.bytesDown,
        upstreams: ups.map((u) =>
          'flowState' in u ? (u as WorkerTcpStream).flowState() : { readableLength: u.readableLength },
        ),
      };
    });
    const egresses = [...a.manager!.members.map((m) => m.egress), ...a.manager!.draining.map((d) => d.egress)];
    const workers = await Promise.all(
      egresses.map(async (e) =>
        e instanceof WorkerTunnelEgress
          ? {
              id: e.id,
              node: `${e.nodeId} (${e.protocol})`,
              diagnostics: e.diagnostics(),
              streams: await e.inspectStreams().catch((err: Error) => err.message),
            }
          : { id: e?.id },
      ),
    );
    return `stalled downloads:\n${JSON.stringify({ sessions, workers }, null, 1)}`;
  }

  /** 8 MiB through the proxy, read at 1 MiB/s by the client (curl | pv): its exit code and SHA-256. */
  const PACED_BYTES = 8 << 20;
  const pacedDownload = (): Promise<{ code: number | null; sha256: string }> =>
    new Promise((resolve) => {
      const p = spawn(
        'sh',
        [
          '-c',
          `curl -s --max-time 120 --socks5-hostname 127.0.0.1:${port()} ${rig.url(`/bytes/${PACED_BYTES}`)} | pv -q -L 1m | sha256sum`,
        ],
        { stdio: ['ignore', 'pipe', 'ignore'] },
      );
      let out = '';
      p.stdout.on('data', (b: Buffer) => (out += b.toString()));
      p.on('exit', (code) => resolve({ code, sha256: out.split(' ')[0]! }));
    });

  it('10 switches under 50 downloads and a short request every 50 ms: every download intact, no short request fails, new requests leave by the new node', async () => {
    // Each download is paced at 200 KB/s (10 MB/s together, VPN Gate-like node speeds): unpaced,
    // these local servers outrun the core and, with CI's other suites on the same two cores, can
    // drive it into overload where stalls are about CPU, not switching. `npm run bench:switch`
    // measures the unpaced case. The limits below are generous: latency is the benchmark's business.
    const a = await start({ switching: { maxDraining: 12 }, proxy: { connectTimeoutMs: 45_000 } }, 'load.log');
    const c = a.controller!;
    const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

    const downloads = Array.from({ length: 50 }, (_, i) =>
      new Promise((r) => setTimeout(r, i * 60)).then(() =>
        curl([
          '--max-time',
          '120',
          '--limit-rate',
          '200k',
          '--socks5-hostname',
          `127.0.0.1:${port()}`,
          rig.url('/big'),
        ]),
      ),
    );
    const shorts: Array<{ startedAt: number; ip?: string; err?: string }> = [];
    let running = true;
    const shortLoop = (async () => {
      const inflight: Promise<void>[] = [];
      while (running) {
        const rec: { startedAt: number; ip?: string; err?: string } = { startedAt: Date.now() };
        shorts.push(rec);
        inflight.push(
          // By address: a fresh SoftEther tunnel's DNS has failed here for ~15 s under this load
          // (core/egress/README.md, "Known problem"); this test is about switching, not DNS.
          socksGet(port(), rig.state.inetAddress, '/ip', 90_000).then(
            (r) => void (r.status === 200 ? (rec.ip = r.body.toString()) : (rec.err = `status ${r.status}`)),
            (err: Error) => void (rec.err = err.message),
          ),
        );
        await new Promise((r) => setTimeout(r, 50));
      }
      await Promise.all(inflight);
    })();

    // Said when a wait fails, so a stall shows whether requests hung (pending) or failed, and where.
    const describeShorts = (list: typeof shorts): string => {
      const pending = list.filter((s) => !s.ip && !s.err);
      const errs = [...new Set(list.filter((s) => s.err).map((s) => s.err))];
      const t = a.manager!.active as Tunnel | null;
      const tunnel = t && { id: t.id, node: t.nodeId, ...t.diagnostics() };
      const log = readFileSync(join(dataDir, 'load.log'), 'utf8').trim().split('\n').slice(-25).join('\n');
      return `${list.length} started, ${list.filter((s) => s.ip).length} answered, ${pending.length} pending (oldest ${pending.length ? Date.now() - pending[0]!.startedAt : 0} ms), errors: ${errs.join('; ') || 'none'}; active ${JSON.stringify(tunnel)}, draining ${a.manager!.draining.map((d) => `${d.egress.id}:${d.sessions}`).join(' ')}; log tail:\n${log}`;
    };
    const switches: Array<{ startedAt: number; record: SwitchRecord }> = [];
    const ids = nodeIds();
    try {
      for (let k = 0; k < 10; k++) {
        const current = c.active!.node.id;
        const target = ids[(ids.indexOf(current) + 1) % ids.length]!;
        const startedAt = Date.now();
        const record = await c.switchNow({ nodeId: target, reason: `test switch ${k + 1}` }).done;
        expect(record).toMatchObject({ outcome: 'switched', to: target });
        switches.push({ startedAt, record });
        // Let some requests run on this node before the next switch.
        const settled = shorts.length;
        await until(
          () => (shorts.slice(settled).filter((s) => s.ip).length >= 5 ? true : undefined),
          20_000,
          () => `requests on the new node after switch ${k + 1} (${describeShorts(shorts.slice(settled))})`,
        );
      }
    } finally {
      // Also on failure: the request loop must stop before the app does.
      running = false;
      await shortLoop;
    }
    // A download that has not ended 45 s after the last switch is stalled (each takes ~11 s paced):
    // its session's flow-control state on both sides of the worker boundary goes in the failure.
    const all = Promise.all(downloads);
    let stalled = '';
    if ((await Promise.race([all.then(() => 'done'), sleep(45_000).then(() => 'late')])) === 'late')
      stalled = await describeStalls(a);
    const results = await all;

    for (const r of results) {
      expect(r.stderr, stalled).toBe('');
      expect(r.stdout.length).toBe(rig.state.bigBytes);
      expect(sha(r.stdout)).toBe(rig.state.bigSha256);
    }
    expect(shorts.filter((s) => s.err)).toEqual([]);
    // A request that started after switch k finished (and before switch k+1 began) left by k's node,
    // never by an older one; k+1's only if its session took its egress after k+1 was promoted (this
    // process hosts both the proxy and the load, so a session may start a little after its request).
    for (let k = 0; k < switches.length; k++) {
      const doneAt = switches[k]!.record.at + switches[k]!.record.durationMs;
      const nextAt = switches[k + 1]?.startedAt ?? Number.POSITIVE_INFINITY;
      const after = shorts.filter((s) => s.startedAt > doneAt && s.startedAt < nextAt);
      expect(after.length).toBeGreaterThan(0);
      const allowed = [switches[k]!.record.to!, switches[k + 1]?.record.to].filter((n): n is string => !!n).map(exitOf);
      for (const s of after) expect(allowed).toContain(s.ip);
      expect(after.some((s) => s.ip === exitOf(switches[k]!.record.to!))).toBe(true);
    }
    // Drained egresses close once their last session ends; none was cut short.
    await eventually(() => a.manager!.draining.length === 0, 30_000, 'every drained egress closed');
    expect(a.manager!.stats.forceClosedSessions).toBe(0);
    expect(a.manager!.stats.drained).toBeGreaterThan(0);
  }, 240_000);

  it('a session connected but idle at switch time finishes on the new node without error (zero-progress retry)', async () => {
    const a = await start();
    const c = a.controller!;
    const { SocksClient } = await import('socks');
    const { socket } = await SocksClient.createConnection({
      proxy: { host: '127.0.0.1', port: port(), type: 5 },
      command: 'connect',
      destination: { host: 'files.test', port: 80 },
    });
    const from = c.active!.node.id;
    const to = nodeIds().find((n) => n !== from)!;
    await c.switchNow({ nodeId: to }).done;
    await eventually(() => a.proxy.stats.zeroProgressRetries === 1, 10_000, 'the idle session re-dialled');
    const parts: Buffer[] = [];
    socket.on('data', (b: Buffer) => parts.push(b));
    const ended = new Promise((r) => socket.once('end', r));
    socket.write('GET /ip HTTP/1.0\r\nHost: files.test\r\n\r\n');
    await ended;
    const text = Buffer.concat(parts).toString();
    expect(text).toMatch(/^HTTP\/1\.[01] 200/);
    expect(text.slice(text.indexOf('\r\n\r\n') + 4)).toBe(exitOf(to));
  }, 120_000);

  it("a Clash dashboard's pick (PUT /proxies/GATEHOP) is the group's `now` at once, and the switch is still make-before-break (#26)", async () => {
    const a = await start({ admin: '127.0.0.1:0' });
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const admin = a.listening.admin!.port;
    const from = a.controller!.active!.node.id;
    const to = nodeIds().find((n) => n !== from)!;
    // A download still running on the old node when the pick is made.
    const download = pacedDownload();
    await eventually(() => a.proxy.stats.bytesDown > 1_000_000, 30_000, 'the download under way');
    expect((await apiRequest(admin, 'PUT', '/proxies/GATEHOP', { token, body: { name: to } })).status).toBe(204);
    const group = (await apiRequest(admin, 'GET', '/proxies', { token })).json<{
      proxies: Record<string, { now?: string; fixed?: string }>;
    }>().proxies.GATEHOP!;
    expect(group).toMatchObject({ now: to, fixed: to });
    await eventually(() => a.controller!.active?.node.id === to, 60_000, `the switch to ${to}`);
    expect((await socksGet(port(), rig.state.inetAddress, '/ip', 30_000)).body.toString()).toBe(exitOf(to));
    expect(a.manager!.draining.some((d) => d.sessions > 0)).toBe(true); // the old tunnel still carries it
    const d = await download;
    expect(d.code).toBe(0);
    expect(d.sha256).toBe(seededSha256(PACED_BYTES));
  }, 180_000);

  it('SE-VPN (#35): a switch from one SE-VPN node to another under a running download breaks nothing, and new requests leave by the new node', async () => {
    // SE-VPN alone; the rig's hub is RIG (SoftEther keeps VPNGATE for VPN Gate), its CA names the nodes.
    const a = await start({ tunnel: { protocols: ['sevpn'], nodeCa: rig.state.caFile, sevpn: { hub: 'RIG' } } });
    const c = a.controller!;
    expect(c.active!.egress.protocol).toBe('sevpn');
    const from = c.active!.node.id;
    const to = rig.state.nodes.find((n) => n.kind === 'softether' && n.name !== from)!.name;
    // A download still running on the old node when the switch is made.
    const download = pacedDownload();
    await eventually(() => a.proxy.stats.bytesDown > 1_000_000, 30_000, 'the download under way');
    await c.switchNow({ nodeId: to }).done;
    expect(c.active!.node.id).toBe(to);
    expect(c.active!.egress.protocol).toBe('sevpn');
    expect((await socksGet(port(), rig.state.inetAddress, '/ip', 30_000)).body.toString()).toBe(exitOf(to));
    expect(a.manager!.draining.some((d) => d.sessions > 0)).toBe(true); // the old tunnel still carries it
    const d = await download;
    expect(d.code).toBe(0);
    expect(d.sha256).toBe(seededSha256(PACED_BYTES));
  }, 180_000);

  it('drain grace: a session still open when the grace ends is force-closed and counted, and the old tunnel is torn down', async () => {
    const a = await start({ switching: { drainGraceMs: 2_000 } });
    const c = a.controller!;
    const { SocksClient } = await import('socks');
    const { socket } = await SocksClient.createConnection({
      proxy: { host: '127.0.0.1', port: port(), type: 5 },
      command: 'connect',
      destination: { host: 'files.test', port: 80 },
    });
    socket.write('GET /ip HTTP/1.1\r\nHost: files.test\r\n'); // an unfinished request: bytes moved, no answer yet
    await eventually(() => a.proxy.stats.bytesUp > 0, 30_000, 'bytes sent');
    const old = c.active!.egress as unknown as Tunnel;
    const closed = new Promise((r) => socket.once('close', r));
    await c.switchNow({ nodeId: nodeIds().find((n) => n !== c.active!.node.id)! }).done;
    expect(a.manager!.draining.map((d) => d.egress)).toContain(old);
    await closed;
    expect(a.manager!.stats.forceClosedSessions).toBe(1);
    expect(a.manager!.draining).toHaveLength(0);
    expect(old.state).toBe('closed');
    expect(old.linkState()).toBe('down');
    expect(old.stats.sessionsActive).toBe(0);
    // With workers on (the default), the tunnel's thread is gone too.
    // The manager closed it; close() again (idempotent) resolves once its thread is let go.
    if (old instanceof WorkerTunnelEgress) {
      await old.close();
      expect(old.threadAlive).toBe(false);
    }
  }, 120_000);

  for (const fault of ['pause', 'kill', 'blackhole'] as const) {
    it(`node death (${fault}): new sessions succeed through another node; sessions on other nodes go on`, async () => {
      const a = await start({ groups: { mode: 'auto' } });
      const c = a.controller!;
      // A slow download on one node's tunnel, left draining when the next node takes over; the
      // fault then hits the new active node only.
      const survivor = curl([
        '--max-time',
        '60',
        '--limit-rate',
        '300k',
        '--socks5-hostname',
        `127.0.0.1:${port()}`,
        rig.url('/big'),
      ]);
      await eventually(() => a.manager!.activeSessions >= 1, 10_000, 'the slow download started');
      const next = nodeIds().find((n) => n !== c.active!.node.id)!;
      expect((await c.switchNow({ nodeId: next }).done).outcome).toBe('switched');
      c.setMode(true);
      const dead = c.active!.node.id;
      const node = rig.state.nodes.find((n) => n.name === dead)!;
      const faultAt = Date.now();
      if (fault === 'pause') rig.pause(node.id);
      else if (fault === 'kill') rig.kill(node.id);
      else rig.blackhole(node.id);
      try {
        // A new request every 200 ms, each on its own (a request stuck on the dead node must not
        // delay the next): the first answer from another node's exit is the recovery time.
        let firstOkAt = 0;
        let via = '';
        const inflight: Promise<unknown>[] = [];
        // Bounded by the test's budget, not a speed target: the time to recover is printed here and
        // measured as a figure by the benches (bench:soak's failover, bench:liveness).
        while (!firstOkAt && Date.now() < faultAt + 60_000) {
          inflight.push(
            socksGet(port(), 'files.test', '/ip', 5_000).then(
              (r) => {
                if (!firstOkAt && r.status === 200 && r.body.toString() !== node.exitAddress) {
                  firstOkAt = Date.now();
                  via = r.body.toString();
                }
              },
              () => {},
            ),
          );
          await new Promise((res) => setTimeout(res, 200));
        }
        await Promise.all(inflight);
        const recoveryMs = firstOkAt - faultAt;
        console.log(
          `node death by ${fault}: first new session through another node after ${(recoveryMs / 1000).toFixed(1)} s (via ${via})`,
        );
        expect(firstOkAt).toBeGreaterThan(0);
        const s = await survivor;
        expect(s.stderr).toBe('');
        expect(createHash('sha256').update(s.stdout).digest('hex')).toBe(rig.state.bigSha256);
      } finally {
        if (fault === 'pause') rig.resume(node.id);
        else if (fault === 'kill') await rig.restart(node.id);
        else rig.unblackhole(node.id);
      }
    }, 120_000);
  }

  it('a tunnel worker that crashes (#16): its sessions fail with a code, the controller moves to another node as for a dead node, and the admin API and a draining tunnel carry on', async () => {
    const token = 'switching-rig-admin-token-0123456789';
    const a = await start({ groups: { mode: 'auto' }, admin: '127.0.0.1:0', adminToken: token });
    const c = a.controller!;
    const status = async (): Promise<{
      active: { nodeId: string } | null;
      tunnelWorkers: { failures: number };
      tunnels: Array<{ thread: string }>;
    }> => {
      const r = await fetch(`http://127.0.0.1:${a.listening.admin!.port}/status`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return (await r.json()) as never;
    };
    // A download left draining on the first node's tunnel, another on the node that will crash.
    const survivor = curl([
      '--max-time',
      '60',
      '--limit-rate',
      '300k',
      '--socks5-hostname',
      `127.0.0.1:${port()}`,
      rig.url('/big'),
    ]);
    await eventually(() => a.manager!.activeSessions >= 1, 10_000, 'the first download started');
    // Onto any other node that comes up (an earlier test may have left one restarting or backing off).
    let moved = false;
    for (const n of nodeIds().filter((id) => id !== c.active!.node.id)) {
      if ((await c.switchNow({ nodeId: n }).done).outcome === 'switched') {
        moved = true;
        break;
      }
    }
    expect(moved).toBe(true);
    c.setMode(true); // back to auto: a pinned node would be reconnected (it is the user's choice)
    const victim = c.active!.egress;
    expect(victim).toBeInstanceOf(WorkerTunnelEgress);
    // Paced by the server: a client-side limit let the whole file through the tunnel into loopback
    // buffers before the kill, and the download then ended intact (seen in CI).
    const lost = curl(['--max-time', '60', '--socks5-hostname', `127.0.0.1:${port()}`, rig.url('/big?rate=307200')]);
    await eventually(() => victim.stats.sessionsActive >= 1, 10_000, 'a download on the tunnel about to crash');
    const before = (await status()).tunnelWorkers.failures;
    expect((await status()).tunnels.every((t) => t.thread === 'worker')).toBe(true);
    await (victim as WorkerTunnelEgress).kill('crashed by the test');
    // Its session ends at once (curl sees the connection cut), the controller takes another node.
    expect((await lost).stdout.length).toBeLessThan(rig.state.bigBytes);
    await eventually(() => !!c.active && c.active.egress !== victim, 15_000, 'the controller moved to another node');
    const after = await status();
    expect(after.tunnelWorkers.failures).toBe(before + 1);
    expect(after.active?.nodeId).not.toBe((victim as WorkerTunnelEgress).nodeId);
    const r = await socksGet(port(), 'files.test', '/ip', 10_000);
    expect(r.status).toBe(200);
    const s = await survivor;
    expect(createHash('sha256').update(s.stdout).digest('hex')).toBe(rig.state.bigSha256);
  }, 120_000);

  // CI: 50 windows of 3 s (more windows than 10 minutes at the default 15 s, in a CI-sized run).
  // By hand, the full length with the default windows: GH_NOFLAP_S=600 GH_NOFLAP_WINDOW_S=15.
  const flapS = Number(process.env.GH_NOFLAP_S ?? 150);
  const windowS = Number(process.env.GH_NOFLAP_WINDOW_S ?? 3);
  it(
    `no flapping: a node with 100 ± 50 ms delay and 2 % loss serves steady load for ${flapS} s (${windowS} s health windows) without a switch`,
    async () => {
      const a = await start(
        { health: { intervalMs: windowS * 1000, minSwitchIntervalMs: 0 }, groups: { mode: 'manual' } },
        'flap.log',
      );
      const c = a.controller!;
      const pinned = 'rig-node1';
      if (c.active!.node.id !== pinned) expect((await c.switchNow({ nodeId: pinned }).done).outcome).toBe('switched');
      rig.impair('n1', { delayMs: 100, jitterMs: 50, loss: 0.02 });
      try {
        const switchesBefore = c.history.length;
        const windowsBefore = c.health.windows;
        const logLines = (): Array<Record<string, unknown>> =>
          readFileSync(join(dataDir, 'flap.log'), 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Record<string, unknown>);
        const stopAt = Date.now() + flapS * 1000;
        let failures = 0;
        const downloads = (async () => {
          while (Date.now() < stopAt) {
            const r = await curl([
              '--max-time',
              '60',
              '--socks5-hostname',
              `127.0.0.1:${port()}`,
              rig.url('/bytes/65536'),
            ]);
            if (r.code !== 0 || r.stdout.length !== 65536) failures++;
          }
        })();
        const shortOnes = (async () => {
          while (Date.now() < stopAt) {
            await socksGet(port(), 'files.test', '/ip', 20_000).then(
              (r) => void (r.status !== 200 && failures++),
              () => void failures++,
            );
            await new Promise((r) => setTimeout(r, 500));
          }
        })();
        await Promise.all([downloads, shortOnes]);
        const windows = c.health.windows - windowsBefore;
        expect(windows).toBeGreaterThanOrEqual(Math.floor(flapS / windowS) - 2);
        expect(c.history.length).toBe(switchesBefore);
        expect(c.active!.node.id).toBe(pinned);
        expect(logLines().filter((l) => l.event === 'switch-held')).toEqual([]);
        expect(failures).toBe(0);
        console.log(
          `no flapping: ${windows} health windows (${c.health.badWindows} bad), ${c.history.length - switchesBefore} switches, ${failures} failed requests`,
        );
      } finally {
        rig.clearImpairment('n1');
      }
    },
    (flapS + 90) * 1000,
  );

  it('the manual selection and node history survive a restart', async () => {
    const a = await start({}, 'restart-1.log');
    const pick = nodeIds().find((n) => n !== a.controller!.active!.node.id)!;
    expect((await a.controller!.switchNow({ nodeId: pick }).done).outcome).toBe('switched');
    const successes = a.store!.history(pick).successes;
    expect(successes).toBeGreaterThan(0);
    await a.stop();
    app = null;
    const b = await start({}, 'restart-2.log');
    expect(b.controller!.mode).toBe('manual');
    expect(b.controller!.pinned).toBe(pick);
    expect(b.controller!.history[0]).toMatchObject({ outcome: 'switched', to: pick });
    expect(b.store!.history(pick).successes).toBeGreaterThan(successes);
    const lines = readFileSync(join(dataDir, 'restart-2.log'), 'utf8');
    expect(lines).toContain('"event":"selection-restored"');
  }, 120_000);
});
