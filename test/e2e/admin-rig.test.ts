import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { silentLogger } from '../../core/common/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clashDelaySchema,
  clashProxiesSchema,
  modeResponseSchema,
  nodesSchema,
  statusSchema,
  switchAcceptedSchema,
} from '../../core/api/index.js';
import { buildConfig, type RunningApp } from '../../core/app/index.js';
import { apiRequest, SseReader } from '../helpers/admin-client.js';
import { eventually, until } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { Rig } from '../rig/rig.js';
import { startRigCore } from '../helpers/rig-app.js';

/** The admin API steering a core whose nodes are real SoftEther and OpenVPN servers. */
describe.skipIf(!isRoot)('admin API against the rig', () => {
  let rig: Rig;
  let app: RunningApp;
  let port = 0;
  const token = 'rig-admin-token-0123456789';

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 2, openvpn: ['gcm-udp'], bigMib: 1 });
    const config = buildConfig(
      {},
      {
        egress: 'vpngate',
        api: [rig.state.apiUrl],
        vpngate: { allowPrivateNodes: true },
        mode: 'global', // the rig's internet is in 10/8: through the tunnel, not the LAN rule
        listen: '127.0.0.1:0',
        admin: '127.0.0.1:0',
        adminToken: token,
        dataDir: mkdtempSync(join(tmpdir(), 'gh-admin-rig-')),
        logFile: 'off',
        switching: { healthDnsName: 'files.test' },
        groups: { urlTest: { url: rig.url('/generate_204'), intervalMs: 600_000 } },
      },
    );
    app = await startRigCore(config, silentLogger());
    port = app.listening.admin!.port;
  }, 240_000);

  afterAll(async () => {
    await app?.stop();
    rig?.down();
  });

  const get = async (path: string) => (await apiRequest(port, 'GET', path, { token })).json();

  it('/status names the active node and /nodes lists every rig node with its score and state', async () => {
    const status = statusSchema.parse(await get('/status'));
    const active = app.controller!.active!.node.id;
    expect(status).toMatchObject({
      egress: 'vpngate',
      active: { nodeId: active, proto: expect.any(String) },
      switches: { total: 1, state: 'idle' },
    });
    const nodes = nodesSchema.parse(await get('/nodes'));
    expect(nodes.nodes.map((n) => n.id).sort()).toEqual(rig.state.nodes.map((n) => n.name).sort());
    expect(nodes.nodes.find((n) => n.id === active)!.state).toBe('active');
    for (const n of nodes.nodes) expect(n.score).toEqual(expect.any(Number));
    expect(nodes.source).toBe(rig.state.apiUrl);
    // One meaning everywhere (issue #24): host is the host name, ip the server address, as in /nodes.
    const listed = nodes.nodes.find((n) => n.id === active)!;
    expect(status.active).toMatchObject({ host: listed.host, ip: listed.ip });
    expect(status.members[0]).toMatchObject({ nodeId: active, host: listed.host, ip: listed.ip });
    expect(listed.ip).toBe(rig.node(active).vpnAddress);
  });

  it('POST /switch answers 202, the event stream shows the switch as it starts (before it is done), and a second switch meanwhile gets 409', async () => {
    const sse = await SseReader.open(port, token);
    await until(() => (sse.events.length >= 2 ? true : undefined), 30_000, 'initial events');
    const from = app.controller!.active!.node.id;
    const target = rig.state.nodes.map((n) => n.name).find((n) => n !== from)!;
    // A slow download keeps a session on the old tunnel, so it drains and /status lists it.
    const dl = spawn('curl', [
      '-s',
      '-o',
      '/dev/null',
      '--limit-rate',
      '8k',
      '--socks5-hostname',
      `127.0.0.1:${app.listening.proxy.port}`,
      rig.url('/big'),
    ]);
    await eventually(() => app.proxy.stats.sessionsActive >= 1, 20_000, 'the download to be on the tunnel');
    const res = await apiRequest(port, 'POST', '/switch', { token, body: { nodeId: target } });
    expect(res.status).toBe(202);
    const { switchId } = switchAcceptedSchema.parse(res.json());
    const busy = await apiRequest(port, 'POST', '/switch', { token, body: {} });
    expect(busy.status).toBe(409);
    expect(busy.json()).toMatchObject({ error: 'GH_ERR_SWITCH_IN_PROGRESS' });
    const first = await until(
      () => sse.events.find((e) => e.event === 'switch' && (e.data as { switchId?: number }).switchId === switchId),
      30_000,
      'a switch event',
    );
    const done = await until(
      () =>
        sse.events.find(
          (e) =>
            e.event === 'switch' &&
            (e.data as { type: string; id?: number }).type === 'done' &&
            (e.data as { id: number }).id === switchId,
        ),
      30_000,
      'the switch done',
    );
    expect(done.data).toMatchObject({ outcome: 'switched', to: target });
    // The stream told of the switch when it started, not only when it was done.
    expect(sse.events.indexOf(first)).toBeLessThan(sse.events.indexOf(done));
    const after = statusSchema.parse(await get('/status'));
    expect(after).toMatchObject({ mode: 'manual', pinned: target, active: { nodeId: target } });
    expect(after.draining).toMatchObject([{ nodeId: from, host: from, ip: rig.node(from).vpnAddress }]);
    dl.kill('SIGKILL');
    sse.close();
  });

  it('POST /switch refuses an unknown node with 404, and POST /mode switches auto and manual', async () => {
    const unknown = await apiRequest(port, 'POST', '/switch', { token, body: { nodeId: 'no-such-node' } });
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'GH_ERR_NODE_UNKNOWN' });
    const auto = modeResponseSchema.parse(
      (await apiRequest(port, 'POST', '/mode', { token, body: { auto: true } })).json(),
    );
    expect(auto.mode).toBe('auto');
    expect(statusSchema.parse(await get('/status')).mode).toBe('auto');
  });

  it('the Clash subset: the GATEHOP selector lists the nodes, PUT selects one, and a delay test runs through a node', async () => {
    const proxies = clashProxiesSchema.parse(await get('/proxies'));
    const names = rig.state.nodes.map((n) => n.name);
    expect([...proxies.proxies.GATEHOP!.all!].sort()).toEqual([...names].sort());
    const target = names.find((n) => n !== app.controller!.active!.node.id)!;
    const put = await apiRequest(port, 'PUT', '/proxies/GATEHOP', { token, body: { name: target } });
    expect(put.status).toBe(204);
    await eventually(
      () => app.controller!.active?.node.id === target && app.controller!.state === 'idle',
      30_000,
      'selected node active',
    );
    expect(clashProxiesSchema.parse(await get('/proxies')).proxies.GATEHOP!.now).toBe(target);
    // Through a node that has no tunnel up: one is opened for the test.
    const other = names.find((n) => n !== target)!;
    const delay = await apiRequest(
      port,
      'GET',
      `/proxies/${encodeURIComponent(other)}/delay?url=${encodeURIComponent(rig.url('/generate_204'))}&timeout=30000`,
      { token },
    );
    expect(delay.status).toBe(200);
    expect(clashDelaySchema.parse(delay.json()).delay).toBeGreaterThanOrEqual(0);
    expect(clashProxiesSchema.parse(await get('/proxies')).proxies[other]!.history).toHaveLength(1);
    // A node that does not answer: 503 or 504, as Clash answers.
    const paused = rig.state.nodes.find((n) => n.name === other)!;
    rig.pause(paused.id);
    try {
      const failed = await apiRequest(
        port,
        'GET',
        `/proxies/${encodeURIComponent(other)}/delay?url=${encodeURIComponent(rig.url('/generate_204'))}&timeout=2000`,
        { token },
      );
      expect([503, 504]).toContain(failed.status);
    } finally {
      rig.resume(paused.id);
    }
  }, 120_000);

  it('/metrics shows switches, node RTTs and tunnel counters', async () => {
    const text = (await apiRequest(port, 'GET', '/metrics', { token })).text;
    const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
    const switches = families.get('gatehop_switches_total')!;
    expect(switches.metrics.reduce((n, m) => n + Number(m.value), 0)).toBeGreaterThanOrEqual(3);
    expect(families.get('gatehop_node_rtt_seconds')!.metrics.length).toBe(rig.state.nodes.length);
    expect(families.get('gatehop_switch_duration_seconds')!.type).toBe('HISTOGRAM');
    expect(families.get('gatehop_egress_up')!.metrics[0]!.value).toBe('1');
    // One tunnel here: it is the one member, up, with its sessions (issue #15's per-member series).
    expect(families.get('gatehop_member_up')!.metrics.map((m) => m.value)).toEqual(['1']);
    expect(families.get('gatehop_member_sessions')!.metrics[0]!.labels).toMatchObject({ primary: 'true' });
    expect(families.has('gatehop_member_failures')).toBe(true);
    expect(families.has('gatehop_netstack_retransmissions_total')).toBe(true);
  });
});
