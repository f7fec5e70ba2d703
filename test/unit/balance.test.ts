import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { Balancer, DirectEgress, EgressManager, UnavailableEgress } from '../../core/egress/index.js';
import type { Egress, EgressLease } from '../../core/contracts/index.js';

const log = silentLogger();
const egress = (id: string): Egress => new DirectEgress(id);
const cands = (...sessions: number[]) => sessions.map((s, i) => ({ egress: egress(`e${i}`), sessions: s }));

describe('Balancer strategies (issue #15)', () => {
  it('failover always takes the first (best-ranked) usable member', () => {
    const b = new Balancer('failover');
    expect([0, 1, 2].map(() => b.pick(cands(5, 0, 0)))).toEqual([0, 0, 0]);
  });

  it('round-robin takes each member in turn', () => {
    const b = new Balancer('round-robin');
    expect(Array.from({ length: 6 }, () => b.pick(cands(0, 0, 0)))).toEqual([0, 1, 2, 0, 1, 2]);
  });

  it('least-sessions takes the member with the fewest sessions, the better-ranked on a tie', () => {
    const b = new Balancer('least-sessions');
    expect(b.pick(cands(3, 1, 2))).toBe(1);
    expect(b.pick(cands(2, 2, 2))).toBe(0);
  });

  it('lowest-latency takes the fastest member; an unmeasured one counts as slowest', () => {
    const list = cands(0, 0, 0);
    const rtt = new Map<Egress, number | null>([
      [list[0]!.egress, 80],
      [list[1]!.egress, null],
      [list[2]!.egress, 20],
    ]);
    const b = new Balancer('lowest-latency', (e) => rtt.get(e) ?? null);
    expect(b.pick(list)).toBe(2);
    rtt.set(list[2]!.egress, null);
    expect(b.pick(list)).toBe(0);
  });
});

describe('EgressManager with balance members (issue #15)', () => {
  const manager = (strategy: 'round-robin' | 'failover' | 'least-sessions' = 'round-robin') =>
    new EgressManager(new UnavailableEgress('none', 'no tunnel'), log, { strategy });

  it('spreads new sessions over the active egress and the members, each session keeping its own', () => {
    const m = manager();
    const [a, b, c] = [egress('a'), egress('b'), egress('c')];
    m.setActive(a, 'test');
    m.addMember(b, 'test');
    m.addMember(c, 'test');
    const leases = Array.from({ length: 6 }, () => m.acquire());
    expect(leases.map((l) => l.egress.id)).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    expect(m.members.map((x) => [x.egress.id, x.primary, x.sessions])).toEqual([
      ['a', true, 2],
      ['b', false, 2],
      ['c', false, 2],
    ]);
    expect(m.activeSessions).toBe(6);
  });

  it('a member marked down gets no new sessions; with every member down the first one still serves', () => {
    const m = manager();
    const [a, b] = [egress('a'), egress('b')];
    m.setActive(a, 'test');
    m.addMember(b, 'test');
    m.setDown(a, true, 'probes failed');
    expect([m.acquire(), m.acquire(), m.acquire()].map((l) => l.egress.id)).toEqual(['b', 'b', 'b']);
    m.setDown(b, true, 'probes failed');
    expect(m.acquire().egress.id).toBe('a');
    m.setDown(a, false, 'recovered');
    expect(m.members.find((x) => x.egress === a)!.down).toBe(false);
  });

  it('a removed member drains: its sessions go on, a zero-progress session is told to move, and it closes with its last session', async () => {
    const m = manager('failover');
    const [a, b] = [egress('a'), egress('b')];
    m.setActive(a, 'test');
    m.addMember(b, 'test');
    m.setDown(a, true, 'to steer the next session to b');
    const lease: EgressLease = m.acquire();
    expect(lease.egress).toBe(b);
    let retired = 0;
    lease.onRetire(() => retired++);
    m.removeMember(b, 'replaced');
    expect(retired).toBe(1);
    expect(m.draining.map((d) => [d.egress.id, d.sessions])).toEqual([['b', 1]]);
    expect(b.state).not.toBe('closed');
    lease.release();
    expect(m.draining).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(b.state).toBe('closed');
    expect(m.stats.drained).toBe(1);
  });

  it('a member that died is dropped without draining', () => {
    const m = manager();
    const [a, b] = [egress('a'), egress('b')];
    m.setActive(a, 'test');
    m.addMember(b, 'test');
    m.removeMember(b, 'died', true);
    expect(m.draining).toEqual([]);
    expect(m.members.map((x) => x.egress.id)).toEqual(['a']);
  });

  it('with the active egress gone, the members keep taking sessions instead of the fallback', () => {
    const m = manager();
    const [a, b] = [egress('a'), egress('b')];
    m.setActive(a, 'test');
    m.addMember(b, 'test');
    m.clearActive(a, 'died');
    expect([m.acquire(), m.acquire()].map((l) => l.egress.id)).toEqual(['b', 'b']);
  });

  it('a member made active keeps its sessions and stops being a member', () => {
    const m = manager('failover');
    const [a, b] = [egress('a'), egress('b')];
    m.setActive(a, 'test');
    m.addMember(b, 'test');
    m.setDown(a, true, 'steer');
    m.acquire();
    m.setActive(b, 'the user picked b');
    expect(m.members.map((x) => [x.egress.id, x.primary, x.sessions])).toEqual([['b', true, 1]]);
  });
});
