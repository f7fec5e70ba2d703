import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { LeaveRules } from '../../core/groups/leave-rules.js';
import type { Held } from '../../core/groups/types.js';
import { healthOptionsSchema, SwitchPolicy } from '../../core/health/index.js';

const health = healthOptionsSchema.parse({ minSwitchIntervalMs: 60_000, flapWindowMs: 600_000, leftHoldMs: 1_800_000 });

function rules(o: { faster?: string | null } = {}) {
  const calls: string[] = [];
  const policy = new SwitchPolicy(health);
  const leave = new LeaveRules({
    selector: {
      recordLeft: (id, shape) => {
        calls.push(`left ${id} ${shape}`);
        return {} as never;
      },
      recordFailure: (id) => {
        calls.push(`failure ${id}`);
        return {} as never;
      },
      fasterNodeKnown: () => (o.faster === undefined ? 'n2' : o.faster) as never,
    },
    health: () => health,
    policy,
    logger: silentLogger(),
  });
  return { leave, calls, policy };
}

const held = (id: string): Held => ({ node: { id } as Held['node'], egress: {} as Held['egress'], since: 0, off: [] });

afterEach(() => void vi.useRealTimers());

describe('LeaveRules: when the node in use is left for failing (#60)', () => {
  it("a node's tunnel dropping twice within the flap window is flapping and held away; once is one failure; one tunnel drops once", () => {
    const { leave, calls } = rules();
    const first = held('n1');
    expect(leave.tunnelDropped(first)).toBe('dropped');
    expect(leave.tunnelDropped(first)).toBe('dropped'); // silent, then closed: the same drop
    expect(leave.tunnelDropped(held('n1'))).toBe('flapping');
    expect(calls).toEqual(['failure n1', 'failure n1', 'left n1 flapping']);
  });

  it('every connect failing is left at once, but not twice within the anti-flap minimum: the second waits, then is asked again', () => {
    vi.useFakeTimers();
    const { leave, calls, policy } = rules();
    expect(leave.judge('n1', 'connects', true, ['connects'], () => {})).toEqual({
      leave: true,
      urgent: true,
      shape: 'connects',
    });
    policy.recordSwitch();
    let again = 0;
    expect(leave.judge('n2', 'connects', true, ['connects'], () => again++)).toEqual({ leave: false });
    expect(leave.judge('n2', 'connects', true, ['connects'], () => again++)).toEqual({ leave: false }); // one hold
    vi.advanceTimersByTime(60_000);
    expect(again).toBe(1);
    expect(calls).toEqual(['left n1 connects']);
  });

  it('a crawl counts only with a faster node known, and once per hold: the next slow node is likelier the site or this network', () => {
    expect(rules({ faster: null }).leave.crawlCounts('n1', 50_000)).toBe(false);
    const { leave } = rules();
    expect(leave.crawlCounts('n1', 50_000)).toBe(true);
    expect(leave.judge('n1', 'slow', false, ['slow'], () => {})).toMatchObject({ leave: true, shape: 'slow' });
    expect(leave.crawlCounts('n2', 50_000)).toBe(false);
  });
});
