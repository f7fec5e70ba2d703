import { afterEach, describe, expect, it } from 'vitest';
import { TunnelWorkerPool } from '../../core/egress/index.js';

describe('TunnelWorkerPool', () => {
  let pool: TunnelWorkerPool | null = null;
  afterEach(async () => {
    await pool?.close();
    pool = null;
  });

  it('tells its owner when a worker it handed out has ended (to trim the native heap), not when the idle spare is closed', async () => {
    let exits = 0;
    pool = new TunnelWorkerPool({ heapLimitMb: 64, onWorkerExit: () => exits++ });
    const w = pool.take();
    const ended = new Promise((resolve) => w.once('exit', resolve));
    await w.terminate();
    await ended;
    expect(exits).toBe(1);
    await pool.close();
    expect(exits).toBe(1);
  });
});
