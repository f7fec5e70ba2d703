/**
 * "Share with this network" through a real node (#63): the core on the rig's OpenVPN node (global
 * mode), sharing on; a "phone" in a namespace on a LAN with this machine (a veth). With its
 * generated password, and then (as a stock Wi-Fi setting does, after fetching its PAC) by its
 * address alone, the phone's request leaves from the node: the rig's web server sees the node's
 * exit address.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusSchema } from '../../core/api/index.js';
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
  let token = '';
  let device = { id: '', secret: '', pageUrl: '' };
  const subnet = `10.${150 + (process.pid % 40)}.${Math.floor(Math.random() * 250)}`;

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 0, openvpn: ['gcm-udp'] });
    dir = mkdtempSync(join(tmpdir(), 'gh-share-rig-'));
    admin = await freePort();
    sharePort = await freePort();
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
      `127.0.0.1:${await freePort()}`,
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
});
