import { describe, expect, it, vi } from 'vitest';
import { BufferCollector } from '../../core/common/buffer-collector.js';

/** A thread's ArrayBuffer total, moved by the test; a collection frees what is dead. */
function fakeThread(start: number) {
  const t = { bytes: start, live: start, collections: 0 };
  return {
    t,
    collect: () => {
      t.collections++;
      t.bytes = t.live;
    },
    readBytes: () => t.bytes,
  };
}

describe('BufferCollector: a busy tunnel thread collects when its dead buffers pile up (#44)', () => {
  it('does not collect within the slack, and collects once past it, from what the last collection left', () => {
    const f = fakeThread(1 << 20);
    const c = new BufferCollector(f.collect, { slackBytes: 8 << 20, intervalMs: 60_000, readBytes: f.readBytes });
    c.start();
    f.t.bytes += 8 << 20; // exactly the slack: nothing yet
    expect(c.check()).toBe(false);
    f.t.bytes += 1;
    expect(c.check()).toBe(true);
    expect(f.t.collections).toBe(1);
    // 2 MiB stay live after the collection: the next one waits for the slack above that.
    f.t.live = 3 << 20;
    f.t.bytes = f.t.live;
    expect(c.check()).toBe(false);
    f.t.bytes = f.t.live + (8 << 20) + 1;
    expect(c.check()).toBe(true);
    expect(c.stats).toEqual({ collections: 2, peakBytes: (3 << 20) + (8 << 20) + 1 });
    c.stop();
  });

  it('follows a collection V8 made on its own: the slack counts from the lower total', () => {
    const f = fakeThread(20 << 20);
    const c = new BufferCollector(f.collect, { slackBytes: 8 << 20, intervalMs: 60_000, readBytes: f.readBytes });
    c.start();
    f.t.bytes = 2 << 20; // V8 collected
    expect(c.check()).toBe(false);
    f.t.bytes = (2 << 20) + (8 << 20) + 1; // below the first base + slack, above the new one
    expect(c.check()).toBe(true);
    c.stop();
  });

  it('looks on its own timer while started and not after stop()', () => {
    vi.useFakeTimers();
    try {
      const f = fakeThread(0);
      const c = new BufferCollector(f.collect, { slackBytes: 1024, intervalMs: 2_000, readBytes: f.readBytes });
      c.start();
      f.t.bytes = 4096;
      vi.advanceTimersByTime(1_999);
      expect(f.t.collections).toBe(0);
      vi.advanceTimersByTime(1);
      expect(f.t.collections).toBe(1);
      c.stop();
      f.t.bytes = 1 << 20;
      vi.advanceTimersByTime(60_000);
      expect(f.t.collections).toBe(1);
      // A new tunnel: counted from its own start.
      c.start();
      expect(c.stats.collections).toBe(0);
      c.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
