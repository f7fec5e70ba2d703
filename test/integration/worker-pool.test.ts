import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, silentLogger } from '../../core/common/index.js';
import { TunnelWorkerPool, WorkerTunnelEgress } from '../../core/egress/index.js';
import { eventually } from '../helpers/fds.js';

/** An open that fails inside the worker at once (no server needed): the worker must come back. */
function openBroken(pool: TunnelWorkerPool, i: number): Promise<WorkerTunnelEgress> {
  return WorkerTunnelEgress.open({
    id: `broken-${i}`,
    nodeId: 'nowhere',
    link: { protocol: 'openvpn', profileText: 'this is not an OpenVPN profile' },
    logger: silentLogger(),
    pool,
  });
}

describe('TunnelWorkerPool (#32: workers for the process life)', () => {
  let pool: TunnelWorkerPool | null = null;
  afterEach(async () => {
    await pool?.close();
    pool = null;
  });

  it('a worker whose tunnel ended comes back for the next one: ten opens create no more workers than the pool keeps', async () => {
    let lettings = 0;
    const p = (pool = new TunnelWorkerPool({ heapLimitMb: 64, onWorkerExit: () => lettings++ }));
    for (let i = 0; i < 10; i++) {
      await expect(openBroken(p, i)).rejects.toMatchObject({ code: ErrorCodes.PROFILE_INVALID });
      // The worker says 'idle' after its failed open and is given back (not awaited by open's caller).
      await eventually(() => p.stats.reused + p.stats.ended >= i + 1, 5_000, `worker ${i} let go`);
    }
    expect(p.stats.taken).toBe(10);
    expect(p.stats.reused).toBe(10);
    // The spare started ahead and the one handed out, taken in turn: never a third.
    expect(p.stats.created).toBeLessThanOrEqual(2);
    // The owner is told each time a tunnel let go of its worker (the native heap can be trimmed).
    expect(lettings).toBe(10);
  });

  it('keeps at most maxIdle workers: one given back beyond that is ended', async () => {
    const p = (pool = new TunnelWorkerPool({ heapLimitMb: 64, maxIdle: 1 }));
    const opens = [0, 1, 2].map((i) => openBroken(p, i).catch((e: unknown) => e));
    await Promise.all(opens);
    await eventually(() => p.stats.reused + p.stats.ended >= 3, 5_000, 'all three let go');
    expect(p.idle).toBe(1);
    expect(p.stats.ended).toBeGreaterThanOrEqual(2);
  });

  it('keeps what a burst gave back (no thread created again for the next burst), and shrinks to one spare after idleTimeoutMs (#44)', async () => {
    let exits = 0;
    // The idle timeout must outlast a burst: on a loaded machine (CI, beside other suites) a burst
    // of three worker starts took longer than 1.5 s and a spare ended between the bursts.
    const p = (pool = new TunnelWorkerPool({ heapLimitMb: 64, idleTimeoutMs: 5_000, onWorkerExit: () => exits++ }));
    // Two bursts of three tunnels at once, as two balance members and a pick give back and take
    // three workers out of step: the second burst reuses the first burst's threads.
    for (let burst = 0; burst < 2; burst++) {
      await Promise.all([0, 1, 2].map((i) => openBroken(p, burst * 3 + i).catch((e: unknown) => e)));
      await eventually(() => p.stats.reused >= (burst + 1) * 3, 5_000, `burst ${burst} given back`);
    }
    const created = p.stats.created;
    expect(created).toBeLessThanOrEqual(4);
    expect(p.stats.ended).toBe(0);
    expect(p.idle).toBeGreaterThanOrEqual(3);
    // Idle past the timeout: ended down to one spare, which stays.
    await eventually(() => p.idle === 1, 15_000, 'the extras ended');
    expect(p.stats.ended).toBe(created - 1);
    // Each ended thread lets the heap trimmer run once it is gone, as each given back did.
    await eventually(() => exits === 6 + created - 1, 5_000, 'trims asked for the ended threads');
    await new Promise((r) => setTimeout(r, 2_000));
    expect(p.idle).toBe(1);
  }, 30_000);

  it('a worker that failed is ended, never given back', async () => {
    const p = (pool = new TunnelWorkerPool({ heapLimitMb: 64 }));
    const w = p.take();
    const exited = new Promise((resolve) => w.once('exit', resolve));
    p.ended(w);
    await w.terminate();
    await exited;
    expect(p.stats.reused).toBe(0);
    expect(p.take()).not.toBe(w);
  });

  it('closing the pool ends its idle workers', async () => {
    const p = (pool = new TunnelWorkerPool({ heapLimitMb: 64 }));
    await eventually(() => p.idle === 1, 5_000, 'the spare started');
    await p.close();
    expect(p.idle).toBe(0);
  });
});
