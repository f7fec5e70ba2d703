import { afterEach, describe, expect, it, vi } from 'vitest';
import { HeapTrimmer, silentLogger } from '../../core/common/index.js';

describe('HeapTrimmer', () => {
  afterEach(() => vi.useRealTimers());

  it('trims once for a burst of worker exits, a debounce after the first', () => {
    vi.useFakeTimers();
    const heapTrim = vi.fn(() => true);
    const t = new HeapTrimmer({ intervalMs: 0, debounceMs: 1_000, logger: silentLogger(), native: { heapTrim } });
    t.soon();
    t.soon();
    vi.advanceTimersByTime(500);
    t.soon();
    expect(heapTrim).not.toHaveBeenCalled();
    vi.advanceTimersByTime(500);
    expect(heapTrim).toHaveBeenCalledTimes(1);
    t.soon();
    vi.advanceTimersByTime(1_000);
    expect(heapTrim).toHaveBeenCalledTimes(2);
    expect(t.stats.trims).toBe(2);
    t.close();
  });

  it('trims every interval, and nothing after close', () => {
    vi.useFakeTimers();
    const heapTrim = vi.fn(() => false);
    const t = new HeapTrimmer({ intervalMs: 60_000, logger: silentLogger(), native: { heapTrim } });
    vi.advanceTimersByTime(180_000);
    expect(heapTrim).toHaveBeenCalledTimes(3);
    t.soon();
    t.close();
    vi.advanceTimersByTime(180_000);
    expect(heapTrim).toHaveBeenCalledTimes(3);
  });

  it('does nothing and holds no timer without the native module (the JavaScript path)', () => {
    vi.useFakeTimers();
    const t = new HeapTrimmer({ intervalMs: 60_000, logger: silentLogger(), native: null });
    expect(t.active).toBe(false);
    t.soon();
    expect(vi.getTimerCount()).toBe(0);
    t.trim('by hand');
    expect(t.stats.trims).toBe(0);
    t.close();
  });
});
