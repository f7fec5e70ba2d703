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
import * as dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes, GatehopError, silentLogger } from '../../core/common/index.js';
import type { Egress, EgressTcpConnection, EgressUdpSocket, UdpDatagram } from '../../core/egress/index.js';
import {
  checkNodeHonesty,
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

describe('what counts against a node (#43)', () => {
  const root = testRootCa('Unit Test Public Root');
  const tlsCert = root.issue(['tls.test', 'doh.test']);
  let restore: () => void = () => {};
  const closers: Array<() => void> = [];
  let tunnel: MappedEgress;
  let direct: MappedEgress;
  let unreachable: MappedEgress;

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
    closers.push(() => dns.close());
    const udp = (dns.address() as AddressInfo).port;
    tunnel = new MappedEgress(
      { 'canary.test:80': http, 'page.test:80': http, 'tls.test:443': https, [`${DOH.address}:443`]: https },
      udp,
    );
    direct = new MappedEgress({ 'page.test:80': directHttp }, udp);
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

  it('a URL named without an answer is compared with the direct copy; with no direct copy it says nothing', async () => {
    reset();
    const named = { http: [{ url: 'http://page.test/' }] };
    expect((await run(tunnel, named)).verdict).toBe('honest');
    directBody = 'another day, another body\n';
    expect((await run(tunnel, named)).verdict).toBe('http-tampering');
    expect((await run(tunnel, named, null)).verdict).toBe('unchecked');
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
  ) => {
    const kept = new Map(saved.map((r) => [r.nodeId, r]));
    const checked: string[] = [];
    const options = honestyOptions({ recheckMs: 60_000, retryUncheckedMs: 60_000, sweepEveryMs: 0 });
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

  it('remembers verdicts across a restart (the store), forgets a node that left the pool', () => {
    const saved: HonestyRecord = {
      nodeId: 'b',
      verdict: 'dns-tampering',
      evidence: [],
      inconclusive: [],
      checkedAt: Date.now(),
      durationMs: 1,
      bytes: 1,
      accepted: false,
    };
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
