import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { exposeGc } from '../../core/common/buffer-collector.js';
import { TransferCollector } from '../../core/common/transfer-collector.js';

describe('TransferCollector: the buffers another thread hands this one are freed soon after they die (#44)', () => {
  it('scavenges once per everyBytes received, never two closer than minIntervalMs, and times each', () => {
    const calls: unknown[] = [];
    let now = 0;
    const gc = (o?: unknown) => {
      calls.push(o);
      now += 0.5;
    };
    const c = new TransferCollector(gc, { everyBytes: 1000, minIntervalMs: 50, now: () => now });
    c.received(999);
    expect(calls).toEqual([]);
    c.received(1);
    expect(calls).toEqual([{ type: 'minor' }]); // a scavenge, not a full collection
    now += 10;
    c.received(5000); // past the bytes, within the interval: waits, the bytes still count
    expect(calls).toHaveLength(1);
    now += 40;
    c.received(1);
    expect(calls).toHaveLength(2);
    expect(c.stats).toEqual({ bytes: 6001, collections: 2, maxMs: 0.5 });
  });

  it('without gc (an embedder refused the flag) it only counts', () => {
    const c = new TransferCollector(null, { everyBytes: 1, minIntervalMs: 0 });
    c.received(10);
    expect(c.stats).toEqual({ bytes: 10, collections: 0, maxMs: 0 });
  });

  it('for real: buffers a worker transfers here and this thread drops are freed, which the worker sees', async () => {
    // The worker sends 64 KiB buffers in bursts and reports its allocator's total: the buffers it
    // made and this thread has not freed yet (this thread's own count never includes them).
    const run = async (collector: TransferCollector | null) => {
      const w = new Worker(
        `const { parentPort } = require('node:worker_threads');
         let n = 0;
         const burst = () => {
           for (let i = 0; i < 64; i++) { const ab = new ArrayBuffer(65536); parentPort.postMessage(ab, [ab]); }
           if (++n < 48) setTimeout(burst, 2);
           else setTimeout(() => parentPort.postMessage({ live: process.memoryUsage().arrayBuffers }), 50);
         };
         burst();`,
        { eval: true },
      );
      try {
        return await new Promise<number>((resolve, reject) => {
          w.on('error', reject);
          w.on('message', (m: ArrayBuffer | { live: number }) => {
            if (m instanceof ArrayBuffer) collector?.received(m.byteLength);
            else resolve(m.live);
          });
        });
      } finally {
        await w.terminate();
      }
    };
    const gc = exposeGc();
    expect(gc).not.toBeNull();
    const collector = new TransferCollector(gc, { everyBytes: 4 << 20, minIntervalMs: 0 });
    const withScavenges = await run(collector);
    expect(collector.stats.bytes).toBe(48 * 64 * 65536);
    expect(collector.stats.collections).toBeGreaterThanOrEqual(40);
    // 192 MiB went through; at most the last 4 MiB (and what a scavenge raced) were still held here.
    expect(withScavenges).toBeLessThan(16 << 20);
  });
});
