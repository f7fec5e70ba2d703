import { joined } from './lwip-memory.js';
import { ownSmall } from './lwip-memory.js';
import type { StackEvent, StackLease } from './stack-types.js';
import type { TcpStream } from './tcp-stream.js';
import type { StackUdpSocket } from './udp-socket.js';

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

/** Whom a stack's events are for: its sockets, pings, listeners and lease. */
export interface DispatchTargets {
  tcp: Map<number, TcpStream>;
  udp: ReadonlyMap<number, StackUdpSocket>;
  pings: ReadonlyMap<string, (rttMs: number) => void>;
  listeners: ReadonlyMap<number, { onConnection: (s: TcpStream) => void }>;
  maxConnections: number;
  lease(lease: StackLease | null): void;
  /** The stream for a connection a listener took. */
  accept(ev: Extract<StackEvent, { t: 'accepted' }>): TcpStream;
}

/** One event lwIP reported, handed to whom it is for (after the call into lwIP returned). */
export function dispatchStackEvent(ev: StackEvent, t: DispatchTargets): void {
  if (ev.t === 'udp') {
    t.udp.get(ev.id)?.deliver({ data: ev.data, address: ev.address, port: ev.port });
    return;
  }
  if (ev.t === 'icmp') {
    t.pings.get(`${ev.address}/${ev.ident}/${ev.seq}`)?.(0);
    return;
  }
  if (ev.t === 'lease') {
    t.lease(ev.lease);
    return;
  }
  if (ev.t === 'accepted') {
    const listener = t.listeners.get(ev.listenerId);
    const stream = t.accept(ev);
    t.tcp.set(ev.id, stream);
    if (!listener || t.tcp.size > t.maxConnections) {
      stream.destroy(); // resets the peer
      return;
    }
    stream.onConnected();
    listener.onConnection(stream);
    return;
  }
  const stream = t.tcp.get(ev.id);
  if (!stream) return; // the stream let go of its pcb; lwIP's late news is moot
  switch (ev.t) {
    case 'connected':
      stream.onConnected();
      break;
    case 'data':
      stream.onData(ownSmall(ev.data));
      break;
    case 'fin':
      stream.onFin();
      break;
    case 'sent':
      stream.onSent();
      break;
    case 'poll':
      stream.onPoll();
      break;
    case 'err':
      stream.onError(ev.err);
      break;
  }
}
