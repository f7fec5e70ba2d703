import { createSocket } from 'node:dgram';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import {
  backoffMs,
  computePriors,
  probeNode,
  scoreNode,
  Selector,
  selectorOptions,
  urlTest,
  withFailure,
  withSuccess,
} from '../../core/selector/index.js';
import { Store } from '../../core/store/index.js';
import type { VpnGateNode } from '../../core/vpngate/index.js';
import { connect } from 'node:net';

const log = silentLogger();

function node(id: string, over: Partial<VpnGateNode> = {}): VpnGateNode {
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
    ...over,
  };
}

describe('priors and score', () => {
  const opts = selectorOptions();

  it('is deterministic for given inputs and keeps every term', () => {
    const nodes = [node('a', { score: 3_000_000, speedBps: 100e6 }), node('b', { score: 10_000, numVpnSessions: 200 })];
    const p1 = computePriors(nodes, opts);
    const p2 = computePriors(nodes, opts);
    expect(p1).toEqual(p2);
    expect(p1.get('a')!.prior).toBeGreaterThan(p1.get('b')!.prior);
    const h = new Store({ path: ':memory:', logger: log }).history('a');
    const s = scoreNode(p1.get('a')!, 20, h, opts);
    expect(s).toEqual(scoreNode(p1.get('a')!, 20, h, opts));
    expect(s.total).toBeCloseTo(s.latency + s.prior + s.history - s.recentFailures, 9);
    expect(s.latency).toBe(1000 / 20);
  });

  it('leaves denied countries out and penalises others when an allow list is set, and the other protocol', () => {
    const nodes = [node('jp'), node('kr', { countryShort: 'KR' }), node('us', { countryShort: 'US', proto: 'udp' })];
    const p = computePriors(nodes, selectorOptions({ countryDeny: ['KR'], countryAllow: ['JP'], preferProto: 'tcp' }));
    expect(p.has('kr')).toBe(false);
    expect(p.get('us')!.countryPenalty).toBe(1);
    expect(p.get('us')!.protocolPenalty).toBe(0.1);
    expect(p.get('jp')!.countryPenalty + p.get('jp')!.protocolPenalty).toBe(0);
  });

  it('backs a failing node off exponentially up to the cap, and a success resets it', () => {
    expect([1, 2, 3, 10, 30].map((n) => backoffMs(n, 60_000, 8 * 3600_000))).toEqual([
      60_000,
      120_000,
      240_000,
      8 * 3600_000,
      8 * 3600_000,
    ]);
    let h = new Store({ path: ':memory:', logger: log }).history('x');
    h = withFailure(withFailure(h, 1000, 60_000, 8 * 3600_000), 2000, 60_000, 8 * 3600_000);
    expect(h).toMatchObject({ consecutiveFailures: 2, failures: 2, backoffUntil: 2000 + 120_000 });
    h = withSuccess(h, 3000, { connectMs: 50 });
    expect(h).toMatchObject({ consecutiveFailures: 0, backoffUntil: null, successes: 1, avgConnectMs: 50 });
  });
});

describe('probes against real sockets', () => {
  it('times TCP handshakes to a listening port and reports a closed one as unreachable', async () => {
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const open = (server.address() as AddressInfo).port;
    const up = await probeNode('tcp', '127.0.0.1', open, { samples: 3, timeoutMs: 1000 });
    expect(up.samples.every((s) => s !== null)).toBe(true);
    expect(up.rttMs).toBeGreaterThan(0);
    server.close();
    const down = await probeNode('tcp', '127.0.0.1', open, { samples: 2, timeoutMs: 1000 });
    expect(down.rttMs).toBeNull();
  });

  it('probes UDP nodes with an OpenVPN hard reset and times the server reset', async () => {
    const seen: Buffer[] = [];
    const srv = createSocket('udp4');
    srv.on('message', (msg, rinfo) => {
      seen.push(msg);
      srv.send(Buffer.concat([Buffer.from([8 << 3]), Buffer.alloc(13)]), rinfo.port, rinfo.address);
    });
    await new Promise<void>((r) => srv.bind(0, '127.0.0.1', () => r()));
    const r = await probeNode('udp', '127.0.0.1', srv.address().port, { samples: 2, timeoutMs: 1000 });
    expect(r.rttMs).not.toBeNull();
    expect(seen[0]!.length).toBe(14);
    expect(seen[0]![0]! >> 3).toBe(7); // P_CONTROL_HARD_RESET_CLIENT_V2
    expect(seen[0]!.subarray(1, 9).equals(seen[1]!.subarray(1, 9))).toBe(false); // a fresh session per try
    srv.close();
  });
});

