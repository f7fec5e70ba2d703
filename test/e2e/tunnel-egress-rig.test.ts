import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes, silentLogger } from '../../core/common/index.js';
import { injectLwipAssertion, type TcpStream } from '../../core/netstack/index.js';
import {
  openTunnel,
  TunnelEgress,
  TunnelWorkerPool,
  tunnelWorkerCounters,
  WorkerTunnelEgress,
  type Tunnel,
} from '../../core/egress/index.js';
import { eventually } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { Rig } from '../rig/rig.js';

const BIG_MIB = 16;

/** GET through a tunnel; resolves with the body's SHA-256 and length (streamed, never buffered whole). */
function download(t: Tunnel, path: string, onData?: (n: number) => void): Promise<{ sha256: string; bytes: number }> {
  return t.connectTcp('files.test', 80).then((c) => {
    const body = readBody(c.stream, onData);
    c.stream.write(`GET ${path} HTTP/1.1\r\nHost: files.test\r\nConnection: close\r\n\r\n`);
    return body;
  });
}

/** An HTTP response's body from `stream`, past its head: SHA-256 and length, counted as it comes. */
function readBody(stream: Duplex, onData?: (n: number) => void): Promise<{ sha256: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    let head: Buffer | null = Buffer.alloc(0);
    let bytes = 0;
    stream.on('data', (d: Buffer) => {
      if (head) {
        head = Buffer.concat([head, d]);
        const i = head.indexOf('\r\n\r\n');
        if (i < 0) return;
        d = head.subarray(i + 4);
        head = null;
      }
      h.update(d);
      bytes += d.length;
      onData?.(bytes);
    });
    stream.once('end', () => resolve({ sha256: h.digest('hex'), bytes }));
    stream.once('error', reject);
  });
}

