/**
 * How fast a node delivers when asked for much (#60, a node slowed to a crawl): the bytes bulk
 * downloads took through an egress since the last take, and the span they took it in. A stream
 * counts as bulk in a take when it brought at least BULK_MIN_BYTES and its reader never held it
 * back (the client reading slower than the node sends says nothing about the node). The span runs
 * from the first to the last byte of those streams, so a fast download that ended early in the
 * window is not averaged over the idle rest of it. What it cannot tell apart: a server that sends
 * slowly on purpose (a radio stream) from a slow node; the health monitor asks for more before it
 * calls a node slow (core/health/window-score.ts).
 */

/** A stream must bring this much in one take to count: a web page's objects are smaller. */
export const BULK_MIN_BYTES = 128 * 1024;

const MIN_SPAN_MS = 100;

/** Bounded: past this many streams in one take, new ones are not metered (already plenty). */
const MAX_STREAMS = 256;

export interface BulkSample {
  /** Bytes the bulk streams brought. */
  bytes: number;
  /** From their first byte to their last in the take, ms. */
  spanMs: number;
  /** How many streams were bulk. */
  streams: number;
}

interface StreamTake {
  bytes: number;
  firstAt: number;
  lastAt: number;
  heldBack: boolean;
}

export class BulkMeter {
  #streams = new Map<object, StreamTake>();

  /** `stream` brought `bytes` now. */
  data(stream: object, bytes: number, now = performance.now()): void {
    const s = this.#streams.get(stream);
    if (s) {
      s.bytes += bytes;
      s.lastAt = now;
    } else if (this.#streams.size < MAX_STREAMS) {
      this.#streams.set(stream, { bytes, firstAt: now, lastAt: now, heldBack: false });
    }
  }

  /** `stream`'s reader could not keep up (its buffer filled): it says nothing of the node this take. */
  heldBack(stream: object): void {
    const s = this.#streams.get(stream);
    if (s) s.heldBack = true;
  }

  /** What bulk streams did since the last take, or null when none was bulk; starts a new take. */
  take(): BulkSample | null {
    let bytes = 0;
    let streams = 0;
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (const s of this.#streams.values()) {
      if (s.heldBack || s.bytes < BULK_MIN_BYTES) continue;
      bytes += s.bytes;
      streams++;
      first = Math.min(first, s.firstAt);
      last = Math.max(last, s.lastAt);
    }
    this.#streams = new Map();
    if (streams === 0) return null;
    // A burst read in fewer turns than a tenth of a second is timed as that: a rate from one or
    // two reads would be noise (and would promise a speed the node never sustained).
    return { bytes, spanMs: Math.max(MIN_SPAN_MS, last - first), streams };
  }
}

/** Bytes per second of a sample. */
export function bulkRateBps(s: BulkSample): number {
  return (s.bytes * 1000) / s.spanMs;
}
