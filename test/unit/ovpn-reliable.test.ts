import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReliableChannel, type ControlMessage } from '../../core/ovpn/reliable.js';

const payloadOf = (id: number): Buffer => Buffer.from(`m${id}`);

describe('control channel reliability layer', () => {
  afterEach(() => vi.useRealTimers());

  it('delivers exactly once and in order whatever the peer sends: duplicates, reordering, gaps, ids far ahead (property)', () => {
    // An arrival is a message id the adversary picks: mostly near the stream, sometimes anywhere in u32.
    const arrival = fc.oneof(
      { weight: 8, arbitrary: fc.nat({ max: 40 }) },
      { weight: 1, arbitrary: fc.nat({ max: 0xffffffff }) },
    );
    fc.assert(
      fc.property(fc.array(arrival, { maxLength: 300 }), (arrivals) => {
        const rel = new ReliableChannel({ sendWindow: 1, transmit: () => {} });
        rel.acceptReset(0);
        expect(rel.takeAcks(4)).toEqual([0]);
        const delivered: string[] = [];
        for (const id of arrivals) {
          const before = rel.receiveNext;
          const out = rel.receive(id, payloadOf(id));
          delivered.push(...out.map(String));
          // Never more than the window held back, whatever arrived.
          expect(rel.buffered).toBeLessThanOrEqual(16);
          // Anything in or behind the window is acknowledged, anything beyond is not.
          const acks = rel.takeAcks(100);
          if (id < before + 16) expect(acks).toEqual([id]);
          else expect(acks).toEqual([]);
        }
        // What came out is exactly messages 1..n-1 in order: no gap, no duplicate.
        expect(delivered).toEqual(Array.from({ length: rel.receiveNext - 1 }, (_, i) => `m${i + 1}`));
        // A peer that then retransmits everything in order completes the stream.
        const end = Math.max(rel.receiveNext, ...arrivals.filter((a) => a <= 40)) + 1;
        for (let id = 1; id < end; id++) delivered.push(...rel.receive(id, payloadOf(id)).map(String));
        expect(delivered).toEqual(Array.from({ length: end - 1 }, (_, i) => `m${i + 1}`));
        expect(rel.buffered).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the send window, sends each id first in order, never resends an acknowledged message, ignores bogus acks (property)', () => {
    vi.useFakeTimers();
    const step = fc.oneof(
      fc.record({ send: fc.constant(true) }),
      fc.record({ ack: fc.array(fc.oneof(fc.nat({ max: 30 }), fc.nat({ max: 0xffffffff })), { maxLength: 4 }) }),
      fc.record({ waitMs: fc.integer({ min: 0, max: 20_000 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(step, { maxLength: 120 }), (window, steps) => {
        const wire: ControlMessage[] = [];
        const acked = new Set<number>();
        // Only what went on the wire can be acknowledged: an ack for a queued, never-sent id is
        // bogus (the peer cannot have it), and the channel rightly ignores it and still sends it.
        const transmitted = new Set<number>();
        const rel = new ReliableChannel({
          sendWindow: window,
          transmit: (m) => void (wire.push(m), transmitted.add(m.msgId)),
        });
        let firstSends = 0;
        for (const s of steps) {
          const seen = wire.length;
          if ('send' in s) rel.send(0x20, Buffer.alloc(1));
          else if ('ack' in s) {
            // What was on the wire before this ack: an id the ack frees the window for goes out during
            // the call, after the ack was read, so the ack does not cover it.
            const before = new Set(transmitted);
            rel.acknowledged(s.ack);
            for (const id of s.ack) if (before.has(id)) acked.add(id);
          } else vi.advanceTimersByTime(s.waitMs);
          for (const m of wire.slice(seen)) {
            expect(acked.has(m.msgId)).toBe(false);
            if (m.msgId === firstSends) firstSends++;
            else expect(m.msgId).toBeLessThan(firstSends); // a retransmission, never a skip ahead
          }
          expect(rel.inFlight).toBeLessThanOrEqual(window);
        }
        // Acks free the window for what waits; acking everything sent drains it all.
        for (let i = 0; i <= steps.length && !rel.idle; i++)
          rel.acknowledged(Array.from({ length: rel.nextSendId }, (_, j) => j));
        expect(rel.idle).toBe(true);
        rel.close();
      }),
      // seed -1778723041 found the model's bug above (an ack for a queued id); seed -1992046098 the
      // next (an ack that frees the window for that very id); both stay covered.
      { numRuns: 200 },
    );
  });

  it('sends a queued message whose id was acknowledged before it went out (a bogus ack is ignored)', () => {
    const wire: ControlMessage[] = [];
    const rel = new ReliableChannel({ sendWindow: 2, transmit: (m) => void wire.push(m) });
    for (let i = 0; i < 3; i++) rel.send(0x20, Buffer.alloc(1));
    rel.acknowledged([2]); // id 2 waits for the window: not sent, so not the peer's to ack
    rel.acknowledged([0]);
    expect(wire.map((m) => m.msgId)).toEqual([0, 1, 2]);
    rel.close();
  });

  it('retransmits an unacknowledged message at 2, 4, 8, 16, 16 s and stops once it is acknowledged or closed', () => {
    vi.useFakeTimers();
    const at: number[] = [];
    const start = Date.now();
    const rel = new ReliableChannel({ sendWindow: 1, transmit: () => void at.push(Date.now() - start) });
    rel.send(0x20, Buffer.alloc(1));
    vi.advanceTimersByTime(2_000 + 4_000 + 8_000 + 16_000 + 16_000);
    expect(at).toEqual([0, 2_000, 6_000, 14_000, 30_000, 46_000]);
    rel.acknowledged([0]);
    vi.advanceTimersByTime(60_000);
    expect(at).toHaveLength(6);
    rel.send(0x20, Buffer.alloc(1));
    rel.close();
    vi.advanceTimersByTime(60_000);
    expect(at).toHaveLength(7);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a peer that never acknowledges cannot make the backlog grow without bound', () => {
    const rel = new ReliableChannel({ sendWindow: 1, transmit: () => {}, maxBacklog: 8 });
    for (let i = 0; i < 9; i++) rel.send(0x20, Buffer.alloc(1));
    expect(rel.backlog).toBe(8);
    expect(() => rel.send(0x20, Buffer.alloc(1))).toThrow(/control channel stuck/);
    rel.close();
  });

  it('only the first reset counts; a repeated one is acknowledged again', () => {
    const rel = new ReliableChannel({ sendWindow: 1, transmit: () => {} });
    expect(rel.acceptReset(0)).toBe(true);
    expect(rel.acceptReset(0)).toBe(false);
    expect(rel.takeAcks(4)).toEqual([0, 0]);
    expect(rel.receiveNext).toBe(1);
  });
});
