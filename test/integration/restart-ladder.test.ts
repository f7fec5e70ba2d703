/**
 * Issue #58: a start on a network that taught "OpenVPN is blocked here" sends not one OpenVPN
 * packet, from the first probe of the first ranking on. The ladder (ProtocolChoice) is made and
 * set to this network before the node pipeline ranks anything; before, the first ranking began
 * before the switch controller had loaded the lesson, and its probes sent OpenVPN hard resets.
 *
 * The node is on loopback: its OpenVPN UDP port is a socket that counts what arrives, its TLS port
 * (SE-VPN and SSTP) a listener that counts handshakes. The same start without the lesson is the
 * control: there the UDP port does hear from Gatehop, so a count of 0 means something.
 */
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { networkKeyOf, readNetworkSnapshot, silentLogger } from '../../core/common/index.js';
import { Store } from '../../core/store/index.js';
import { eventually } from '../helpers/fds.js';
import { vpnGateCsv, vpnGateProfile } from '../helpers/vpngate-fixtures.js';

interface LoopbackNode {
  udp: Socket;
  tls: Server;
  list: HttpServer;
  listUrl: string;
  tlsPort: number;
  datagrams: () => number;
  handshakes: () => number;
}

async function loopbackNode(): Promise<LoopbackNode> {
  let datagrams = 0;
  let handshakes = 0;
  const udp = createSocket('udp4');
  udp.on('message', () => datagrams++);
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  const tls = createServer((s) => {
    handshakes++;
    s.destroy();
  });
  await new Promise<void>((r) => tls.listen(0, '127.0.0.1', () => r()));
  const csv = vpnGateCsv([
    {
      host: 'public-vpn-58',
      ip: '127.0.0.1',
      profile: vpnGateProfile('127.0.0.1', udp.address().port, 'udp'),
    },
  ]);
  const list = createHttpServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end(csv);
  });
  await new Promise<void>((r) => list.listen(0, '127.0.0.1', () => r()));
  return {
    udp,
    tls,
    list,
    listUrl: `http://127.0.0.1:${(list.address() as AddressInfo).port}/api/iphone/`,
    tlsPort: (tls.address() as AddressInfo).port,
    datagrams: () => datagrams,
    handshakes: () => handshakes,
  };
}

/** A data dir whose store remembers, for the network this machine is on now, what `lesson` says. */
function dataDirTaught(lesson: object | null): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-ladder-'));
  if (lesson) {
    const store = new Store({ path: join(dataDir, 'gatehop.db'), logger: silentLogger() });
    store.setSetting(`protocol-preference ${networkKeyOf(readNetworkSnapshot())}`, JSON.stringify(lesson));
    store.close();
  }
  return dataDir;
}

describe('a start on a network that blocks OpenVPN (#58)', () => {
  let app: RunningApp | null = null;
  let node: LoopbackNode | null = null;
  afterEach(async () => {
    await app?.stop();
    app = null;
    node?.udp.close();
    node?.tls.close();
    node?.list.closeAllConnections();
    node?.list.close();
    node = null;
  });

  const start = async (n: LoopbackNode, dataDir: string): Promise<RunningApp> =>
    startApp(
      buildConfig(
        {
          selector: { probe: { timeoutMs: 300 } },
          tunnel: { sstp: { port: n.tlsPort } },
          groups: { connectTimeoutMs: 1_000 },
        },
        { egress: 'vpngate', api: [n.listUrl], listen: '127.0.0.1:0', admin: 'off', dataDir, logFile: 'off' },
      ),
      silentLogger(),
      { unsafeLoopbackNodes: true },
    );

  it('the control: with nothing learnt, the first ranking probes the node’s OpenVPN port', async () => {
    node = await loopbackNode();
    app = await start(node, dataDirTaught(null));
    await app.firstRanking;
    await eventually(() => node!.datagrams() > 0, 5_000, 'an OpenVPN probe at the node');
  });

  it('with the lesson remembered, neither the first ranking nor the tunnel attempts after it send an OpenVPN packet', async () => {
    node = await loopbackNode();
    app = await start(
      node,
      dataDirTaught({ preferred: 'sevpn', blocked: 'openvpn', reason: 'taught here before', at: Date.now() }),
    );
    expect(app.controller!.protocols.blocked).toBe('openvpn');
    const ranking = await app.firstRanking;
    // The node was probed, on its TLS port alone, and ranked.
    expect(ranking!.ranked.map((r) => r.node.id)).toEqual(['public-vpn-58']);
    expect(node.handshakes()).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 200)); // a datagram sent would have arrived on loopback by now
    expect(node.datagrams()).toBe(0);
    // A tunnel is tried (SE-VPN, then SSTP: the listener closes each at once) and fails; OpenVPN is not tried.
    await eventually(() => app!.controller!.counts.failed > 0, 15_000, 'a switch attempt that failed');
    const tried = app.controller!.protocolsFor(app.nodes!.nodes[0]!);
    expect(tried.find((p) => p.protocol === 'openvpn')?.record ?? null).toBeNull();
    expect(tried.find((p) => p.protocol === 'sevpn')?.record?.tried ?? 0).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 200)); // a datagram sent would have arrived on loopback by now
    expect(node.datagrams()).toBe(0);
  });
});
