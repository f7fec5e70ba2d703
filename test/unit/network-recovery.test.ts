import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isOnline, Listeners, NetworkWatch, silentLogger, type NetworkSnapshot } from '../../core/common/index.js';
import {
  PoolRecovery,
  recoveryOptionsSchema,
  type ControllerEvent,
  type PoolRecoveryDeps,
} from '../../core/groups/index.js';
import { Selector, selectorOptions, type Ranking } from '../../core/selector/index.js';
import { Store } from '../../core/store/index.js';
import type { VpnGateNode } from '../../core/vpngate/index.js';

const log = silentLogger();

function node(id: string): VpnGateNode {
  return {
    id,
    ip: '127.0.0.1',
    port: 1,
    proto: 'tcp',
    countryLong: 'Japan',
    countryShort: 'JP',
    score: 100_000,
    pingMs: 10,
    speedBps: 10_000_000,
    numVpnSessions: 10,
    uptimeMs: 86_400_000,
    totalUsers: 1,
    totalTrafficBytes: 1,
    operator: '',
    profile: '',
    source: 'list',
  };
}

describe('NetworkWatch', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('reports a new default route and a new interface address, not an unchanged network', () => {
    let snap: NetworkSnapshot = { addresses: [], defaultRoute: false };
    const watch = new NetworkWatch({ intervalMs: 1000, read: () => snap, now: () => Date.now(), logger: log });
    const seen: string[] = [];
    watch.onChange((c) => seen.push(`${c.reason}:${c.online}`));
    watch.start();
    expect(watch.online).toBe(false);
    vi.advanceTimersByTime(3000);
    expect(seen).toEqual([]);
    snap = { addresses: ['wlan0 192.0.2.7'], defaultRoute: false };
    vi.advanceTimersByTime(1000);
    snap = { addresses: ['wlan0 192.0.2.7'], defaultRoute: true };
    vi.advanceTimersByTime(1000);
    expect(seen).toEqual(['interface:false', 'route:true']);
    expect(watch.online).toBe(true);
    watch.close();
  });

  it('reports a resume from sleep when a tick comes far later than due', () => {
    let now = 0;
    const watch = new NetworkWatch({
      intervalMs: 1000,
      resumeGapMs: 5000,
      read: () => ({ addresses: ['eth0 192.0.2.1'], defaultRoute: true }),
      now: () => now,
      logger: log,
    });
    const seen: string[] = [];
    watch.onChange((c) => seen.push(c.reason));
    watch.start();
    now = 1000;
    vi.advanceTimersByTime(1000);
    now = 1000 + 60_000; // the machine slept for a minute between two ticks
    vi.advanceTimersByTime(1000);
    expect(seen).toEqual(['resume']);
    watch.close();
  });

  it('counts a platform without route information as online when it has an address', () => {
    expect(isOnline({ addresses: ['en0 192.0.2.3'], defaultRoute: null })).toBe(true);
    expect(isOnline({ addresses: [], defaultRoute: null })).toBe(false);
    expect(isOnline({ addresses: ['en0 192.0.2.3'], defaultRoute: false })).toBe(false);
  });
});

/** A pool and controller that do what the app's do, with knobs for the test. */
function world(opts: { listOk: () => boolean; probeOk: () => boolean; tunnelOk: () => boolean }) {
  const nodesChanged = new Listeners<void>(log, 'nodes');
  const ranked = new Listeners<void>(log, 'ranked');
  const events = new Listeners<ControllerEvent>(log, 'controller');
  const calls = { refresh: 0, rank: 0, retry: 0 };
  let list: VpnGateNode[] = [];
  let last: Ranking | null = null;
  let active: object | null = null;
  let switching: number | null = null;
  const record = (outcome: 'switched' | 'no-candidate' | 'failed') => ({
    id: 1,
    at: 0,
    kind: 'urgent' as const,
    reason: 'x',
    from: null,
    to: null,
    outcome,
    durationMs: 0,
  });
  const deps: PoolRecoveryDeps = {
    nodes: {
      get nodes() {
        return list;
      },
      fetchable: true,
      refresh: async () => {
        calls.refresh++;
        if (opts.listOk()) {
          list = [node('a'), node('b')];
          nodesChanged.emit();
        }
      },
      onChange: (fn) => nodesChanged.add(fn),
    },
    selector: {
      get last() {
        return last;
      },
      onRanked: (fn) => ranked.add(fn),
    },
    rank: async () => {
      calls.rank++;
      last = { ranked: opts.probeOk() ? list.map((n) => ({ node: n }) as never) : [], excluded: [], at: Date.now() };
      ranked.emit();
      return last;
    },
    controller: {
      get active() {
        return active;
      },
      get switching() {
        return switching;
      },
      retryNow: () => {
        calls.retry++;
        switching = 1;
        queueMicrotask(() => {
          switching = null;
          const ok = opts.tunnelOk() && (last?.ranked.length ?? 0) > 0;
          if (ok) active = {};
          events.emit({ type: 'switch', record: record(ok ? 'switched' : 'failed') });
        });
        return true;
      },
      onEvent: (fn) => events.add(fn),
    },
    options: recoveryOptionsSchema.parse({ initialMs: 1000, maxMs: 8000 }),
    logger: log,
  };
  const firstSwitchFailed = () => events.emit({ type: 'switch', record: record('no-candidate') });
  return { deps, calls, firstSwitchFailed, isActive: () => active !== null };
}

