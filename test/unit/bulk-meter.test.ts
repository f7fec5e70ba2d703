import { describe, expect, it } from 'vitest';
import { BULK_MIN_BYTES, BulkMeter, bulkRateBps } from '../../core/egress/index.js';
import { healthOptions, scoreWindow, type WindowSample } from '../../core/health/index.js';

describe('the bulk meter: what a node delivers when asked for much (#60)', () => {
  it('counts streams that brought a bulk amount, over the span from their first byte to their last', () => {
    const m = new BulkMeter();
    const big = {};
    const page = {};
    m.data(big, 256 * 1024, 1_000);
    m.data(page, 20_000, 1_100); // a page's object: not bulk
    m.data(big, 256 * 1024, 1_500);
    const s = m.take()!;
    expect(s).toEqual({ bytes: 512 * 1024, spanMs: 500, streams: 1 });
    // A fast download that ended early is not averaged over the idle rest of the window.
    expect(bulkRateBps(s)).toBe(1024 * 1024);
    expect(m.take()).toBeNull(); // each take starts afresh
  });

  it('a stream whose reader held it back says nothing of the node', () => {
    const m = new BulkMeter();
    const slowReader = {};
    m.data(slowReader, 2 * BULK_MIN_BYTES, 0);
    m.heldBack(slowReader);
    m.data(slowReader, 2 * BULK_MIN_BYTES, 10_000);
    expect(m.take()).toBeNull();
  });

  it('several bulk streams add up: the node carries them together', () => {
    const m = new BulkMeter();
    const [x, y] = [{}, {}];
    m.data(x, BULK_MIN_BYTES, 0);
    m.data(y, BULK_MIN_BYTES, 0);
    m.data(x, BULK_MIN_BYTES, 1_000);
    m.data(y, BULK_MIN_BYTES, 2_000);
    expect(m.take()).toEqual({ bytes: 4 * BULK_MIN_BYTES, spanMs: 2_000, streams: 2 });
  });
});

describe('a health window and a crawl (#60)', () => {
  const o = healthOptions();
  const base: WindowSample = {
    link: 'up',
    dnsMs: 20,
    sessionsActive: 2,
    delta: { bytes: 1_000_000, connects: 2, failures: 0, segmentsOut: 0, retransmissions: 0 },
  };

  it('downloads slower than crawlBps make a window bad alone, only when a much faster node is known', () => {
    const slow = scoreWindow({ ...base, bulk: { rateBps: 40 * 1024, fasterKnown: true } }, o);
    expect(slow).toMatchObject({ bad: true, symptoms: ['slow'], bulkRateBps: 40 * 1024 });
    expect(slow.reasons).toEqual(['downloads crawl at 40 KiB/s']);
    expect(scoreWindow({ ...base, bulk: { rateBps: 40 * 1024, fasterKnown: false } }, o)).toMatchObject({
      bad: false,
      symptoms: [],
    });
    // Above the crawl line: not slow, whatever else is known.
    expect(scoreWindow({ ...base, bulk: { rateBps: 2 * o.crawlBps, fasterKnown: true } }, o).bad).toBe(false);
    // crawlBps 0 turns it off.
    expect(scoreWindow({ ...base, bulk: { rateBps: 1, fasterKnown: true } }, healthOptions({ crawlBps: 0 })).bad).toBe(
      false,
    );
  });
});
