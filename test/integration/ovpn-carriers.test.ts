/**
 * The ways an OpenVPN session reaches its server (core/ovpn/carrier*.ts, #35): each carries
 * packets both ways, reports a broken transport once with a stable code, and says nothing after
 * close. Against real loopback sockets; the rig tests run them under real servers and proxies.
 */
import { createSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, type GatehopError } from '../../core/common/index.js';
import type { Carrier, CarrierSink } from '../../core/ovpn/carrier.js';
import { openCarrier } from '../../core/ovpn/open-carrier.js';
import { until } from '../helpers/fds.js';

function recorder(): CarrierSink & { got: Buffer[]; errors: GatehopError[]; malformedCount: number } {
  const r = {
    got: [] as Buffer[],
    errors: [] as GatehopError[],
    malformedCount: 0,
    packets: (p: Buffer[]) => r.got.push(...p.map((b) => Buffer.from(b))),
    failed: (e: GatehopError) => r.errors.push(e),
    malformed: () => void r.malformedCount++,
  };
  return r;
}

/** A carrier to a loopback server. */
const openTo = (port: number, proto: 'tcp' | 'udp', sink: CarrierSink): Promise<Carrier> =>
  openCarrier({ host: '127.0.0.1', port, proto, upstream: null, sink, logger: silentLogger() });

const frame = (b: Buffer): Buffer => Buffer.concat([Buffer.from([b.length >> 8, b.length & 255]), b]);

describe('OpenVPN carriers', () => {
  const closers: Array<() => void> = [];
  afterEach(() => {
    for (const c of closers.splice(0)) c();
  });

  async function tcpServer(onSocket: (s: Socket) => void): Promise<number> {
    const server: Server = createServer(onSocket);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    closers.push(() => server.close());
    return (server.address() as AddressInfo).port;
  }

  it('TCP: records split across reads arrive whole and in order; a batch goes out as framed records', async () => {
    const received: Buffer[] = [];
    const port = await tcpServer((s) => {
      s.on('data', (c: Buffer) => received.push(c));
      const two = Buffer.concat([frame(Buffer.from('first')), frame(Buffer.from('second'))]);
      s.write(two.subarray(0, 4));
      setTimeout(() => s.write(two.subarray(4)), 20);
    });
    const sink = recorder();
    const c: Carrier = await openTo(port, 'tcp', sink);
    closers.push(() => c.close());
    expect([c.kind, c.framed]).toEqual(['tcp', true]);
    await until(() => (sink.got.length === 2 ? true : undefined), 5_000, 'two records');
    expect(sink.got.map(String)).toEqual(['first', 'second']);
    expect(c.send(Buffer.from('ping'))).toBe(true);
    await until(() => (Buffer.concat(received).length === 6 ? true : undefined), 5_000, 'the framed packet');
    expect(Buffer.concat(received)).toEqual(frame(Buffer.from('ping')));
  });

  it('TCP: a record of an impossible length is GH_ERR_OVPN_PROTOCOL, said once; the server closing is GH_ERR_EGRESS_CLOSED', async () => {
    const port = await tcpServer((s) => s.write(Buffer.from([0xff, 0xff, 1, 2, 3])));
    const sink = recorder();
    const c = await openTo(port, 'tcp', sink);
    await until(() => (sink.errors.length > 0 ? true : undefined), 5_000, 'an error');
    await new Promise((r) => setTimeout(r, 50));
    expect(sink.errors.map((e) => e.code)).toEqual(['GH_ERR_OVPN_PROTOCOL']);
    expect(c.send(Buffer.from('x'))).toBe(false); // closed by its failure

    const closing = await tcpServer((s) => s.end());
    const sink2 = recorder();
    await openTo(closing, 'tcp', sink2);
    await until(() => (sink2.errors.length > 0 ? true : undefined), 5_000, 'the close');
    expect(sink2.errors.map((e) => e.code)).toEqual(['GH_ERR_EGRESS_CLOSED']);
  });

  it('TCP: a refused port rejects the open with GH_ERR_EGRESS_CONNECT_REFUSED; nothing reaches the sink after close', async () => {
    const port = await tcpServer(() => {});
    closers.splice(0).forEach((c) => c());
    await new Promise((r) => setTimeout(r, 20));
    await expect(openTo(port, 'tcp', recorder())).rejects.toMatchObject({ code: 'GH_ERR_EGRESS_CONNECT_REFUSED' });

    let peer: Socket | null = null;
    const live = await tcpServer((s) => (peer = s));
    const sink = recorder();
    const c = await openTo(live, 'tcp', sink);
    await until(() => peer ?? undefined, 5_000, 'the server side');
    // The server has not said a word: the close is a reset (carrier-tcp, #60), which the late
    // write below may meet.
    const peerError = new Promise<string | undefined>((r) =>
      peer!.once('error', (e: NodeJS.ErrnoException) => r(e.code)),
    );
    c.close();
    peer!.write(frame(Buffer.from('late')));
    peer!.end();
    await new Promise((r) => setTimeout(r, 50));
    expect([sink.got, sink.errors]).toEqual([[], []]);
    expect(await peerError).toBe('ECONNRESET');
  });

  it('TCP: a carrier the server answered closes in order (FIN), not with a reset', async () => {
    let peer: Socket | null = null;
    const live = await tcpServer((s) => {
      peer = s;
      s.write(frame(Buffer.from('hello')));
    });
    const sink = recorder();
    const c = await openTo(live, 'tcp', sink);
    await until(() => (sink.got.length > 0 ? true : undefined), 5_000, 'the server heard');
    const ended = new Promise<string>((r) => {
      peer!.once('end', () => r('end'));
      peer!.once('error', (e: NodeJS.ErrnoException) => r(e.code ?? 'error'));
    });
    c.close();
    expect(await ended).toBe('end');
  });

  it('UDP: datagrams both ways on a connected socket (native or dgram); only the server is heard', async () => {
    const server = createSocket('udp4');
    await new Promise<void>((r) => server.bind(0, '127.0.0.1', () => r()));
    closers.push(() => server.close());
    let client: { port: number; address: string } | null = null;
    server.on('message', (m, rinfo) => {
      client = rinfo;
      server.send(Buffer.concat([Buffer.from('echo:'), m]), rinfo.port, rinfo.address);
    });
    const sink = recorder();
    const c = await openTo((server.address() as AddressInfo).port, 'udp', sink);
    closers.push(() => c.close());
    expect(['udp-native', 'udp']).toContain(c.kind);
    expect(c.framed).toBe(false);
    expect(c.send(Buffer.from('one'))).toBe(true);
    await until(() => (sink.got.length === 1 ? true : undefined), 5_000, 'the echo');
    expect(String(sink.got[0])).toBe('echo:one');
    // A stranger's datagram to the client's port never arrives.
    const stranger = createSocket('udp4');
    closers.push(() => stranger.close());
    await new Promise<void>((r) => stranger.send(Buffer.from('stranger'), client!.port, client!.address, () => r()));
    c.send(Buffer.from('two'));
    await until(() => (sink.got.length === 2 ? true : undefined), 5_000, 'the second echo');
    expect(sink.got.map(String)).toEqual(['echo:one', 'echo:two']);
  });
});
