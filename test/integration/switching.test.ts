import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { once } from 'node:events';
import { SocksClient } from 'socks';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { DirectEgress, EgressManager, UnavailableEgress, type EgressManagerOptions } from '../../core/egress/index.js';
import { ProxyServer, proxyOptionsSchema } from '../../core/proxy/index.js';
import { eventually } from '../helpers/fds.js';
import { socksConnect } from '../helpers/socks-client.js';
import { Servers, startEchoServer, startUdpEcho } from '../helpers/servers.js';

const servers = new Servers();
afterEach(() => servers.closeAll());

/** A proxy whose egress manager switches between two direct egresses, A and B. */
async function switchingProxy(opts: EgressManagerOptions = {}) {
  const a = new DirectEgress('A');
  const b = new DirectEgress('B');
  const manager = new EgressManager(new UnavailableEgress('none', 'no egress'), silentLogger(), opts);
  manager.setActive(a, 'test');
  const server = new ProxyServer(
    { ...proxyOptionsSchema.parse({ port: 0 }), credentials: null },
    manager,
    silentLogger(),
  );
  const { port } = await server.listen();
  servers.track({
    close: async () => {
      await server.close();
      await manager.close();
    },
  });
  return { a, b, manager, server, port };
}

describe('switching egress under live sessions (make-before-break)', () => {
  it('a session that has moved bytes stays on the old egress and finishes there; the old egress closes when it ends', async () => {
    const echo = servers.track(await startEchoServer());
    const { a, b, manager, port } = await switchingProxy();
    const { client } = await socksConnect(port, '127.0.0.1', echo.port);
    client.write('before');
    expect((await client.read(6)).toString()).toBe('before');
    manager.setActive(b, 'switch');
    expect(manager.draining.map((d) => d.egress.id)).toEqual(['A']);
    client.write('after');
    expect((await client.read(5)).toString()).toBe('after');
    expect(a.stats.sessionsTotal).toBe(1);
    expect(b.stats.sessionsTotal).toBe(0);
    client.destroy();
    await eventually(() => manager.draining.length === 0 && a.state === 'closed', 3_000, 'A drained and closed');
    expect(manager.stats).toMatchObject({ drained: 1, forceClosedSessions: 0 });
  });

  it('zero-progress retry: a connected but idle session moves to the new egress and the client notices nothing', async () => {
    const echo = servers.track(await startEchoServer());
    const { a, b, manager, server, port } = await switchingProxy();
    const { client, reply } = await socksConnect(port, '127.0.0.1', echo.port);
    expect(reply[1]).toBe(0);
    manager.setActive(b, 'switch');
    await eventually(() => b.stats.sessionsTotal === 1, 3_000, 're-dial on B');
    client.write('hello');
    expect((await client.read(5)).toString()).toBe('hello');
    expect(server.stats.zeroProgressRetries).toBe(1);
    // A's only session left it: A closed as drained.
    await eventually(() => a.state === 'closed', 3_000, 'A closed');
    expect(manager.stats.forceClosedSessions).toBe(0);
    client.destroy();
  });

  it('a client that speaks while the re-dial is in flight loses nothing', async () => {
    const echo = servers.track(await startEchoServer());
    const { b, manager, port } = await switchingProxy();
    const { client } = await socksConnect(port, '127.0.0.1', echo.port);
    manager.setActive(b, 'switch');
    client.write('x'.repeat(100_000)); // at once, racing the re-dial
    expect((await client.read(100_000)).toString()).toBe('x'.repeat(100_000));
    client.destroy();
  });

  it('drain grace: a session still open when the grace ends is force-closed and counted', async () => {
    const echo = servers.track(await startEchoServer());
    const { a, b, manager, port } = await switchingProxy({ drainGraceMs: 300 });
    const { client } = await socksConnect(port, '127.0.0.1', echo.port);
    client.write('busy');
    await client.read(4);
    manager.setActive(b, 'switch');
    await client.waitEnd(3_000);
    expect(manager.stats.forceClosedSessions).toBe(1);
    expect(a.state).toBe('closed');
    expect(a.stats.sessionsActive).toBe(0);
  });

  it('interruptExistingConnections closes the old egress sessions at once', async () => {
    const echo = servers.track(await startEchoServer());
    const { b, manager, port } = await switchingProxy({ interruptExistingConnections: true });
    const { client } = await socksConnect(port, '127.0.0.1', echo.port);
    client.write('busy');
    await client.read(4);
    manager.setActive(b, 'switch');
    await client.waitEnd(3_000);
    expect(manager.draining).toHaveLength(0);
    expect(manager.stats.forceClosedSessions).toBe(1);
  });

  it('switching back to an egress that is still draining makes it active again with its sessions', async () => {
    const echo = servers.track(await startEchoServer());
    const { a, b, manager, port } = await switchingProxy();
    const { client } = await socksConnect(port, '127.0.0.1', echo.port);
    client.write('.');
    await client.read(1);
    manager.setActive(b, 'away');
    manager.setActive(a, 'back');
    expect(manager.active).toBe(a);
    expect(manager.activeSessions).toBe(1);
    expect(manager.draining).toHaveLength(0); // b had no sessions: closed
    client.write('still here');
    expect((await client.read(10)).toString()).toBe('still here');
    client.destroy();
  });

  it('a third switch force-closes the oldest draining egress (at most two drain)', async () => {
    const echo = servers.track(await startEchoServer());
    const { a, b, manager, port } = await switchingProxy();
    const hold = async () => {
      const { client } = await socksConnect(port, '127.0.0.1', echo.port);
      client.write('.');
      await client.read(1);
      return client;
    };
    const onA = await hold();
    manager.setActive(b, '1');
    const onB = await hold();
    const c = new DirectEgress('C');
    manager.setActive(c, '2');
    const onC = await hold();
    manager.setActive(new DirectEgress('D'), '3');
    await onA.waitEnd(3_000);
    expect(a.state).toBe('closed');
    expect(manager.draining.map((d) => d.egress.id)).toEqual(['B', 'C']);
    for (const cl of [onB, onC]) cl.destroy();
  });

  it('UDP association re-homing: after a switch the datagrams leave through the new egress', async () => {
    const echo = servers.track(await startUdpEcho());
    const { a, b, manager, server, port } = await switchingProxy();
    const client: DgramSocket = createSocket('udp4');
    await new Promise<void>((r) => client.bind(0, '127.0.0.1', () => r()));
    const socks = new SocksClient({
      proxy: { host: '127.0.0.1', port, type: 5 },
      command: 'associate',
      destination: { host: '127.0.0.1', port: client.address().port },
    });
    const established = once(socks, 'established');
    socks.connect();
    const [info] = (await established) as [
      { socket: import('node:net').Socket; remoteHost: { host: string; port: number } },
    ];
    const roundTrip = async (text: string): Promise<string> => {
      const answer = once(client, 'message');
      client.send(
        SocksClient.createUDPFrame({ remoteHost: { host: '127.0.0.1', port: echo.port }, data: Buffer.from(text) }),
        info.remoteHost.port,
        info.remoteHost.host,
      );
      const [msg] = (await answer) as [Buffer];
      return SocksClient.parseUDPFrame(msg).data.toString();
    };
    expect(await roundTrip('one')).toBe('one');
    expect(a.stats.sessionsTotal).toBe(1);
    manager.setActive(b, 'switch');
    await eventually(() => server.stats.udp.rehomed === 1, 3_000, 're-homed');
    expect(await roundTrip('two')).toBe('two');
    expect(b.stats.sessionsTotal).toBe(1);
    info.socket.destroy();
    client.close();
  });
});