describe('Selector', () => {
  it('ranks probed nodes, backs off the unreachable, skips nodes in backoff, and persists history', async () => {
    const store = new Store({ path: ':memory:', logger: log });
    const rtts: Record<string, number | null> = { fast: 5, slow: 200, dead: null };
    const selector = new Selector(selectorOptions(), store, log, async (n) => ({
      rttMs: rtts[n.id]!,
      samples: [rtts[n.id]!],
    }));
    const nodes = [node('slow'), node('fast'), node('dead')];
    const r1 = await selector.rank(nodes);
    expect(r1.ranked.map((x) => x.node.id)).toEqual(['fast', 'slow']);
    expect(r1.excluded).toContainEqual({ nodeId: 'dead', reason: 'unreachable' });
    expect(store.history('dead').consecutiveFailures).toBe(1);
    const r2 = await selector.rank(nodes);
    expect(r2.excluded).toContainEqual({ nodeId: 'dead', reason: 'backoff' });
    expect(store.latency('fast', 0)).toHaveLength(2);
    store.close();
  });

  it('reads history once per ranking, not twice per node on the main thread (#32)', async () => {
    const store = new Store({ path: ':memory:', logger: log });
    const reads = { one: 0, all: 0 };
    const counted = {
      history: (id: string) => (reads.one++, store.history(id)),
      allHistory: () => (reads.all++, store.allHistory()),
      saveHistory: (h: Parameters<Store['saveHistory']>[0]) => store.saveHistory(h),
      addLatency: (l: Parameters<Store['addLatency']>[0]) => store.addLatency(l),
    };
    const selector = new Selector(selectorOptions(), counted, log, async (n) =>
      n.id.startsWith('dead') ? { rttMs: null, samples: [] } : { rttMs: 10, samples: [10] },
    );
    const nodes = Array.from({ length: 40 }, (_, i) => node(i % 4 === 0 ? `dead-${i}` : `n-${i}`));
    await selector.rank(nodes);
    expect(reads).toEqual({ one: 0, all: 1 });
    store.close();
  });

  it('shares one ranking between concurrent callers (single flight)', async () => {
    const store = new Store({ path: ':memory:', logger: log });
    let probes = 0;
    const selector = new Selector(selectorOptions(), store, log, async () => {
      probes++;
      await new Promise((r) => setTimeout(r, 20));
      return { rttMs: 10, samples: [10] };
    });
    const list = [node('x')];
    const [a, b] = await Promise.all([selector.rank(list), selector.rank(list)]);
    expect(a).toBe(b);
    expect(probes).toBe(1);
    store.close();
  });

  it('ranks a newer list that arrives during a ranking right after it, instead of dropping it', async () => {
    const store = new Store({ path: ':memory:', logger: log });
    const selector = new Selector(selectorOptions(), store, log, async () => {
      await new Promise((r) => setTimeout(r, 20));
      return { rttMs: 10, samples: [10] };
    });
    const first = selector.rank([]);
    const newer = selector.rank([node('a'), node('b')]);
    const newest = selector.rank([node('c')]);
    expect((await first).ranked).toHaveLength(0);
    expect(await newer).toBe(await newest);
    expect((await newest).ranked.map((r) => r.node.id)).toEqual(['c']);
    expect(selector.last!.ranked.map((r) => r.node.id)).toEqual(['c']);
    store.close();
  });

  it('gives a node whose probe failed one more sample before backing it off', async () => {
    const store = new Store({ path: ':memory:', logger: log });
    const calls: number[] = [];
    const selector = new Selector(selectorOptions(), store, log, async (_n, o) => {
      calls.push(o.samples);
      return calls.length === 1 ? { rttMs: null, samples: [null, null, null] } : { rttMs: 42, samples: [42] };
    });
    const r = await selector.rank([node('flaky')]);
    expect(calls).toEqual([3, 1]);
    expect(r.ranked.map((x) => x.terms.rttMs)).toEqual([42]);
    expect(store.history('flaky').consecutiveFailures).toBe(0);
    store.close();
  });
});

describe('URL test', () => {
  it('times a GET of a 204 endpoint through the given dialer and fails on other statuses', async () => {
    const http = await import('node:http');
    const server = http.createServer((req, res) => {
      res.writeHead(req.url === '/generate_204' ? 204 : 500);
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const dial = {
      via: 'tunnel' as const,
      dial: (host: string, p: number) =>
        new Promise<import('node:net').Socket>((resolve) => {
          const s = connect({ host, port: p }, () => resolve(s));
        }),
    };
    expect(await urlTest(dial, `http://127.0.0.1:${port}/generate_204`)).toBeGreaterThan(0);
    await expect(urlTest(dial, `http://127.0.0.1:${port}/other`)).rejects.toThrow(/status 500/);
    server.close();
  });
});
