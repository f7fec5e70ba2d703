import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { once } from 'node:events';
import { SocksClient } from 'socks';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/fds.js';
import { startProxy, type RunningProxy } from '../helpers/proxy.js';
import { Servers, startUdpEcho } from '../helpers/servers.js';

const servers = new Servers();
const sockets: DgramSocket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  await servers.closeAll();
});

async function udpClient(): Promise<DgramSocket> {
  const s = createSocket('udp4');
  sockets.push(s);
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

async function associate(p: RunningProxy, client: DgramSocket) {
  // The socks library drives UDP ASSOCIATE through an instance and its 'established' event.
  const socks = new SocksClient({
    proxy: { host: '127.0.0.1', port: p.port, type: 5 },
    command: 'associate',
    destination: { host: '127.0.0.1', port: client.address().port },
  });
  const established = once(socks, 'established');
  socks.connect();
  const [info] = (await established) as [
    { socket: import('node:net').Socket; remoteHost: { host: string; port: number } },
  ];
  return { control: info.socket, relay: info.remoteHost };
}

function nextMessage(s: DgramSocket, timeoutMs = 3_000): Promise<Buffer> {
  return Promise.race([
    once(s, 'message').then(([m]) => m as Buffer),
    new Promise<Buffer>((_, reject) => setTimeout(() => reject(new Error('no datagram')), timeoutMs).unref()),
  ]);
}

describe('SOCKS5 UDP ASSOCIATE', () => {
  it('relays a datagram to a UDP echo server and back, with the source in the header', async () => {
    const echo = servers.track(await startUdpEcho());
    const p = servers.track(await startProxy());
    const client = await udpClient();
    const { control, relay } = await associate(p, client);
    const frame = SocksClient.createUDPFrame({
      remoteHost: { host: '127.0.0.1', port: echo.port },
      data: Buffer.from('ping'),
    });
    client.send(frame, relay.port, relay.host);
    const answer = SocksClient.parseUDPFrame(await nextMessage(client));
    expect(answer.data.toString()).toBe('ping');
    expect(answer.remoteHost).toMatchObject({ host: '127.0.0.1', port: echo.port });
    expect(p.server.stats.udp.datagramsUp).toBe(1);
    expect(p.server.stats.udp.datagramsDown).toBe(1);
    control.destroy();
  });

  it('resolves domain targets through the egress', async () => {
    const echo = servers.track(await startUdpEcho());
    const p = servers.track(await startProxy());
    const client = await udpClient();
    const { control, relay } = await associate(p, client);
    client.send(
      SocksClient.createUDPFrame({ remoteHost: { host: 'localhost', port: echo.port }, data: Buffer.from('dn') }),
      relay.port,
      relay.host,
    );
    expect(SocksClient.parseUDPFrame(await nextMessage(client)).data.toString()).toBe('dn');
    control.destroy();
  });

  it('drops fragments (FRAG != 0) and datagrams from another port, counting each', async () => {
    const echo = servers.track(await startUdpEcho());
    const p = servers.track(await startProxy());
    const client = await udpClient();
    const stranger = await udpClient();
    const { control, relay } = await associate(p, client);
    const frag = SocksClient.createUDPFrame({
      remoteHost: { host: '127.0.0.1', port: echo.port },
      data: Buffer.from('x'),
      frameNumber: 1,
    });
    client.send(frag, relay.port, relay.host);
    const fromStranger = SocksClient.createUDPFrame({
      remoteHost: { host: '127.0.0.1', port: echo.port },
      data: Buffer.from('y'),
    });
    stranger.send(fromStranger, relay.port, relay.host);
    await eventually(
      () => p.server.stats.udp.fragDropped === 1 && p.server.stats.udp.foreignDropped === 1,
      3_000,
      'drops counted',
    );
    expect(p.server.stats.udp.datagramsUp).toBe(0);
    control.destroy();
  });

  it('ends the association when its TCP control connection ends', async () => {
    const p = servers.track(await startProxy());
    const client = await udpClient();
    const { control } = await associate(p, client);
    expect(p.server.stats.sessionsActive).toBe(1);
    control.end();
    await eventually(() => p.server.stats.sessionsActive === 0, 3_000, 'association closed');
    expect(p.egress.stats.sessionsActive).toBe(0);
  });
});
