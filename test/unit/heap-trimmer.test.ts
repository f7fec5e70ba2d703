import { afterEach, describe, expect, it, vi } from 'vitest';
import { HeapTrimmer, silentLogger } from '../../core/common/index.js';

describe('HeapTrimmer', () => {
  afterEach(() => vi.useRealTimers());

  it('trims once for a burst of worker exits, a debounce after the first', async () => {
    vi.useFakeTimers();
    const heapTrim = vi.fn(async () => true);
    const t = new HeapTrimmer({ intervalMs: 0, debounceMs: 1_000, logger: silentLogger(), native: { heapTrim } });
    t.soon();
    t.soon();
    await vi.advanceTimersByTimeAsync(500);
    t.soon();
    expect(heapTrim).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(500);
    expect(heapTrim).toHaveBeenCalledTimes(1);
    t.soon();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(heapTrim).toHaveBeenCalledTimes(2);
    t.close();
  });

  it('runs one trim at a time, and counts and times each when it is done', async () => {
    let finish: (v: boolean) => void = () => {};
    const heapTrim = vi.fn(() => new Promise<boolean>((r) => (finish = r)));
    const t = new HeapTrimmer({ intervalMs: 0, logger: silentLogger(), native: { heapTrim } });
    const first = t.trim('a');
    await t.trim('b'); // one runs: this one is skipped
    expect(heapTrim).toHaveBeenCalledTimes(1);
    expect(t.stats.trims).toBe(0);
    finish(true);
    await first;
    expect(t.stats.trims).toBe(1);
    await Promise.all([t.trim('c'), Promise.resolve().then(() => finish(false))]);
    expect(heapTrim).toHaveBeenCalledTimes(2);
    t.close();
  });

  it('logs a failed trim and goes on', async () => {
    const heapTrim = vi.fn(async () => {
      throw new Error('could not queue the work');
    });
    const t = new HeapTrimmer({ intervalMs: 0, logger: silentLogger(), native: { heapTrim } });
    await expect(t.trim('x')).resolves.toBeUndefined();
    expect(t.stats.trims).toBe(0);
    t.close();
  });

  it('trims every interval, and nothing after close', async () => {
    vi.useFakeTimers();
    const heapTrim = vi.fn(async () => false);
    const t = new HeapTrimmer({ intervalMs: 60_000, logger: silentLogger(), native: { heapTrim } });
    await vi.advanceTimersByTimeAsync(180_000);
    expect(heapTrim).toHaveBeenCalledTimes(3);
    t.soon();
    t.close();
    await vi.advanceTimersByTimeAsync(180_000);
    expect(heapTrim).toHaveBeenCalledTimes(3);
  });

  it('does nothing and holds no timer without the native module (the JavaScript path)', () => {
    vi.useFakeTimers();
    const t = new HeapTrimmer({ intervalMs: 60_000, logger: silentLogger(), native: null });
    expect(t.active).toBe(false);
    t.soon();
    expect(vi.getTimerCount()).toBe(0);
    void t.trim('by hand');
    expect(t.stats.trims).toBe(0);
    t.close();
  });
});
