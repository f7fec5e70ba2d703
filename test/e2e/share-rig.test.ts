/**
 * "Share with this network" through a real node (#63): the core on the rig's OpenVPN node (global
 * mode), sharing on; a "phone" in a namespace on a LAN with this machine (a veth). With its
 * generated password, and then (as a stock Wi-Fi setting does, after fetching its PAC) by its
 * address alone, the phone's request leaves from the node: the rig's web server sees the node's
 * exit address. Then where the bytes went (#64): what this computer and the phone moved through
 * the node is counted to the byte under the node, the device, the network and the route, and is
 * in the database once the core has stopped.
 */
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusSchema, type TrafficSummaryView } from '../../core/api/index.js';
import { curl } from '../helpers/curl.js';
import { apiRequest } from '../helpers/admin-client.js';
import { until } from '../helpers/fds.js';
import { GatehopProcess } from '../helpers/gatehop-process.js';
import { isRoot, phoneOnThisMachine, type NetNs } from '../helpers/netns.js';
import { freePort } from '../helpers/ports.js';
import { writeRigCliConfig } from '../helpers/rig-app.js';
import { Rig } from '../rig/rig.js';

describe.skipIf(!isRoot)('a phone on the LAN goes out through a node, by the shared listener (#63)', () => {
  let rig: Rig;
  let core: GatehopProcess;
  let phone: NetNs;
  let dir = '';
  let admin = 0;
  let sharePort = 0;
  let proxyPort = 0;
  let token = '';
  let device = { id: '', secret: '', pageUrl: '' };
  const subnet = `10.${150 + (process.pid % 40)}.${Math.floor(Math.random() * 250)}`;

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 0, openvpn: ['gcm-udp'] });
    dir = mkdtempSync(join(tmpdir(), 'gh-share-rig-'));
    admin = await freePort();
    sharePort = await freePort();
    proxyPort = await freePort();
    const config = writeRigCliConfig(rig, join(dir, 'config.yaml'), {
      mode: 'global',
      share: { enabled: true, port: sharePort },
    });
    core = new GatehopProcess(dir, [
      '--egress',
      'vpngate',
      '--api',
      rig.state.apiUrl,
      '--config',
      config,
      '--listen',
      `127.0.0.1:${proxyPort}`,
      '--admin',
      `127.0.0.1:${admin}`,
      '--data-dir',
      dir,
      '--log-file',
      join(dir, 'gatehop.log'),
    ]);
    await core.ready();
    token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
    await until(
      async () =>
        statusSchema.parse((await apiRequest(admin, 'GET', '/status', { token })).json()).active?.nodeId ?? undefined,
      90_000,
      'a tunnel up',
    );
    // The phone: a namespace on a LAN of its own with this machine.
    phone = phoneOnThisMachine(subnet);
    const d = (await apiRequest(admin, 'POST', '/share/devices', { token, body: { name: 'phone' } })).json<{
      id: string;
      proxyUrl: string;
    }>();
    const secret = d.proxyUrl.split(':')[2]!.split('@')[0]!;
    device = { id: d.id, secret, pageUrl: `http://${subnet}.1:${sharePort}/d/${secret}` };
  }, 180_000);

  afterAll(async () => {
    await core?.stop();
    phone?.close(); // the veth goes with it
    await rig?.down();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const fromPhone = (args: string[]) =>
    spawnSync('ip', ['netns', 'exec', phone.name, 'curl', '-sS', '--max-time', '20', ...args], { encoding: 'utf8' });
  const exit = () => rig.openvpn[0]!.exitAddress;

  it('with its password: the request leaves from the node', () => {
    const r = fromPhone([
      '--socks5-hostname',
      `${device.id}:${device.secret}@${subnet}.1:${sharePort}`,
      rig.url('/ip'),
    ]);
    expect(r.stdout, r.stderr).toBe(exit());
  });

  it('after its PAC, by its address alone (a stock Wi-Fi setting): the request leaves from the node', () => {
    const pac = fromPhone([`${device.pageUrl}/proxy.pac`]);
    expect(pac.stdout).toContain(`PROXY ${subnet}.1:${sharePort}`);
    const r = fromPhone(['-x', `http://${subnet}.1:${sharePort}`, rig.url('/ip')]);
    expect(r.stdout, r.stderr).toBe(exit());
  });

  it('counts what this computer and the phone moved through the node, by node, device, network and route (#64)', async () => {
    const summary = async () =>
      (await apiRequest(admin, 'GET', '/traffic/summary?days=1', { token })).json<TrafficSummaryView>();
    const downOf = (parts: TrafficSummaryView['byNode'], key: string) => parts.find((p) => p.key === key)?.down ?? 0;
    // A flow of an earlier test (the phone's keep-alive HTTP request) is counted when it ends: wait
    // for every one to have ended, or its bytes land between the two readings.
    await until(
      async () =>
        (await apiRequest(admin, 'GET', '/connections', { token })).json<{ connections: unknown[] }>().connections
          .length === 0
          ? true
          : undefined,
      30_000,
      'the earlier connections to end',
    );
    const before = await summary();
    const nodeId = statusSchema.parse((await apiRequest(admin, 'GET', '/status', { token })).json()).active!.nodeId!;
    const measure = '%{size_request} %{size_header} %{size_download}';
    const url = rig.url(`/bytes/${2 * 1024 * 1024}`);
    const mine = await curl(['--socks5-hostname', `127.0.0.1:${proxyPort}`, '-o', '/dev/null', '-w', measure, url]);
    const theirs = fromPhone([
      '--socks5-hostname',
      `${device.id}:${device.secret}@${subnet}.1:${sharePort}`,
      '-o',
      '/dev/null',
      '-w',
      measure,
      url,
    ]);
    expect(mine.code, mine.stderr).toBe(0);
    expect(theirs.status, theirs.stderr).toBe(0);
    const moved = (out: string) => {
      const [req, head, body] = out.split(' ').map(Number) as [number, number, number];
      return { up: req, down: head + body };
    };
    const me = moved(mine.stdout.toString());
    const phoneMoved = moved(theirs.stdout);
    expect(me.down).toBeGreaterThan(2 * 1024 * 1024);
    await until(
      async () => ((await summary()).total.flows >= before.total.flows + 2 ? true : undefined),
      10_000,
      'both counted',
    );
    const after = await summary();
    expect(after.total.down - before.total.down).toBe(me.down + phoneMoved.down);
    expect(after.total.up - before.total.up).toBe(me.up + phoneMoved.up);
    expect(downOf(after.byNode, nodeId) - downOf(before.byNode, nodeId)).toBe(me.down + phoneMoved.down);
    expect(downOf(after.byDevice, '') - downOf(before.byDevice, '')).toBe(me.down);
    expect(downOf(after.byDevice, 'phone') - downOf(before.byDevice, 'phone')).toBe(phoneMoved.down);
    expect(after.byRoute.map((p) => p.key)).toEqual(['TUNNEL']);
    expect(after.byNetwork).toHaveLength(1);
    expect(after.days.at(-1)!.tunnel).toBe(after.total.up + after.total.down);
    // Written when the core stops: the database holds what the window showed.
    await core.stop();
    const db = new Database(join(dir, 'gatehop.db'), { readonly: true });
    try {
      const row = db.prepare('SELECT SUM(bytes_down) AS down, SUM(flows) AS flows FROM traffic_days').get() as {
        down: number;
        flows: number;
      };
      expect(row).toEqual({ down: after.total.down, flows: after.total.flows });
    } finally {
      db.close();
    }
  });
});
