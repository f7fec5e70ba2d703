import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { HealthMonitor, healthOptions, scoreWindow, SwitchPolicy, type HealthSource } from '../../core/health/index.js';

const opts = healthOptions();
const quiet = { bytes: 1000, connects: 0, failures: 0, segmentsOut: 0, retransmissions: 0 };

describe('health window score', () => {
  it('names failing, or most connects failing, is a bad window alone: the two shapes of a half-dead node (#60)', () => {
    // The node's resolver silent, in a window nobody used: names fail for everyone.
    expect(
      scoreWindow({ link: 'up', dnsMs: null, sessionsActive: 0, delta: { ...quiet, bytes: 0 } }, opts),
    ).toMatchObject({ bad: true, symptoms: ['dns'], quiet: true });
    // The node's uplink dead while its tunnel and resolver answer: 4 connects, 4 timeouts.
    const uplink = scoreWindow(
      { link: 'up', dnsMs: 20, sessionsActive: 0, delta: { ...quiet, bytes: 0, connects: 4, failures: 4 } },
      opts,
    );
    expect(uplink).toMatchObject({ bad: true, symptoms: ['connects'], quiet: false, reasons: ['4/4 connects failed'] });
  });

  it('a fine window scores 1; a link that is down or reconnecting vetoes with 0', () => {
    expect(scoreWindow({ link: 'up', dnsMs: 20, sessionsActive: 1, delta: quiet }, opts)).toMatchObject({
      score: 1,
      bad: false,
    });
    expect(scoreWindow({ link: 'reconnecting', dnsMs: 20, sessionsActive: 0, delta: quiet }, opts)).toMatchObject({
      score: 0,
      bad: true,
      reasons: ['link reconnecting'],
    });
  });

  it('each symptom takes its share; a slow resolver, a stall or retransmission alone is not a bad window', () => {
    const slowDns = scoreWindow({ link: 'up', dnsMs: 2_000, sessionsActive: 0, delta: quiet }, opts);
    expect(slowDns).toMatchObject({ score: 0.75, bad: false, symptoms: ['dns-slow'] });
    const stall = scoreWindow({ link: 'up', dnsMs: 20, sessionsActive: 3, delta: { ...quiet, bytes: 0 } }, opts);
    expect(stall).toMatchObject({ score: 0.7, bad: false, symptoms: ['stall'] });
    const failing = scoreWindow(
      { link: 'up', dnsMs: null, sessionsActive: 3, delta: { ...quiet, bytes: 0, connects: 4, failures: 3 } },
      opts,
    );
    expect(failing.bad).toBe(true);
    expect(failing.reasons).toEqual(['dns failed', '3/4 connects failed', 'stall: 3 sessions, no bytes']);
    expect(failing.symptoms).toEqual(['dns', 'connects', 'stall']);
    const retrans = scoreWindow(
      { link: 'up', dnsMs: 20, sessionsActive: 1, delta: { ...quiet, segmentsOut: 1000, retransmissions: 400 } },
      opts,
    );
    expect(retrans.reasons).toEqual(['retransmitting 40 %']);
    // Too few CONNECTs to judge a failure rate.
    expect(
      scoreWindow({ link: 'up', dnsMs: 20, sessionsActive: 0, delta: { ...quiet, connects: 2, failures: 2 } }, opts)
        .score,
    ).toBe(1);
  });
});

function fakeSource(): HealthSource & {
  link: 'up' | 'reconnecting' | 'down';
  dns: number | null;
  stats: { bytesUp: number; bytesDown: number; sessionsActive: number; sessionsTotal: number; failures: number };
} {
  const s = {
    id: 'e1',
    link: 'up' as 'up' | 'reconnecting' | 'down',
    dns: 10 as number | null,
    stats: { bytesUp: 0, bytesDown: 0, sessionsActive: 0, sessionsTotal: 0, failures: 0 },
    linkState: () => s.link,
    measureDns: async () => {
      if (s.dns === null) throw new Error('no answer');
      return s.dns;
    },
    tcpCounters: () => ({ segmentsOut: 0, retransmissions: 0 }),
  };
  return s;
}

