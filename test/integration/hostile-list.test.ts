/**
 * Issue #34, item 1: a node list is someone else's data. Rows, profiles and mirror links aimed at
 * this machine must never make Gatehop connect there: a real core, a real list site on loopback
 * (the user's own --api endpoint), and real listeners that count who connects.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusSchema, type Status } from '../../core/api/index.js';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { until } from '../helpers/fds.js';
import { directoryHtml, listSite, type ListSite } from '../helpers/list-site.js';
import { vpnGateCsv, vpnGateProfile } from '../helpers/vpngate-fixtures.js';

describe('a list aimed at the user’s own machine (#34)', () => {
  let tcp: Server;
  let udp: UdpSocket;
  let site: ListSite;
  let app: RunningApp;
  let tcpConnections = 0;
  let udpDatagrams = 0;
  let token = '';

  beforeAll(async () => {
    // What a hostile row would like Gatehop to poke: a TCP service and a UDP service on loopback.
    tcp = createServer((s) => {
      tcpConnections++;
      s.destroy();
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    udp = createSocket('udp4').on('message', () => udpDatagrams++);
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
    const tcpPort = (tcp.address() as AddressInfo).port;
    const udpPort = udp.address().port;
    site = await listSite(
      vpnGateCsv([
        { host: 'row-at-loopback', ip: '127.0.0.1', profile: vpnGateProfile('127.0.0.1', tcpPort, 'tcp') },
        { host: 'udp-at-loopback', ip: '127.0.0.1', profile: vpnGateProfile('127.0.0.1', udpPort, 'udp') },
        // The IP column says one thing, the profile dials another: the mismatch Gatehop used to dial.
        { host: 'profile-at-loopback', ip: '203.0.113.50', profile: vpnGateProfile('127.0.0.1', tcpPort, 'tcp') },
        { host: 'row-at-router', ip: '192.168.1.1' },
        { host: 'row-at-metadata', ip: '169.254.169.254' },
      ]),
      {
        directory: directoryHtml([
          { origin: `http://127.0.0.1:${tcpPort}` },
          { origin: `http://localhost:${tcpPort}` },
          { origin: `http://[::ffff:127.0.0.1]:${tcpPort}` },
        ]),
      },
    );
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-hostile-list-'));
    app = await startApp(
      buildConfig(
        { selector: { probe: { timeoutMs: 300 } } },
        {
          egress: 'vpngate',
          api: [site.listUrl],
          listen: '127.0.0.1:0',
          admin: '127.0.0.1:0',
          dataDir,
          logFile: 'off',
        },
      ),
      silentLogger(),
    );
    token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  });

  afterAll(async () => {
    await app.stop();
    await site.close();
    await new Promise<void>((r) => tcp.close(() => r()));
    udp.close();
  });

  const status = async (): Promise<Status> =>
    statusSchema.parse((await apiRequest(app.listening.admin!.port, 'GET', '/status', { token })).json());

  it('takes no node from it, follows none of its mirror links, and says why in the source’s state', async () => {
    const failed = await until(
      async () => {
        const s = await status();
        const src = s.list?.sources.find((x) => x.url === site.listUrl);
        return src?.ok === false && site.hits('/en/sites.aspx') > 0 ? { s, src } : undefined;
      },
      10_000,
      'the list to be fetched and refused',
    );
    expect(failed.src.error).toBe(
      'no usable node in the list (skipped: 2 loopback-address, 1 remote-mismatch, 1 private-address, 1 link-local-address)',
    );
    // No node came in, so Gatehop waits for a list (a node taken in would have been probed and left it waiting for a reachable node).
    expect(app.nodes!.nodes).toHaveLength(0);
    expect(failed.s.network).toMatchObject({ state: 'waiting', reason: 'no-node-list' });
    // The directory's links to this machine were not kept as mirrors.
    expect(failed.s.list!.sources.map((x) => x.url)).toEqual([site.listUrl]);
    expect(tcpConnections).toBe(0);
    expect(udpDatagrams).toBe(0);
  });
});