describe.skipIf(!isRoot)('tunnels as egresses on real servers, in worker threads and on the main thread', () => {
  let rig: Rig;
  const open: Tunnel[] = [];
  beforeAll(async () => {
    rig = await Rig.up({ nodes: 2, openvpn: ['gcm-udp'], bigMib: BIG_MIB });
  }, 240_000);
  afterAll(async () => {
    await Promise.all(open.splice(0).map((t) => t.close()));
    await rig?.down();
  });

  async function tunnel(node: string, proto: 'tcp' | 'udp', threads: boolean): Promise<Tunnel> {
    const n = rig.node(node);
    const t = await openTunnel({
      id: `t-${node}-${proto}-${threads}`,
      nodeId: n.name,
      link: { protocol: 'openvpn', profileText: readFileSync(n.profiles[proto]!, 'utf8') },
      logger: silentLogger(),
      threads,
    });
    open.push(t);
    return t;
  }

  const cases = [
    ['n1', 'tcp'],
    ['n1', 'udp'],
    ['o1', 'udp'],
  ] as const;
  for (const threads of [true, false]) {
    for (const [node, proto] of cases) {
      it(`${threads ? 'worker' : 'main thread'}: ${node} over ${proto} carries TCP (SHA-256), UDP and DNS`, async () => {
        const t = await tunnel(node, proto, threads);
        expect(t instanceof WorkerTunnelEgress).toBe(threads);
        expect(await t.resolve('files.test')).toEqual([rig.state.inetAddress]);
        const big = await download(t, '/big');
        expect(big).toEqual({ sha256: rig.state.bigSha256, bytes: rig.state.bigBytes });
        const u = await t.bindUdp();
        const echoed = new Promise<string>((r) => u.onMessage((d) => r(d.data.toString())));
        u.send(Buffer.from('echo through the tunnel'), rig.state.inetAddress, 7);
        expect(await echoed).toBe('echo through the tunnel');
        u.close();
        expect(t.linkState()).toBe('up');
        await t.close();
        expect(t.state).toBe('closed');
        // close() resolves once the tunnel's thread is let go (back to the pool, or ended).
        if (t instanceof WorkerTunnelEgress) expect(t.threadAlive).toBe(false);
      }, 120_000);
    }
  }

  it("a reader that stopped until the window closed gets every byte from SoftEther's SecureNAT (which never probes a closed window) though the ACKs reopening it are lost", async () => {
    const t = (await tunnel('n1', 'udp', false)) as TunnelEgress;
    const c = await t.connectTcp('files.test', 80);
    const stream = c.stream as TcpStream;
    stream.on('error', () => {}); // the end is judged by 'end' and the bytes below
    stream.pause();
    stream.write('GET /big HTTP/1.1\r\nHost: files.test\r\nConnection: close\r\n\r\n');
    // Nobody reads: lwIP's window fills and closes, and SecureNAT stops sending.
    await eventually(() => (stream.info()?.rcvWnd ?? 1 << 20) < 4096, 30_000, 'the receive window closed');
    await new Promise((r) => setTimeout(r, 500));
    // Every small datagram to the node is lost while the reader starts again: the ACKs that reopen
    // the window go nowhere (the data, had any come, is larger and would pass).
    const drop = rig.dropSmallDatagramsTo('n1', 200);
    let bytes = 0;
    const body = readBody(stream, (n) => (bytes = n));
    stream.resume();
    let lost = 0;
    try {
      await eventually(() => drop.packets() > 0, 5_000, 'a window update was dropped');
      await new Promise((r) => setTimeout(r, 1_500));
      lost = drop.packets();
    } finally {
      drop();
    }
    // The window's news reaches SecureNAT again by our resent update (glue.c) or by our answer to
    // data it sends again, whichever comes first; test/netstack/back-to-back.test.ts pins the
    // resend against a sender that sends nothing at all. 20 s is many resends' worth.
    const got = await Promise.race([
      body,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`stalled at ${bytes} bytes (${lost} small datagrams dropped)`)),
          20_000,
        ).unref(),
      ),
    ]);
    expect(got).toEqual({ sha256: rig.state.bigSha256, bytes: rig.state.bigBytes });
    await t.close();
  }, 120_000);

  it("tunnels open in the pool's workers one after another, each reusing the thread the last one closed (#32: no new thread per switch); closing the pool ends them", async () => {
    const pool = new TunnelWorkerPool({ heapLimitMb: 128 });
    try {
      for (const node of ['n1', 'o1', 'n1', 'o1']) {
        const n = rig.node(node);
        const t = await openTunnel({
          id: `pooled-${node}`,
          nodeId: n.name,
          link: { protocol: 'openvpn', profileText: readFileSync(n.profiles.udp!, 'utf8') },
          logger: silentLogger(),
          pool,
        });
        open.push(t);
        expect(await download(t, '/bytes/100000')).toMatchObject({ bytes: 100000 });
        await t.close();
        expect((t as WorkerTunnelEgress).threadAlive).toBe(false); // given back, no longer this tunnel's
      }
      // Four tunnels: the spare started ahead and the thread handed back, taken in turn.
      expect(pool.stats.taken).toBe(4);
      expect(pool.stats.created).toBeLessThanOrEqual(2);
      expect(pool.stats.reused).toBe(4);
    } finally {
      await pool.close();
    }
    expect(pool.idle).toBe(0);
  }, 120_000);

  it('an lwIP assertion in one of two live main-thread tunnels closes that tunnel with GH_ERR_NETSTACK_FAILED; the other download finishes intact and the process runs on (#32)', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): void => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const victim = (await tunnel('n1', 'udp', false)) as TunnelEgress;
      const other = await tunnel('n2', 'udp', false);
      let victimBytes = 0;
      const failed = download(victim, '/big', (n) => (victimBytes = n)).then(
        () => null,
        (err: { code?: string }) => err.code,
      );
      const intact = download(other, '/big');
      await eventually(() => victimBytes > 1 << 20, 30_000, 'the victim download is under way');
      const closed = new Promise<string>((r) => victim.onClose(r));
      // The next packet or timer that reaches the victim's lwIP fails as an lwIP assertion would.
      injectLwipAssertion(victim.stack);
      expect(await closed).toMatch(/GH_ERR_NETSTACK_FAILED: lwIP assertion failed/);
      expect(await failed).toBe(ErrorCodes.NETSTACK_FAILED);
      expect(victim.state).toBe('closed');
      expect(victim.stack.failure?.code).toBe(ErrorCodes.NETSTACK_FAILED);
      expect(await intact).toEqual({ sha256: rig.state.bigSha256, bytes: rig.state.bigBytes });
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  }, 120_000);

  it('a tunnel worker killed mid-transfer fails only its own download, with a coded error; the other tunnel finishes intact', async () => {
    const victim = await tunnel('n1', 'udp', true);
    const other = await tunnel('n2', 'udp', true);
    let victimBytes = 0;
    const failed = download(victim, '/big', (n) => (victimBytes = n)).then(
      () => null,
      (err: { code?: string }) => err.code,
    );
    const intact = download(other, '/big');
    await eventually(() => victimBytes > 1 << 20, 30_000, 'the victim download is under way');
    const failuresBefore = tunnelWorkerCounters.failures;
    const closed = new Promise<string>((r) => victim.onClose(r));
    await (victim as WorkerTunnelEgress).kill('killed by the test');
    expect(await failed).toBe(ErrorCodes.TUNNEL_WORKER_FAILED);
    expect(await closed).toMatch(/killed by the test/);
    expect(tunnelWorkerCounters.failures).toBe(failuresBefore + 1);
    expect((victim as WorkerTunnelEgress).threadAlive).toBe(false);
    expect(await intact).toEqual({ sha256: rig.state.bigSha256, bytes: rig.state.bigBytes });
  }, 120_000);
});
