import type { FlowRecord } from '../contracts/index.js';
import type { TrafficRow } from '../store/index.js';
import { dayOf } from './day.js';
import { MAX_PART_CHARS } from './options.js';

/** Where a flow was counted beside what it carries itself: the network it left from and the device that sent it. */
export interface FlowPlace {
  /** The network's key (the protocol memory's, core/common networkKeyOf). */
  network: string;
  /** The shared device's name for a flow from the LAN listener, '' for this computer. */
  device: string;
}

const cut = (s: string | null): string => (s ?? '').slice(0, MAX_PART_CHARS);

/** The combination a row counts (everything but its sums): one row per key and day. */
export function rowKey(r: TrafficRow): string {
  return [r.day, r.network, r.node, r.route, r.rule, r.program, r.device].join('\0');
}

/**
 * The rows not yet written: each ended flow's bytes added to its day's row for its combination
 * (network, node, route, rule, program, device). Flushing hands them over and starts afresh; a
 * flush that failed is not retried here (the store's guard has already said why and gone to memory).
 */
export class TrafficLedger {
  readonly #pending = new Map<string, TrafficRow>();

  /** Counts `r` on the day it ended. */
  add(r: FlowRecord, at: FlowPlace): void {
    const row: TrafficRow = {
      day: dayOf(r.endedAt),
      network: at.network,
      node: r.nodeId ?? '',
      route: r.route ?? '',
      rule: r.rule ? cut(r.rulePayload ? `${r.rule},${r.rulePayload}` : r.rule) : '',
      program: cut(r.program),
      device: cut(at.device),
      bytesUp: 0,
      bytesDown: 0,
      flows: 0,
    };
    const key = rowKey(row);
    const had = this.#pending.get(key) ?? row;
    had.bytesUp += r.bytesUp;
    had.bytesDown += r.bytesDown;
    had.flows++;
    this.#pending.set(key, had);
  }

  /** The rows counted since the last take (still counted in queries until written). */
  get pending(): readonly TrafficRow[] {
    return [...this.#pending.values()];
  }

  /** Hands the pending rows over and forgets them. */
  take(): TrafficRow[] {
    const rows = [...this.#pending.values()];
    this.#pending.clear();
    return rows;
  }

  clear(): void {
    this.#pending.clear();
  }
}
