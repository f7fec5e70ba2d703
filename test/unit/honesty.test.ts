/**
 * The honesty checks' judgement (#43), over real sockets on loopback: a stand-in tunnel maps the
 * names and ports a check asks for (a resolver on :53, HTTP on :80, TLS and DoH on :443) to local
 * servers the test controls. What is pinned here is when something counts against a node: only a
 * positive mismatch, and only after a second opinion where one is needed; a node that cannot
 * reach the targets is `unchecked`, never flagged. The rig test (test/e2e/honesty-rig) runs the
 * same checks through real tunnels to dishonest nodes; the monitor's schedule is pinned below.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer as createHttp, type Server as HttpServer } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import * as dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErrorCodes, GatehopError, silentLogger } from '../../core/common/index.js';
import type { Egress, EgressTcpConnection, EgressUdpSocket, UdpDatagram } from '../../core/contracts/index.js';
import {
  checkNodeHonesty,
  CLEAN_CHECKS_TO_CLEAR,
  browserRequest,
  honestyOptions,
  HonestyMonitor,
  type HonestyRecord,
  type HonestyReport,
} from '../../core/honesty/index.js';
import { installPublicRoot, testRootCa } from '../helpers/pki.js';

const RESOLVER = '10.66.254.254';
const DOH = { address: '203.0.113.53', serverName: 'doh.test', port: 443, path: '/dns-query' };

/** What the local resolver and DoH server answer, per name (absent: NXDOMAIN), changed by each test. */
let resolverSays: Record<string, string[]> = {};
let dohSays: Record<string, string[]> | null = {};
let httpBody = 'fixed body\n';
let directBody = 'fixed body\n';

