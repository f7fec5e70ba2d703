import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { loadNative } from '../../core/common/index.js';
import { NativeUdpCarrier } from '../../core/ovpn/udp-native.js';
import { eventually } from '../helpers/fds.js';

// The tunnel's UDP carrier in gatehop-native against a real kernel socket on loopback.
const native = loadNative();

async function echoServer(): Promise<Socket & { port: number }> {
  // Room for a whole batch at once (the kernel counts ~2.3 KiB per queued datagram).
  const s = createSocket({ type: 'udp4', recvBufferSize: 4 << 20, sendBufferSize: 4 << 20 });
  s.on('message', (m, r) => s.send(m, r.port, r.address));
  s.bind(0, '127.0.0.1');
  await once(s, 'listening');
  return Object.assign(s, { port: s.address().port });
}

describe.skipIf(!native)('native UDP carrier (recvmmsg/sendmmsg)', () => {
  const cleanup: Array<() => void> = [];
  afterEach(() => cleanup.splice(0).forEach((f) => f()));

  it('sends a batch in one call and reads the echoes back in order, in batches, with their boundaries', async () => {
    const server = await echoServer();
    cleanup.push(() => server.close());
    const got: Buffer[] = [];
    const batches: number[] = [];
    const c = new NativeUdpCarrier(
      native!,
      '127.0.0.1',
      server.port,
      4 << 20,
      (d) => (batches.push(d.length), got.push(...d.map((b) => Buffer.from(b)))),
      (e) => {
        throw e;
      },
    );
    cleanup.push(() => c.close());
    const payloads = Array.from({ length: 200 }, (_, i) => Buffer.alloc(1 + ((i * 97) % 1500), i));
    const data = Buffer.concat(payloads);
    const lengths = Uint32Array.from(payloads.map((p) => p.length));
    expect(c.send(data, lengths, payloads.length)).toBe(200);
    await eventually(() => got.length === 200, 5_000, 'all 200 echoes');
    got.forEach((g, i) => expect(g.equals(payloads[i]!)).toBe(true));
    expect(Math.max(...batches)).toBeLessThanOrEqual(64);
  });

  it('reads every batch into the one receive buffer of the carrier: no backing store per read', async () => {
    const server = await echoServer();
    cleanup.push(() => server.close());
    const stores = new Set<ArrayBufferLike>();
    let got = 0;
    const c = new NativeUdpCarrier(
      native!,
      '127.0.0.1',
      server.port,
      4 << 20,
      (d) => {
        for (const b of d) stores.add(b.buffer);
        got += d.length;
      },
      (e) => {
        throw e;
      },
    );
    cleanup.push(() => c.close());
    for (let round = 0; round < 3; round++) {
      const want = got + 10;
      expect(c.send(Buffer.alloc(10 * 100, round), new Uint32Array(10).fill(100), 10)).toBe(10);
      await eventually(() => got === want, 5_000, `round ${round}'s echoes`);
    }
    expect(stores.size).toBe(1);
  });

  it('a listener that closes the carrier within the call ends the reading there', async () => {
    const server = await echoServer();
    cleanup.push(() => server.close());
    const batches: number[] = [];
    const c: NativeUdpCarrier = new NativeUdpCarrier(
      native!,
      '127.0.0.1',
      server.port,
      4 << 20,
      (d) => {
        batches.push(d.length);
        c.close();
      },
      (e) => {
        throw e;
      },
    );
    expect(c.send(Buffer.alloc(200 * 100), new Uint32Array(200).fill(100), 200)).toBe(200);
    await eventually(() => batches.length > 0, 5_000, 'the first batch');
    // The rest of a wakeup's reads run in the same native call as the first: any read after the
    // close (into a buffer let go of) would have been delivered by now.
    expect(batches).toHaveLength(1);
  });

  it('reports an ICMP port unreachable as ECONNREFUSED, as dgram would', async () => {
    const probe = createSocket('udp4');
    probe.bind(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = probe.address().port;
    probe.close(); // nobody listens there now
    let error: Error | null = null;
    const c = new NativeUdpCarrier(
      native!,
      '127.0.0.1',
      port,
      0,
      () => {},
      (e) => (error = e),
    );
    cleanup.push(() => c.close());
    c.sendOne(Buffer.from('hello'));
    await eventually(() => error !== null, 5_000, 'an error');
    expect((error as unknown as { code: string }).code).toBe('ECONNREFUSED');
  });

  it('drops a datagram too long to be ours (truncated: length 0) and keeps reading', async () => {
    const server = await echoServer();
    cleanup.push(() => server.close());
    const got: number[] = [];
    const c = new NativeUdpCarrier(
      native!,
      '127.0.0.1',
      server.port,
      0,
      (d) => got.push(...d.map((b) => b.length)),
      () => {},
    );
    cleanup.push(() => c.close());
    c.sendOne(Buffer.alloc(9000, 1));
    c.sendOne(Buffer.alloc(100, 2));
    await eventually(() => got.includes(100), 5_000, 'the short echo');
    expect(got).toEqual([0, 100]);
  });

  it('close is idempotent; a closed carrier sends nothing', async () => {
    const server = await echoServer();
    cleanup.push(() => server.close());
    let heard = 0;
    server.on('message', () => heard++);
    const c = new NativeUdpCarrier(
      native!,
      '127.0.0.1',
      server.port,
      0,
      () => {},
      () => {},
    );
    expect(c.sendOne(Buffer.from('open'))).toBe(true);
    await eventually(() => heard === 1, 5_000, 'the open carrier heard');
    c.close();
    c.close();
    expect(c.sendOne(Buffer.from('x'))).toBe(false);
  });

  it('a worker thread that ends with its socket open closes it (no crash, the thread exits)', async () => {
    const server = await echoServer();
    cleanup.push(() => server.close());
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      const m = require(workerData.path);
      const lengths = new Uint32Array(64);
      const s = m.udpOpen('127.0.0.1', workerData.port, 0, lengths, Buffer.alloc(64 * 4096), (data, n) => { if (data) parentPort.postMessage(n); });
      const one = new Uint32Array([4]);
      m.udpSend(s, Buffer.from('ping'), one, 1);
      globalThis.keep = s;`;
    const { nativeStatus } = await import('../../core/common/index.js');
    const st = nativeStatus();
    const w = new Worker(code, { eval: true, workerData: { path: st.loaded ? st.path : '', port: server.port } });
    const [n] = (await once(w, 'message')) as [number];
    expect(n).toBe(1);
    const [exitCode] = (await Promise.all([once(w, 'exit'), w.terminate()])) as [[number], number];
    expect(exitCode[0]).toBe(1); // terminated
  });
});
