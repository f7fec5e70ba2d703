import { describe, expect, it } from 'vitest';
import { PINGS_BEFORE_SILENT, SilenceLimits } from '../../core/egress/silence-limits.js';

describe('SilenceLimits', () => {
  it('calls a near node silent after the configured floor (2 s), asking from a third of it', () => {
    const l = new SilenceLimits(2_000, 250);
    l.observe(1);
    for (let i = 0; i < 20; i++) l.observe(1 + (i % 2));
    expect(l.askAfterMs).toBe(666);
    expect(l.limitMs).toBe(2_000);
  });

  it('gives a slow node enough time for several echoes to come back', () => {
    const l = new SilenceLimits(2_000, 250);
    for (let i = 0; i < 50; i++) l.observe(700 + (i % 2 ? 100 : -100));
    // askAfter + 4 ticks + the round trip's high mark (srtt ~700 + 4·rttvar ~100)
    expect(l.rttAllowanceMs).toBeGreaterThan(900);
    expect(l.rttAllowanceMs).toBeLessThan(1_300);
    expect(l.limitMs).toBe(l.askAfterMs + PINGS_BEFORE_SILENT * 250 + l.rttAllowanceMs);
    expect(l.limitMs).toBeGreaterThan(2_500);
  });

  it('allows 1 s for an echo before any was measured, and never more than 10 s', () => {
    expect(new SilenceLimits(2_000, 250).rttAllowanceMs).toBe(1_000);
    const l = new SilenceLimits(2_000, 250);
    l.observe(30_000);
    expect(l.rttAllowanceMs).toBe(10_000);
  });

  it('follows a node that got faster (the first echo, through a fresh tunnel, is often slow)', () => {
    const l = new SilenceLimits(2_000, 250);
    l.observe(900);
    const first = l.limitMs;
    for (let i = 0; i < 40; i++) l.observe(20);
    expect(first).toBeGreaterThan(3_000);
    expect(l.limitMs).toBe(2_000);
  });

  it('ignores a nonsense sample', () => {
    const l = new SilenceLimits(2_000, 250);
    l.observe(Number.NaN);
    l.observe(-5);
    expect(l.srttMs).toBeNull();
  });
});

describe('SilenceLimits over a TCP carrier', () => {
  it('gives a lost segment two retransmissions before calling the node silent', () => {
    const l = new SilenceLimits(2_000, 250, 'stream');
    const udp = new SilenceLimits(2_000, 250, 'datagram');
    for (let i = 0; i < 50; i++) for (const x of [l, udp]) x.observe(250 + (i % 2 ? 25 : -25));
    const rtt = l.rttAllowanceMs;
    // askAfter + a tick + one round trip's high mark + RTO + 2·RTO (RTO = srtt + 200 ms)
    expect(l.limitMs).toBe(Math.ceil(666 + 250 + rtt + 3 * (l.srttMs! + 200)));
    expect(l.limitMs).toBeGreaterThan(udp.limitMs);
  });

  it('does not multiply a round trip widened by earlier losses (a blackholed slow node is left within ~5 s, not 9)', () => {
    const l = new SilenceLimits(2_000, 250, 'stream');
    // 300–500 ms away; every tenth echo met a retransmission on the carrier.
    for (let i = 0; i < 100; i++) l.observe(i % 10 === 9 ? 1_400 : 400 + (i % 3) * 50);
    // Three times the high mark would be ~9 s.
    expect(l.limitMs).toBeLessThan(6_000);
  });

  it('keeps the 2 s floor for a near node', () => {
    const l = new SilenceLimits(2_000, 250, 'stream');
    for (let i = 0; i < 20; i++) l.observe(1);
    expect(l.limitMs).toBe(2_000);
  });
});