/** A monitor (windows by hand: its timer is an hour) watching a fake source, and what it asked for. */
function watched() {
  const asked: string[] = [];
  const m = new HealthMonitor(
    healthOptions({ intervalMs: 60_000 }),
    { onUnhealthy: (_s, r) => asked.push(r) },
    silentLogger(),
  );
  const src = fakeSource();
  m.watch(src);
  return { asked, m, src };
}

describe('HealthMonitor', () => {
  it('asks for a switch only after badWindows bad windows in a row; a good window starts the count over', async () => {
    const { asked, m, src } = watched();
    src.link = 'reconnecting';
    await m.sample();
    await m.sample();
    src.link = 'up';
    await m.sample(); // good: back to zero
    expect(m.consecutiveBad).toBe(0);
    src.link = 'down';
    await m.sample();
    await m.sample();
    expect(asked).toEqual([]);
    await m.sample();
    expect(asked).toEqual(['3 bad health windows (link down)']);
    m.stop();
  });

  it('a single bad sample never asks', async () => {
    const { asked, m, src } = watched();
    for (let i = 0; i < 20; i++) {
      src.link = i % 3 === 0 ? 'down' : 'up';
      await m.sample();
    }
    expect(asked).toEqual([]);
    m.stop();
  });
});

describe('HealthMonitor and a half-dead node (#60)', () => {
  it('counts windows that saw the failure in a row: a quiet window between tries does not wash out dead connects, one with working connects does', async () => {
    const { asked, m, src } = watched();
    const tries = (n: number, failed: number): void => {
      src.stats.sessionsTotal += n - failed;
      src.stats.failures += failed;
    };
    tries(4, 4);
    await m.sample(); // bad: the uplink is dead
    await m.sample(); // quiet: the user waits; says nothing of connects
    tries(3, 3);
    await m.sample();
    await m.sample(); // quiet again
    expect(m.consecutiveBad).toBe(2);
    expect(m.failing).toBeNull();
    tries(5, 5);
    await m.sample();
    expect(asked).toEqual(['3 bad health windows (5/5 connects failed)']);
    expect(m.failing).toEqual({ reason: '3 bad health windows (5/5 connects failed)' });
    // Still failing: asked again at the next bad window (a held switch is not forgotten).
    tries(3, 3);
    await m.sample();
    expect(asked).toHaveLength(2);
    // Connects that work clear it.
    tries(4, 0);
    src.stats.bytesDown += 5_000;
    await m.sample();
    expect(m.consecutiveBad).toBe(0);
    expect(m.failing).toBeNull();
    m.stop();
  });

  it('a resolver that stays silent makes every window bad, used or not', async () => {
    const { asked, m, src } = watched();
    src.dns = null;
    for (let i = 0; i < 3; i++) await m.sample();
    expect(asked).toEqual(['3 bad health windows (dns failed)']);
    // A new egress (a switch) starts the count over.
    m.watch(fakeSource());
    expect(m.consecutiveBad).toBe(0);
    m.stop();
  });
});

