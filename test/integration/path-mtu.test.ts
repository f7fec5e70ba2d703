import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadNative } from '../../core/common/index.js';
import { CARRIER_TCP_MSS, clampedTcpSocket, dialNodeTcp } from '../../core/reach/index.js';

/** The MSS the kernel uses for the connection from `localPort` (ss(8)'s `mss:`), or null. */
function mssOf(localPort: number): number | null {
  const out = execFileSync('ss', ['-tinH', 'src', `127.0.0.1:${localPort}`], { encoding: 'utf8' });
  const m = / mss:(\d+)/.exec(out);
  return m ? Number(m[1]) : null;
}

describe('carrier sockets offer an MSS that fits the 1,280-byte path budget (#60)', () => {
  let server: Server | null = null;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    server?.close();
    server = null;
  });

  async function listen(): Promise<{ port: number; accepted: Promise<Socket> }> {
    const accepted = new Promise<Socket>((r) => {
      server = createServer((s) => {
        sockets.push(s);
        r(s);
      });
    });
    server!.listen(0, '127.0.0.1');
    await once(server!, 'listening');
    return { port: (server!.address() as { port: number }).port, accepted };
  }

  it.skipIf(!loadNative())(
    "a node's kernel sends segments within the budget: its side of a dialled carrier has the clamped MSS, not loopback's 65,483",
    async () => {
      const { port, accepted } = await listen();
      const s = await dialNodeTcp({ host: '127.0.0.1', port, what: 'test carrier' });
      sockets.push(s);
      const far = await accepted;
      // The server's segments to us: what the node's kernel would send down the narrow path.
      const mss = mssOf(far.localPort!);
      expect(mss).not.toBeNull();
      expect(mss!).toBeLessThanOrEqual(CARRIER_TCP_MSS);
      // And the carrier still carries bytes both ways.
      far.write('ping');
      const [got] = (await once(s, 'data')) as [Buffer];
      expect(got.toString()).toBe('ping');
    },
  );

  it('a name, not an IPv4 address, gets no clamped socket (the caller dials as before)', () => {
    expect(clampedTcpSocket('vpn123.opengw.net')).toBeNull();
    expect(clampedTcpSocket('::1')).toBeNull();
  });

  it.skipIf(!loadNative())('the native module refuses an MSS no path needs, with a code', () => {
    expect(() => loadNative()!.tcpSocket(100)).toThrow(expect.objectContaining({ code: 'GATEHOP_NATIVE_ARGUMENT' }));
    expect(() => loadNative()!.tcpSocket(9000)).toThrow(expect.objectContaining({ code: 'GATEHOP_NATIVE_ARGUMENT' }));
  });
});