describe('PoolRecovery', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('retries the list fetch with doubling back-off, capped, while every endpoint fails', async () => {
    const w = world({ listOk: () => false, probeOk: () => true, tunnelOk: () => true });
    const r = new PoolRecovery(w.deps);
    w.firstSwitchFailed();
    expect(r.status).toMatchObject({ state: 'waiting', reason: 'no-node-list', attempts: 0 });
    // Retries at 1, 3 (1+2), 7 (+4), 15 (+8), 23 (+8 cap) s.
    const at: number[] = [];
    for (let t = 0; t < 24; t++) {
      const before = w.calls.refresh;
      await vi.advanceTimersByTimeAsync(1000);
      if (w.calls.refresh > before) at.push(t + 1);
    }
    expect(at).toEqual([1, 3, 7, 15, 23]);
    expect(r.status).toMatchObject({ state: 'waiting', attempts: 5 });
    r.close();
  });

  it('gets a tunnel up once the list endpoint answers, and says it is no longer waiting', async () => {
    let online = false;
    const w = world({ listOk: () => online, probeOk: () => online, tunnelOk: () => online });
    const r = new PoolRecovery(w.deps);
    w.firstSwitchFailed();
    await vi.advanceTimersByTimeAsync(3000); // two failed retries
    online = true;
    await vi.advanceTimersByTimeAsync(4000);
    expect(w.isActive()).toBe(true);
    expect(r.status).toEqual({ state: 'ok', reason: null, since: null, attempts: 0, nextAttemptAt: null });
    expect(w.calls).toMatchObject({ refresh: 3, rank: 1, retry: 1 });
    r.close();
  });

  it('retries at once when the network changes instead of waiting out the back-off', async () => {
    let online = false;
    const w = world({ listOk: () => online, probeOk: () => online, tunnelOk: () => online });
    const r = new PoolRecovery(w.deps);
    w.firstSwitchFailed();
    await vi.advanceTimersByTimeAsync(15_000); // back-off is now at its 8 s cap
    expect(r.status.nextAttemptAt! - Date.now()).toBeGreaterThan(1000);
    online = true;
    r.networkChanged('route');
    await vi.advanceTimersByTimeAsync(0);
    expect(w.isActive()).toBe(true);
    expect(r.status.state).toBe('ok');
    r.close();
  });

  it('re-probes a cached list whose nodes all failed while offline, and names that reason', async () => {
    let online = false;
    const w = world({ listOk: () => true, probeOk: () => online, tunnelOk: () => true });
    await w.deps.nodes.refresh(); // the cache: nodes, but none answers yet
    await w.deps.rank();
    const r = new PoolRecovery(w.deps);
    w.firstSwitchFailed();
    expect(r.status).toMatchObject({ state: 'waiting', reason: 'no-reachable-node' });
    await vi.advanceTimersByTimeAsync(1000);
    expect(w.calls.refresh).toBe(1); // a list is there: not fetched again, only probed
    expect(w.calls.rank).toBe(2);
    online = true;
    await vi.advanceTimersByTimeAsync(2000);
    expect(w.isActive()).toBe(true);
    r.close();
  });

  it('does not call a normal start "waiting" before the first switch has finished', () => {
    const w = world({ listOk: () => true, probeOk: () => true, tunnelOk: () => true });
    const r = new PoolRecovery(w.deps);
    r.check();
    expect(r.status.state).toBe('ok');
    r.close();
  });

  it('rejects a maximum below the initial delay', () => {
    expect(() => recoveryOptionsSchema.parse({ initialMs: 5000, maxMs: 1000 })).toThrow(/maxMs/);
  });
});

describe('Selector when every probe fails', () => {
  it('backs off nobody (the network is the likelier cause), but still backs off a lone dead node among live ones', async () => {
    const store = new Store({ path: ':memory:', logger: log });
    let up = false;
    const selector = new Selector(selectorOptions(), store, log, async (n) => {
      const rtt = up && n.id !== 'dead' ? 10 : null;
      return { rttMs: rtt, samples: [rtt] };
    });
    const nodes = [node('a'), node('b'), node('dead')];
    const offline = await selector.rank(nodes);
    expect(offline.ranked).toHaveLength(0);
    expect(nodes.map((n) => store.history(n.id).consecutiveFailures)).toEqual([0, 0, 0]);
    up = true;
    const online = await selector.rank(nodes);
    expect(online.ranked.map((r) => r.node.id).sort()).toEqual(['a', 'b']);
    expect(store.history('dead').consecutiveFailures).toBe(1);
    store.close();
  });
});