/** A "tunnel" whose every destination is a local server, by name:port. */
class MappedEgress implements Egress {
  readonly id = 'mapped';
  readonly state = 'ready' as const;
  readonly stats = { bytesUp: 0, bytesDown: 0, sessionsActive: 0, sessionsTotal: 0, failures: 0 };
  constructor(
    private readonly tcp: Record<string, number>,
    private readonly udpPort: number,
  ) {}
  resolve(host: string): Promise<string[]> {
    return Promise.resolve([host]);
  }
  async connectTcp(host: string, port: number): Promise<EgressTcpConnection> {
    const to = this.tcp[`${host}:${port}`];
    if (!to) throw new GatehopError(ErrorCodes.EGRESS_HOST_UNREACHABLE, `${host}:${port} unreachable`);
    const stream = connect(to, '127.0.0.1');
    await once(stream, 'connect');
    return { stream, localAddress: '127.0.0.1', localPort: 0, remoteAddress: host, remotePort: port };
  }
  async bindUdp(): Promise<EgressUdpSocket> {
    const u: UdpSocket = createSocket('udp4');
    await new Promise<void>((r) => u.bind(0, '127.0.0.1', () => r()));
    const udpPort = this.udpPort;
    return {
      send: (data, address, port) => {
        if (address === RESOLVER && port === 53) u.send(data, udpPort, '127.0.0.1');
      },
      onMessage: (h: (d: UdpDatagram) => void) => u.on('message', (data) => h({ data, address: RESOLVER, port: 53 })),
      onClose: (h) => u.once('close', () => h()),
      close: () => u.close(),
    };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function dnsAnswer(q: dnsPacket.Packet, table: Record<string, string[]>): Buffer {
  const name = q.questions![0]!.name;
  const addresses = table[name];
  return dnsPacket.encode({
    type: 'response',
    id: q.id,
    flags: addresses ? 0 : 3,
    questions: q.questions,
    answers: (addresses ?? []).map((data) => ({ type: 'A', name, ttl: 60, data })),
  });
}

const PAGE = '<!doctype html><title>A page</title><p>Published bytes.</p>\n';
const browserHeads: string[] = [];

describe('what counts against a node (#43)', () => {
  const root = testRootCa('Unit Test Public Root');
  const tlsCert = root.issue(['tls.test', 'doh.test']);
  let restore: () => void = () => {};
  const closers: Array<() => void> = [];
  let tunnel: MappedEgress;
  let direct: MappedEgress;
  let unreachable: MappedEgress;
  let secondNode: MappedEgress;
  let countingNode: MappedEgress;

  beforeAll(async () => {
    restore = installPublicRoot(root);
    const dns = createSocket('udp4');
    dns.on('message', (msg, rinfo) =>
      dns.send(dnsAnswer(dnsPacket.decode(msg), resolverSays), rinfo.port, rinfo.address),
    );
    await new Promise<void>((r) => dns.bind(0, '127.0.0.1', () => r()));
    const listen = async (s: HttpServer): Promise<number> => {
      s.listen(0, '127.0.0.1');
      await once(s, 'listening');
      closers.push(() => s.close());
      return (s.address() as AddressInfo).port;
    };
    const http = await listen(createHttp((_q, res) => res.end(httpBody)));
    const directHttp = await listen(createHttp((_q, res) => res.end(directBody)));
    const https = await listen(
      createHttps({ key: tlsCert.key, cert: tlsCert.chain }, (req, res) => {
        if (req.url !== '/dns-query' || !dohSays) return void res.writeHead(404).end();
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = dnsAnswer(dnsPacket.decode(Buffer.concat(chunks)), dohSays!);
          res.writeHead(200, { 'content-type': 'application/dns-message', 'content-length': body.length }).end(body);
        });
      }),
    );
    // A server as real ones answer browsers: keep-alive, chunked and gzip when asked for it. What
    // it serves depends on how it is asked, as a careful injector would decide: the page with a
    // script for a browser, untouched for anything else (the checks' old HTTP/1.0 fingerprint).
    const browser = await listen(
      createHttp((req, res) => {
        browserHeads.push(req.rawHeaders.join('|'));
        const asBrowser = req.httpVersion === '1.1' && /Chrome\//.test(req.headers['user-agent'] ?? '');
        const page = asBrowser ? `${PAGE}<script src="http://x.test/a.js"></script>\n` : PAGE;
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        res.write(gzipSync(page));
        res.end();
      }),
    );
    closers.push(() => dns.close());
    const udp = (dns.address() as AddressInfo).port;
    tunnel = new MappedEgress(
      {
        'canary.test:80': http,
        'page.test:80': http,
        'browser.test:80': browser,
        'tls.test:443': https,
        [`${DOH.address}:443`]: https,
      },
      udp,
    );
    direct = new MappedEgress({ 'page.test:80': directHttp }, udp);
    // Another node's view of page.test: the direct copy's body (stable), or a page that counts.
    secondNode = new MappedEgress({ 'page.test:80': directHttp }, udp);
    let hits = 0;
    const counting = await listen(createHttp((_q, res) => res.end(`fixed body\nvisit ${++hits}\n`)));
    countingNode = new MappedEgress({ 'page.test:80': counting }, udp);
    unreachable = new MappedEgress({}, 0);
  });
  afterAll(() => {
    restore();
    for (const c of closers) c();
  });

  const options = (over: Parameters<typeof honestyOptions>[0] = {}) =>
    honestyOptions({
      dns: { canaries: [{ name: 'canary.test', addresses: ['192.0.2.10'] }], nxdomainZone: 'nx.test' },
      http: [{ url: 'http://page.test/', status: 200, body: 'fixed body' }],
      tls: [{ host: 'tls.test', port: 443 }],
      timeoutMs: 5_000,
      ...over,
    });
  const run = (t: Egress, over: Parameters<typeof honestyOptions>[0] = {}, d: Egress | null = direct) =>
    checkNodeHonesty(t, [RESOLVER], options(over), { direct: d, doh: [DOH] });
  const reset = (): void => {
    resolverSays = { 'canary.test': ['192.0.2.10'] };
    dohSays = { 'canary.test': ['192.0.2.10'] };
    httpBody = directBody = 'fixed body\n';
  };

  it('honest when every kind of check passed (trailing whitespace is no change)', async () => {
    reset();
    const r = await run(tunnel);
    expect(r).toMatchObject({ verdict: 'honest', evidence: [], inconclusive: [] });
  });

  it('a canary answered outside its published set counts only if DoH through the tunnel does not say the same', async () => {
    reset();
    resolverSays['canary.test'] = ['192.0.2.99'];
    dohSays!['canary.test'] = ['192.0.2.99'];
    const changed = await run(tunnel);
    expect(changed.verdict).toBe('honest');
    expect(changed.outcomes.find((o) => o.check === 'dns')!.note).toMatch(/published set has changed/);
    dohSays!['canary.test'] = ['192.0.2.10'];
    expect((await run(tunnel)).verdict).toBe('dns-tampering');
    // With no DoH to ask, a published answer is held to.
    dohSays = null;
    expect((await run(tunnel)).verdict).toBe('dns-tampering');
  });

  it('a private address for a public name is tampering with no second opinion', async () => {
    reset();
    const publicCanary = { dns: { canaries: [{ name: 'canary.test', addresses: ['8.8.8.8'] }], nxdomainZone: null } };
    resolverSays['canary.test'] = ['10.0.0.1'];
    dohSays = null;
    const r = await run(tunnel, publicCanary);
    expect(r.verdict).toBe('dns-tampering');
    expect(r.evidence[0]!.got).toBe('10.0.0.1 (a private address)');
  });

  it('an answer for a name that cannot exist is tampering only when DoH says NXDOMAIN; without DoH it is inconclusive', async () => {
    reset();
    // The resolver answers every name under nx.test (a rewritten NXDOMAIN).
    resolverSays = new Proxy(resolverSays, {
      get: (o, k: string) => (k.endsWith('.nx.test') ? ['192.0.2.66'] : o[k]),
    });
    expect((await run(tunnel)).verdict).toBe('dns-tampering');
    // The zone has a wildcard after all: DoH answers too.
    dohSays = new Proxy({ ...dohSays }, { get: (o, k: string) => (k.endsWith('.nx.test') ? ['192.0.2.66'] : o[k]) });
    const wildcard = await run(tunnel);
    expect(wildcard.outcomes.find((o) => o.check === 'nxdomain')).toMatchObject({ result: 'pass' });
    dohSays = null;
    const unknown = await run(tunnel, { dns: { canaries: [], nxdomainZone: 'nx.test' } });
    expect(unknown.outcomes.find((o) => o.check === 'nxdomain')).toMatchObject({ result: 'inconclusive' });
    expect(unknown.verdict).toBe('unchecked');
  });

  it('a changed page is tampering, unless the same URL fetched directly is changed the same way', async () => {
    reset();
    httpBody = 'fixed body\n<script src="http://x.test/a.js"></script>\n';
    const r = await run(tunnel);
    expect(r.verdict).toBe('http-tampering');
    expect(r.evidence[0]).toMatchObject({ check: 'http', target: 'http://page.test/' });
    directBody = httpBody;
    const stale = await run(tunnel);
    expect(stale.verdict).toBe('unchecked');
    expect(stale.inconclusive.join()).toMatch(/the reference is out of date/);
  });

  it('a URL named without an answer is compared through a second node, never the user’s own network alone (#59); a page not the same twice proves nothing', async () => {
    reset();
    const named = { http: [{ url: 'http://page.test/' }] };
    let closed = 0;
    const via = (e: Egress) => async () => ({ egress: e, close: async () => void closed++ });
    const check = (second?: () => Promise<{ egress: Egress; close(): Promise<void> } | null>) =>
      checkNodeHonesty(tunnel, [RESOLVER], options(named), { direct, doh: [DOH], ...(second ? { second } : {}) });
    expect((await check(via(secondNode))).verdict).toBe('honest');
    expect(closed).toBe(1);
    // The second node sees the page as it is; the node under check adds to it.
    httpBody = 'fixed body\n<script src="http://x.test/a.js"></script>\n';
    expect((await check(via(secondNode))).verdict).toBe('http-tampering');
    // No second node: nothing to compare with, whatever this machine's own network shows.
    expect((await check()).verdict).toBe('unchecked');
    expect((await check(async () => null)).verdict).toBe('unchecked');
    // A page that counts its visits differs through every node: inconclusive, not tampering.
    httpBody = 'fixed body\n';
    const r = await check(via(countingNode));
    expect(r.verdict).toBe('unchecked');
    expect(r.inconclusive.join()).toMatch(/not the same twice through another node/);
  });

  it('asks as a browser does (#59): HTTP/1.1, keep-alive, Chrome’s headers in its order; reads a chunked gzip answer on a connection left open', async () => {
    reset();
    browserHeads.length = 0;
    const r = await run(tunnel, { http: [{ url: 'http://browser.test/', status: 200, body: PAGE }] });
    // The server writes the page with a script only for a browser: the check is one.
    expect(r.verdict).toBe('http-tampering');
    expect(r.evidence[0]).toMatchObject({
      target: 'http://browser.test/',
      got: expect.stringMatching(/x\.test\/a\.js/),
    });
    expect(browserHeads[0]).toBe(
      [
        'Host|browser.test',
        'Connection|keep-alive',
        'Upgrade-Insecure-Requests|1',
        'User-Agent|Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36',
        'Accept|text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
        'Accept-Encoding|gzip, deflate',
        'Accept-Language|en-US,en;q=0.9',
      ].join('|'),
    );
    expect(browserRequest(new URL('http://browser.test/a?b=1'))).toMatch(
      /^GET \/a\?b=1 HTTP\/1\.1\r\nHost: browser\.test\r\n/,
    );
  });

  it('a node that reaches nothing is unchecked, with why, never flagged', async () => {
    reset();
    const r = await run(unreachable);
    expect(r.verdict).toBe('unchecked');
    expect(r.evidence).toEqual([]);
    expect(r.inconclusive.length).toBeGreaterThanOrEqual(3);
  });

  it('the byte budget ends a check inconclusively', async () => {
    reset();
    httpBody = `fixed body\n${'x'.repeat(64 * 1024)}`;
    const r = await run(tunnel, { maxBytes: 16 * 1024 });
    expect(r.verdict).toBe('unchecked');
    expect(r.inconclusive.join()).toMatch(/byte budget/);
  });
});

