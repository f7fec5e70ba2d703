import type { FlowRecord } from '../contracts/index.js';
import { MAX_CLOSED_BYTES } from './options.js';

/** A rough size of one record in memory and as JSON: its strings plus a fixed overhead for the numbers. */
function sizeOf(r: FlowRecord): number {
  return 200 + r.host.length + r.client.length + (r.rule?.length ?? 0) + (r.rulePayload?.length ?? 0) +
    (r.nodeId?.length ?? 0) + (r.program?.length ?? 0) + (r.user?.length ?? 0) + (r.errCode?.length ?? 0); // prettier-ignore
}

/**
 * The last closed connections, newest last, bounded in rows (`max`, a quarter more between trims)
 * and in bytes (MAX_CLOSED_BYTES, likewise): a flood of short connections pushes the oldest out.
 */
export class ClosedFlows {
  #rows: FlowRecord[] = [];
  #bytes = 0;
  /** Records added since the last takeNew() (what a persisting flush writes); only while kept. */
  #fresh: FlowRecord[] = [];
  /** Whether takeNew() will be asked for them (the user keeps closed connections). */
  collectNew = false;

  constructor(private max: number) {}

  add(r: FlowRecord): void {
    this.#rows.push(r);
    this.#bytes += sizeOf(r);
    if (this.collectNew) {
      this.#fresh.push(r);
      // More than a list's worth between two writes: only the newest are written (the list's own).
      if (this.#fresh.length > this.max * 1.25) this.#fresh = this.#fresh.slice(-this.max);
    }
    this.#trim();
  }

  setMax(max: number): void {
    this.max = max;
    this.#trim(true);
  }

  /** Rows held: at most a quarter over `max` between trims (find() never returns more than `max`). */
  get size(): number {
    return this.#rows.length;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /**
   * The newest `limit` matching `query` (every word, case-insensitive, found in the host, rule,
   * node, program, device or how it ended), newest first.
   */
  find(query: string, limit: number): FlowRecord[] {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    const out: FlowRecord[] = [];
    const oldest = Math.max(0, this.#rows.length - this.max);
    for (let i = this.#rows.length - 1; i >= oldest && out.length < limit; i--) {
      const r = this.#rows[i]!;
      if (words.length === 0) {
        out.push(r);
        continue;
      }
      const text = [
        r.host,
        String(r.port),
        r.rule,
        r.rulePayload,
        r.nodeId,
        r.program,
        r.user,
        r.route,
        r.end,
        r.errCode,
      ]
        .join(' ')
        .toLowerCase();
      if (words.every((w) => text.includes(w))) out.push(r);
    }
    return out;
  }

  /** Records added since the last call. */
  takeNew(): FlowRecord[] {
    const fresh = this.#fresh;
    this.#fresh = [];
    return fresh;
  }

  clear(): void {
    this.#rows = [];
    this.#fresh = [];
    this.#bytes = 0;
  }

  /**
   * Back to `max` rows and MAX_CLOSED_BYTES once either is passed by a quarter: dropping in batches
   * keeps a flood of short connections from copying the list at every one.
   */
  #trim(force = false): void {
    const over = this.#rows.length > this.max * 1.25 || this.#bytes > MAX_CLOSED_BYTES * 1.25;
    if (!over && !force) return;
    let drop = 0;
    while (this.#rows.length - drop > this.max || (this.#bytes > MAX_CLOSED_BYTES && drop < this.#rows.length - 1)) {
      this.#bytes -= sizeOf(this.#rows[drop]!);
      drop++;
    }
    if (drop > 0) this.#rows = this.#rows.slice(drop);
  }
}