describe('HealthMonitor: every connect failing, to many places, is urgent (#60)', () => {
  /** A source that also counts distinct destinations, as the tunnel egresses do. */
  function counting() {
    const asked: Array<{ reason: string; urgent: boolean }> = [];
    const m = new HealthMonitor(
      healthOptions({ intervalMs: 60_000 }),
      { onUnhealthy: (_s, reason, o) => asked.push({ reason, urgent: o?.urgent ?? false }) },
      silentLogger(),
    );
    let hosts = { ok: 0, failed: 0, failedNames: 0 };
    const src = Object.assign(fakeSource(), { takeConnectHosts: () => ({ ...hosts }) });
    m.watch(src);
    const window = async (ok: number, failed: number, places: { ok: number; failed: number; failedNames?: number }) => {
      src.stats.sessionsTotal += ok;
      src.stats.failures += failed;
      hosts = { failedNames: 0, ...places };
      await m.sample();
    };
    return { asked, m, window };
  }

  it('asks at the first window in which every connect failed to three or more places and none got through', async () => {
    const { asked, m, window } = counting();
    await window(0, 5, { ok: 0, failed: 4 });
    expect(asked).toEqual([
      { reason: 'a health window in which 5/5 connects failed, every connect failed, to 4 places', urgent: true },
    ]);
    m.stop();
  });

  it('one site that is down (a user retrying it), or failures beside a connect that worked, are not urgent', async () => {
    const { asked, m, window } = counting();
    await window(0, 6, { ok: 0, failed: 1 }); // one dead site, tried six times
    await window(1, 5, { ok: 1, failed: 4 }); // something got through
    expect(asked).toEqual([]);
    m.stop();
  });

  it('names the node’s resolver failed for users count as names failing, though the probe’s own name was answered (a cache)', () => {
    const delta = { ...quiet, connects: 4, failures: 4 };
    const w = scoreWindow(
      { link: 'up', dnsMs: 20, sessionsActive: 0, delta, hosts: { ok: 0, failed: 4, failedNames: 4 } },
      opts,
    );
    expect(w).toMatchObject({ bad: true, urgent: true, symptoms: ['dns', 'connects'] });
    expect(w.reasons).toContain('names failed for 4 places');
    // One name that failed (a typo's server): not the resolver.
    const one = scoreWindow(
      {
        link: 'up',
        dnsMs: 20,
        sessionsActive: 0,
        delta: { ...quiet, connects: 1, failures: 1 },
        hosts: { ok: 3, failed: 1, failedNames: 1 },
      },
      opts,
    );
    expect(one.symptoms).not.toContain('dns');
  });

  it('scoreWindow says urgent only with the places counted, all connects failed and none reached', () => {
    const delta = { ...quiet, connects: 4, failures: 4 };
    const at = (hosts?: { ok: number; failed: number; failedNames?: number }) =>
      scoreWindow(
        { link: 'up', dnsMs: 20, sessionsActive: 0, delta, ...(hosts ? { hosts: { failedNames: 0, ...hosts } } : {}) },
        opts,
      ).urgent;
    expect(at({ ok: 0, failed: 3 })).toBe(true);
    expect(at({ ok: 0, failed: 2 })).toBe(false);
    expect(at({ ok: 1, failed: 3 })).toBe(false);
    expect(at(undefined)).toBe(false);
  });
});

describe('SwitchPolicy (anti-flap)', () => {
  it('keeps a minimum interval between automatic switches', () => {
    const p = new SwitchPolicy(healthOptions());
    expect(p.mayAutoSwitch(1_000_000).ok).toBe(true);
    p.recordSwitch(1_000_000);
    expect(p.mayAutoSwitch(1_030_000)).toMatchObject({ ok: false });
    expect(p.mayAutoSwitch(1_060_000).ok).toBe(true);
  });

  it('wants a candidate 20 % better', () => {
    const p = new SwitchPolicy(healthOptions());
    expect(p.isClearlyBetter(119, 100)).toBe(false);
    expect(p.isClearlyBetter(121, 100)).toBe(true);
    expect(p.isClearlyBetter(-5, -10)).toBe(true);
  });

  it('backs off 30 s doubling to 480 s after failed switches, and a switch resets it', () => {
    const p = new SwitchPolicy(healthOptions());
    expect([1, 2, 3, 4, 5, 6].map(() => p.recordFailure(0))).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 480_000,
    ]);
    expect(p.mayAutoSwitch(100_000).ok).toBe(false);
    p.recordSwitch(0);
    expect(p.recordFailure(0)).toBe(30_000);
  });
});