/** A verdict as the store keeps it, checked now. */
const recordOf = (nodeId: string, verdict: HonestyRecord['verdict']): HonestyRecord => ({
  nodeId,
  verdict,
  evidence: [],
  inconclusive: [],
  checkedAt: Date.now(),
  durationMs: 1,
  bytes: 1,
  accepted: false,
  cleanChecks: 0,
});

describe('when nodes are checked, and what is remembered (#43)', () => {
  const report = (verdict: HonestyReport['verdict']): HonestyReport => ({
    verdict,
    evidence: verdict === 'dns-tampering' ? [{ check: 'dns', target: 'x', expected: 'a', got: 'b' }] : [],
    inconclusive: [],
    outcomes: [],
    durationMs: 5,
    bytes: 100,
  });
  const setup = (
    answers: Record<string, HonestyReport['verdict']>,
    saved: HonestyRecord[] = [],
    open: (id: string) => Promise<void> = async () => {},
    inUseWithinMs = 0,
  ) => {
    const kept = new Map(saved.map((r) => [r.nodeId, r]));
    const checked: string[] = [];
    const options = honestyOptions({ recheckMs: 60_000, retryUncheckedMs: 60_000, sweepEveryMs: 0, inUseWithinMs });
    const m = new HonestyMonitor({
      options: () => options,
      doh: () => [],
      store: {
        honestyRecords: () => [...kept.values()],
        saveHonesty: (r) => void kept.set(r.nodeId, r),
        forgetHonesty: (ids) => ids.forEach((id) => kept.delete(id)),
      },
      direct: null,
      logger: silentLogger(),
      check: async (t) => {
        checked.push(t.id);
        return report(answers[t.id]!);
      },
      openForCheck: async (id) => {
        await open(id);
        return { egress: { id } as Egress, resolvers: [], close: async () => {} };
      },
      sweepCandidates: () => ['a', 'b', 'c'],
      busy: () => true,
      inUse: (id) => id === 'a',
    });
    return { m, kept, checked, tunnel: (id: string) => ({ egress: { id } as Egress, resolvers: [] }) };
  };

  it('a node in use is checked once, then not again until due; the verdict is kept', async () => {
    const { m, kept, checked, tunnel } = setup({ a: 'honest' });
    m.checkInUse('a', tunnel('a'));
    await new Promise((r) => setTimeout(r, 10));
    m.checkInUse('a', tunnel('a'));
    await new Promise((r) => setTimeout(r, 10));
    expect(checked).toEqual(['a']);
    expect(kept.get('a')).toMatchObject({ verdict: 'honest', bytes: 100 });
    expect(m.due('a')).toBe(false);
    expect(m.due('a', Date.now() + 61_000)).toBe(true);
  });

  it('a node that starts carrying sessions is checked at a random moment within inUseWithinMs, not at the switch (#59); not if its tunnel closed meanwhile', async () => {
    vi.useFakeTimers();
    try {
      const { m, checked, tunnel } = setup({ a: 'honest', c: 'honest' }, [], async () => {}, 60_000);
      m.checkInUse('a', tunnel('a'));
      m.checkInUse('a', tunnel('a'));
      expect(checked).toEqual([]);
      expect(m.waiting('a')).toBe(true);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(checked).toEqual(['a']);
      // A tunnel that closed before its moment: nothing is checked through it.
      m.checkInUse('c', { egress: { id: 'c', state: 'closed' } as unknown as Egress, resolvers: [] });
      await vi.advanceTimersByTimeAsync(60_000);
      expect(checked).toEqual(['a']);
      expect(m.waiting('c')).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('remembers verdicts across a restart (the store), forgets a node that left the pool', () => {
    const saved = recordOf('b', 'dns-tampering');
    const { m } = setup({}, [saved]);
    expect(m.flagged('b')).toBe('dns-tampering');
    expect(m.blocked('b')).toBe('dns-tampering');
    m.accept('b');
    expect(m.flagged('b')).toBe('dns-tampering');
    expect(m.blocked('b')).toBeNull();
    m.forget(['b']);
    expect(m.get('b')).toBeNull();
  });

  it('a node whose row names another CA is another identity (#59): its verdict and the user’s consent are forgotten, in the store too', async () => {
    const { m, kept, tunnel } = setup({ b: 'http-tampering', c: 'honest' });
    await m.checkNow('b', tunnel('b'));
    await m.checkNow('c', tunnel('c'));
    m.accept('b');
    m.rekeyed(['b', 'z']);
    expect(m.get('b')).toBeNull();
    expect(kept.has('b')).toBe(false);
    expect(m.due('b')).toBe(true);
    expect(m.get('c')).toMatchObject({ verdict: 'honest' });
  });

  it('a tampering verdict stands through clean checks until three come in a row (#59: one no longer clears it); a clean check the user asks for clears it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const answers: Record<string, HonestyReport['verdict']> = { b: 'http-tampering' };
      const { m, kept, tunnel } = setup(answers);
      // Checks of the node in use, each once it is due again (recheckMs is a minute here).
      const inUse = async (): Promise<void> => {
        vi.setSystemTime(Date.now() + 61_000);
        m.checkInUse('b', tunnel('b'));
        await new Promise((r) => setImmediate(r));
      };
      await inUse();
      expect(m.flagged('b')).toBe('http-tampering');
      answers.b = 'honest';
      await inUse();
      await inUse();
      expect(m.flagged('b')).toBe('http-tampering');
      expect(kept.get('b')).toMatchObject({ verdict: 'http-tampering', cleanChecks: 2 });
      // Tampering again in between: the count starts over.
      answers.b = 'http-tampering';
      await inUse();
      answers.b = 'honest';
      for (let i = 0; i < CLEAN_CHECKS_TO_CLEAR - 1; i++) await inUse();
      expect(m.flagged('b')).toBe('http-tampering');
      await inUse();
      expect(m.flagged('b')).toBeNull();
      expect(kept.get('b')).toMatchObject({ verdict: 'honest', cleanChecks: 0, evidence: [] });
      // Flagged again; "Check" on its row (the user's own call) clears it with one clean result.
      answers.b = 'http-tampering';
      await inUse();
      answers.b = 'honest';
      await m.checkNow('b', tunnel('b'));
      expect(m.flagged('b')).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a URL the user named without an answer is compared through the best-ranked other node that passed its checks, opened only for that (#59)', async () => {
    const opened: string[] = [];
    const honestC = recordOf('c', 'honest');
    let secondOf: string | null | undefined;
    const monitor = (http: Parameters<typeof honestyOptions>[0]) =>
      new HonestyMonitor({
        options: () => honestyOptions({ sweepEveryMs: 0, inUseWithinMs: 0, ...http }),
        doh: () => [],
        store: { honestyRecords: () => [honestC], saveHonesty: () => undefined, forgetHonesty: () => undefined },
        direct: null,
        logger: silentLogger(),
        check: async (_t, _r, _o, x) => {
          const s = await x.second?.();
          secondOf = s ? (s.egress as { id: string }).id : null;
          await s?.close();
          return { verdict: 'honest', evidence: [], inconclusive: [], outcomes: [], durationMs: 1, bytes: 1 };
        },
        openForCheck: async (id) => {
          opened.push(id);
          return { egress: { id } as Egress, resolvers: [], close: async () => {} };
        },
        sweepCandidates: () => ['a', 'b', 'c', 'd'],
      });
    const a = monitor({ http: [{ url: 'http://page.test/' }] });
    await a.checkNow('a', { egress: { id: 'a' } as Egress, resolvers: [] });
    expect(secondOf).toBe('c');
    expect(opened).toEqual(['c']);
    // Only published answers: no second node is asked for at all.
    secondOf = undefined;
    const b = monitor({});
    await b.checkNow('a', { egress: { id: 'a' } as Egress, resolvers: [] });
    expect(secondOf).toBeNull();
    expect(opened).toEqual(['c']);
  });

  it('consent is for what the user saw: the same finding keeps it, a new one asks again', async () => {
    const answers: Record<string, HonestyReport['verdict']> = { b: 'http-tampering' };
    const { m, tunnel } = setup(answers);
    await m.checkNow('b', tunnel('b'));
    m.accept('b');
    await m.checkNow('b', tunnel('b'));
    expect(m.blocked('b')).toBeNull();
    answers.b = 'tls-interception';
    await m.checkNow('b', tunnel('b'));
    expect(m.blocked('b')).toBe('tls-interception');
  });

  it('the background sweep takes the best-ranked node that is due and not in use, through a tunnel of its own', async () => {
    const { m, checked } = setup({ b: 'honest', c: 'honest' });
    expect((await m.sweepOnce())?.nodeId).toBe('b');
    expect((await m.sweepOnce())?.nodeId).toBe('c');
    expect(await m.sweepOnce()).toBeNull();
    expect(checked).toEqual(['b', 'c']);
  });

  it('a node the sweep cannot reach is left for a while, not tried again and again before the others', async () => {
    const opened: string[] = [];
    const { m, checked } = setup({ c: 'honest' }, [], async (id) => {
      opened.push(id);
      if (id === 'b') throw new Error('b does not answer');
    });
    expect(await m.sweepOnce()).toBeNull();
    expect((await m.sweepOnce())?.nodeId).toBe('c');
    expect(opened).toEqual(['b', 'c']);
    expect(checked).toEqual(['c']);
  });
});
