import { joined } from './lwip-memory.js';
import type { StackEvent } from './stack-types.js';

/**
 * Hands `events` to `fn` in order, a run of data for one stream joined into one chunk: one push to
 * its reader and one tcp_recved for what lwIP handed over in pieces.
 */
export function forEachCoalesced(events: readonly StackEvent[], fn: (ev: StackEvent) => void): void {
  for (let i = 0; i < events.length; i++) {
    const ev = events[i]!;
    if (ev.t === 'data') {
      let end = i + 1;
      while (end < events.length && events[end]!.t === 'data' && (events[end] as { id: number }).id === ev.id) end++;
      if (end > i + 1) {
        fn({ t: 'data', id: ev.id, data: joined(events.slice(i, end).map((e) => (e as { data: Buffer }).data)) });
        i = end - 1;
        continue;
      }
    }
    fn(ev);
  }
}
