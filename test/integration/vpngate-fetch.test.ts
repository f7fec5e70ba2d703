import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes, silentLogger } from '../../core/common/index.js';
import { refusedAddress } from '../../core/reach/index.js';
import { Store } from '../../core/store/index.js';
import {
  NodeList,
  parseVpnGateCsv,
  raceSources,
  type ListSource,
  type ListVia,
  type NodeListStore,
  type VpnGateNode,
} from '../../core/vpngate/index.js';
import { directDialer, type Dialer } from '../../core/reach/index.js';
import { directoryHtml, listSite, type ListSite } from '../helpers/list-site.js';
import { vpnGateCsv, vpnGateProfile } from '../helpers/vpngate-fixtures.js';
import { installPublicRoot, testRootCa } from '../helpers/pki.js';

const sites: ListSite[] = [];
const stores: Store[] = [];
const lists: NodeList[] = [];
afterEach(async () => {
  await Promise.all(lists.splice(0).map((l) => l.close()));
  for (const s of stores.splice(0)) s.close();
  await Promise.all(sites.splice(0).map((s) => s.close()));
});

async function site(...args: Parameters<typeof listSite>): Promise<ListSite> {
  const s = await listSite(...args);
  sites.push(s);
  return s;
}

const log = silentLogger();
/** A logger that keeps each line it is given, parsed, in `lines`. */
const recordingLogger = (lines: Array<Record<string, unknown>>) =>
  pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
const csvOf = (...ids: number[]): string =>
  vpnGateCsv(ids.map((i) => ({ host: `public-vpn-${i}`, ip: `203.0.113.${i}` })));
const good = csvOf(1, 2);
const api = (url: string): ListSource => ({ url, kind: 'api' });

function race(sources: ListSource[], over: Partial<Parameters<typeof raceSources>[0]> = {}) {
  return raceSources({
    sources,
    dialer: directDialer(),
    timeoutMs: 2_000,
    maxBytes: 8 << 20,
    staggerMs: 1_000,
    concurrency: 3,
    signal: new AbortController().signal,
    logger: log,
    ...over,
  });
}

function storeOf(s: Store): NodeListStore {
  return {
    loadPool: (since) => s.loadPool<VpnGateNode>(since),
    savePool: (nodes, at) => s.savePoolNodes(nodes, at),
    forgetNodes: (ids) => s.forgetNodes(ids),
    loadListMeta: () => {
      const m = s.loadListMeta();
      return m ? { ...m, via: m.via as ListVia } : null;
    },
    saveListMeta: (m) => s.saveListMeta(m),
    loadSources: () => s.listSources(),
    saveSource: (r) => s.saveListSource(r),
    forgetSource: (url) => s.forgetListSource(url),
  };
}

function newStore(): Store {
  const s = new Store({ path: ':memory:', logger: log });
  stores.push(s);
  return s;
}

function nodeList(store: Store, opts: Partial<ConstructorParameters<typeof NodeList>[0]>): NodeList {
  const l = new NodeList({
    endpoints: [],
    staticNodes: [],
    store: storeOf(store),
    logger: log,
    fetch: { attempts: 1, timeoutMs: 2_000, staggerMs: 300 },
    // This file's list sites and mirrors listen on loopback; a real list may never aim there.
    addressPolicy: () => null,
    ...opts,
  });
  lists.push(l);
  return l;
}

describe('fetching the node list from sources', () => {
  it('takes the first source that answers within its head start and never asks the later ones', async () => {
    const a = await site(good);
    const b = await site(good);
    const r = await race([api(a.listUrl), api(b.listUrl)]);
    expect(r.winner?.source.url).toBe(a.listUrl);
    expect(r.winner?.nodes).toHaveLength(2);
    expect(b.hits()).toBe(0);
  });

  it('asks for identity encoding, and refuses a compressed body it did not ask for', async () => {
    const z = await site('gzip');
    const ok = await site(good);
    const r = await race([api(z.listUrl), api(ok.listUrl)]);
    expect(z.lastHeaders()['accept-encoding']).toBe('identity');
    expect(r.winner?.source.url).toBe(ok.listUrl);
    expect(r.attempts.find((x) => x.url === z.listUrl)).toMatchObject({
      ok: false,
      junk: true,
      error: expect.stringMatching(/gzip-encoded/),
    });
  });

  it('names every junk source (HTML page, empty body, truncated list, error status, a stall mid-body, a hang) and the next source wins', async () => {
    const html = await site('<html><body>Please wait</body></html>');
    const empty = await site('');
    const truncated = await site(good.slice(0, good.length - 10));
    const error = await site({ status: 503, body: 'nope' });
    const stall = await site('stall');
    const hang = await site('hang');
    const ok = await site(good);
    const all = [html, empty, truncated, error, stall, hang, ok];
    const r = await race(
      all.map((s) => api(s.listUrl)),
      { timeoutMs: 400, staggerMs: 5_000 },
    );
    expect(r.winner?.source.url).toBe(ok.listUrl);
    expect(all.map((s) => s.hits())).toEqual([1, 1, 1, 1, 1, 1, 1]);
    const said = Object.fromEntries(r.attempts.filter((a) => !a.ok).map((a) => [a.url, a.error]));
    expect(said).toEqual({
      [html.listUrl]: expect.stringMatching(/HTML page/),
      [empty.listUrl]: expect.stringMatching(/empty/),
      [truncated.listUrl]: expect.stringMatching(/truncated/),
      [error.listUrl]: 'HTTP 503',
      [stall.listUrl]: expect.stringMatching(/timed out/),
      [hang.listUrl]: expect.stringMatching(/timed out/),
    });
    expect(
      r.attempts
        .filter((a) => a.junk)
        .map((a) => a.url)
        .sort(),
    ).toEqual([html.listUrl, empty.listUrl, truncated.listUrl, error.listUrl].sort());
  });

  it('refuses a body over the size cap, and follows a redirect', async () => {
    const big = await site(good + 'x'.repeat(200_000));
    const target = await site(good);
    const moved = await site({ redirect: target.listUrl });
    const r = await race([api(big.listUrl), api(moved.listUrl)], { maxBytes: 100_000, staggerMs: 5_000 });
    expect(r.attempts[0]).toMatchObject({
      url: big.listUrl,
      ok: false,
      error: expect.stringMatching(/exceeds 100000/),
    });
    expect(r.winner?.source.url).toBe(moved.listUrl);
  });

  it('reads a list with a BOM, CRLF, and quoted fields holding commas and newlines', async () => {
    const text =
      '\uFEFF' +
      vpnGateCsv([
        { host: 'public-vpn-1', ip: '203.0.113.1', operator: '"Tsukuba, Japan\r\nsecond line"' },
        { host: 'public-vpn-2', ip: '203.0.113.2' },
      ]);
    const s = await site(text);
    const r = await race([api(s.listUrl)]);
    expect(r.winner?.nodes.map((n) => [n.id, n.operator])).toEqual([
      ['public-vpn-1', 'Tsukuba, Japan\nsecond line'],
      ['public-vpn-2', 'op'],
    ]);
  });
});

describe('NodeList: mirrors, user sources, a working tunnel, imports', () => {
  it('reads the mirror directory at the origin of a source that answers, takes the list from a mirror, and tries that mirror first at the next start', async () => {
    const mirror = await site(csvOf(7, 8));
    // The official site answers, but its list endpoint does not (overloaded, or filtered by path).
    const official = await site(
      { status: 503 },
      { directory: directoryHtml([{ origin: mirror.origin, location: 'Korea Republic of' }]) },
    );
    const store = newStore();
    const first = nodeList(store, { endpoints: [official.listUrl] });
    await first.start();
    expect(first.nodes.map((n) => n.id)).toEqual(['public-vpn-7', 'public-vpn-8']);
    expect(first.status()).toMatchObject({ via: 'mirror', source: mirror.listUrl });
    expect(first.status().sources).toEqual([
      { url: official.listUrl, kind: 'official', via: 'direct', ok: false, error: 'HTTP 503', at: expect.any(Number) },
      { url: mirror.listUrl, kind: 'mirror', via: 'direct', ok: true, error: null, at: expect.any(Number) },
    ]);
    await first.close();

    const officialHits = official.hits();
    const second = nodeList(store, { endpoints: [official.listUrl], fetch: { attempts: 1, staggerMs: 5_000 } });
    await second.start();
    await second.refresh();
    expect(second.status()).toMatchObject({ via: 'mirror', source: mirror.listUrl });
    expect(mirror.hits()).toBe(2);
    expect(official.hits()).toBe(officialHits); // the mirror went first and answered within its head start
  });

  it('takes a source the user added when the official endpoints fail', async () => {
    const down = await site({ status: 500 });
    const user = await site(csvOf(3));
    const l = nodeList(newStore(), { endpoints: [down.listUrl], sources: { userSources: [user.listUrl] } });
    await l.start();
    expect(l.status()).toMatchObject({ via: 'user', source: user.listUrl, nodes: 1 });
  });

  it('fetches through a working tunnel when no direct source answers, then tries direct first again at the next refresh', async () => {
    // Reachable only "through the tunnel": directly its port is closed.
    const behind = await site(csvOf(5));
    const closed = await site('x');
    const closedPort = Number(new URL(closed.listUrl).port);
    await closed.close();
    sites.splice(sites.indexOf(closed), 1);
    const url = `http://127.0.0.1:${closedPort}/api/iphone/`;
    let tunnelDials = 0;
    const tunnel: Dialer = {
      via: 'tunnel',
      dial: (host, port, signal) => {
        tunnelDials++;
        return directDialer().dial(host, port === closedPort ? Number(new URL(behind.listUrl).port) : port, signal);
      },
    };
    const l = nodeList(newStore(), { endpoints: [url], sources: { mirrors: false }, tunnelDialer: () => tunnel });
    await l.start();
    expect(l.status()).toMatchObject({ via: 'tunnel', nodes: 1 });
    expect(l.status().sources[0]).toMatchObject({ via: 'tunnel', ok: true });
    const before = tunnelDials;
    behind.set(csvOf(5, 6));
    await l.refresh();
    expect(tunnelDials).toBeGreaterThan(before); // direct failed first, then the tunnel
    expect(l.nodes.map((n) => n.id)).toEqual(['public-vpn-5', 'public-vpn-6']);
  });

  it('imports a list file into the pool, and refuses junk with the reason while keeping what it had', async () => {
    const store = newStore();
    const l = nodeList(store, { endpoints: [] });
    await l.start();
    expect(() => l.importCsv('<html>not a list</html>')).toThrow(
      expect.objectContaining({ code: ErrorCodes.LIST_INVALID, message: expect.stringMatching(/HTML/) }),
    );
    const r = l.importCsv(csvOf(1, 2, 3));
    expect(r.nodes).toHaveLength(3);
    expect(l.status()).toMatchObject({ via: 'import', source: 'import', nodes: 3 });
    expect(() => l.importCsv(vpnGateCsv([{ host: 'x', ip: '999.0.0.1' }]))).toThrow(/no usable node.*1 bad-ip/);
    expect(l.nodes).toHaveLength(3);
  });

  it('a remembered pool passes the address policy too: a node an older version saved at a local address is not served (#34)', async () => {
    const store = newStore();
    const [lo, ok, lan] = parseVpnGateCsv(
      vpnGateCsv([
        { host: 'saved-at-loopback', ip: '127.0.0.1' },
        { host: 'public-vpn-1', ip: '203.0.113.1' },
        { host: 'saved-at-lan', ip: '192.168.7.7' },
      ]),
      { addressPolicy: () => null },
    ).nodes;
    store.savePoolNodes([lo!, ok!, lan!], Date.now());
    const s = await site({ status: 503 });
    let allowLan = false;
    const l = nodeList(store, {
      endpoints: [s.listUrl],
      sources: { mirrors: false },
      addressPolicy: (ip) => refusedAddress(ip, allowLan),
    });
    await l.start();
    expect(l.nodes.map((n) => n.id)).toEqual(['public-vpn-1']);
    // vpngate.allowPrivateNodes turned on by a reload: the pool passes again at once.
    allowLan = true;
    l.updateOptions({});
    expect(l.nodes.map((n) => n.id).sort()).toEqual(['public-vpn-1', 'saved-at-lan']);
  });

  it('the pool keeps the union of partial lists for keepDays and drops a node older than that, across restarts', async () => {
    const DAY = 24 * 3600_000;
    let now = Date.UTC(2026, 11, 1);
    const s = await site(csvOf(1, 2));
    const store = newStore();
    const make = (): NodeList =>
      nodeList(store, { endpoints: [s.listUrl], sources: { keepDays: 7, mirrors: false }, now: () => now });
    const l = make();
    await l.start();
    now += DAY;
    s.set(csvOf(2, 3));
    await l.refresh();
    now += DAY;
    s.set(csvOf(4));
    await l.refresh();
    expect(l.nodes.map((n) => n.id)).toEqual(['public-vpn-4', 'public-vpn-2', 'public-vpn-3', 'public-vpn-1']);
    expect(l.nodes.find((n) => n.id === 'public-vpn-1')?.lastListedAt).toBe(now - 2 * DAY);
    await l.close();

    // Six days on, in a new process: node 1 (listed 8 days ago) is gone, the rest are remembered.
    now += 6 * DAY;
    s.set({ status: 503 });
    const again = make();
    await again.start();
    expect(again.via).toBe('cache');
    expect(again.nodes.map((n) => n.id).sort()).toEqual(['public-vpn-2', 'public-vpn-3', 'public-vpn-4']);
    s.set(csvOf(9));
    now += 3600_000;
    await again.refresh();
    // Nodes 2 and 3 were listed 7 days and an hour ago: past keepDays now, forgotten with their history.
    expect(again.nodes.map((n) => n.id)).toEqual(['public-vpn-9', 'public-vpn-4']);
    expect(store.firstSeen('public-vpn-2')).toBeNull();
  });

  it('with only static nodes and no sources fetches nothing', async () => {
    const staticNode = { id: 'file:mine.ovpn' } as VpnGateNode;
    const l = nodeList(newStore(), { endpoints: [], staticNodes: [staticNode] });
    await l.start();
    expect(l.nodes).toEqual([staticNode]);
    expect(l.fetchable).toBe(false);
  });
});

describe('where a row came from decides whether its private CA is trusted (#59)', () => {
  const root = testRootCa('Gatehop Test Web Root');
  const siteCert = root.issue(['IP:127.0.0.1']);
  let restoreRoots: () => void = () => {};
  beforeAll(() => {
    // The HTTPS site's root is public for this process, as a real site's is.
    restoreRoots = installPublicRoot(root);
  });
  afterAll(() => restoreRoots());

  const nodeCa = testRootCa('Node 7 Self-Signed').cert;
  const attackerCa = testRootCa('Someone On The Path').cert;
  const rowWith = (ca: string, ip = '203.0.113.7'): string =>
    vpnGateCsv([
      {
        host: 'public-vpn-7',
        ip,
        profile: vpnGateProfile(ip, 443, 'tcp').replace(/<ca>[\s\S]*<\/ca>/, `<ca>\n${ca.trim()}\n</ca>`),
      },
    ]);
  const byId = (l: NodeList, id: string): VpnGateNode => l.nodes.find((n) => n.id === id)!;

  it('a list over HTTPS vouches for its rows; one in clear does not, and cannot give a vouched node another CA; the same CA in clear keeps the vouching', async () => {
    const secure = await site(rowWith(nodeCa), { tls: { key: siteCert.key, cert: siteCert.chain } });
    expect(secure.listUrl).toMatch(/^https:/);
    const clear = await site(csvOf(8));
    const store = newStore();
    const l = nodeList(store, { endpoints: [secure.listUrl] });
    await l.start();
    expect(byId(l, 'public-vpn-7').caVouchedBy).toBe('https');

    // The HTTPS site is out of reach; a mirror in clear answers with node 7 under someone else's CA.
    await secure.close();
    clear.set(rowWith(attackerCa, '198.51.100.66'));
    const fromClear = nodeList(store, { endpoints: [secure.listUrl], sources: { userSources: [clear.listUrl] } });
    await fromClear.start();
    await fromClear.refresh();
    const kept = byId(fromClear, 'public-vpn-7');
    expect(kept).toMatchObject({ caVouchedBy: 'https', ip: '203.0.113.7' });
    expect(kept.profile).toContain(nodeCa.trim().split('\n')[1]);
    expect(kept.profile).not.toContain(attackerCa.trim().split('\n')[1]);

    // The same CA in clear (the node moved): the new address is taken, still vouched.
    clear.set(rowWith(nodeCa, '203.0.113.77'));
    await fromClear.refresh();
    expect(byId(fromClear, 'public-vpn-7')).toMatchObject({ caVouchedBy: 'https', ip: '203.0.113.77' });

    // A node only the list in clear names is not vouched for; and all of it survives a restart.
    clear.set(csvOf(8));
    await fromClear.refresh();
    expect(byId(fromClear, 'public-vpn-8').caVouchedBy).toBeNull();
    const again = nodeList(store, { endpoints: [], sources: { userSources: [clear.listUrl] } });
    await again.start();
    expect(byId(again, 'public-vpn-7').caVouchedBy).toBe('https');
    expect(byId(again, 'public-vpn-8').caVouchedBy).toBeNull();
  });

  it('where the HTTPS site is blocked and a mirror in clear answers, the HTTPS site is asked through the tunnel too, and vouches for the CAs (#59)', async () => {
    // The HTTPS site is reachable only "through the tunnel": directly its port is closed.
    const behind = await site(rowWith(nodeCa), { tls: { key: siteCert.key, cert: siteCert.chain } });
    const closed = await site('x');
    const closedPort = Number(new URL(closed.listUrl).port);
    await closed.close();
    sites.splice(sites.indexOf(closed), 1);
    const blockedHttps = `https://127.0.0.1:${closedPort}/api/iphone/`;
    const mirror = await site(rowWith(nodeCa));
    const tunnel: Dialer = {
      via: 'tunnel',
      dial: (host, port, signal) =>
        directDialer().dial(host, port === closedPort ? Number(new URL(behind.listUrl).port) : port, signal),
    };
    let tunnelUp = false;
    const l = nodeList(newStore(), {
      endpoints: [blockedHttps],
      sources: { mirrors: false, userSources: [mirror.listUrl] },
      tunnelDialer: () => (tunnelUp ? tunnel : null),
    });
    await l.start();
    // No tunnel yet: the mirror's rows, vouched for by nothing.
    expect(l.status()).toMatchObject({ via: 'user', source: mirror.listUrl });
    expect(byId(l, 'public-vpn-7').caVouchedBy).toBeNull();
    expect(behind.hits()).toBe(0);
    // The first tunnel is up (the app calls vouch() at each switch): the HTTPS site through it, at once.
    tunnelUp = true;
    await l.vouch();
    expect(behind.hits()).toBe(1);
    expect(byId(l, 'public-vpn-7').caVouchedBy).toBe('https');
    expect(l.status()).toMatchObject({ via: 'tunnel', source: blockedHttps });
    // Vouched already: another switch asks nothing; the next refresh (the mirror in clear again)
    // asks the HTTPS site through the tunnel again.
    await l.vouch();
    expect(behind.hits()).toBe(1);
    await l.refresh();
    expect(behind.hits()).toBe(2);
    expect(byId(l, 'public-vpn-7').caVouchedBy).toBe('https');
  });

  it('logs the refused CA change in words; a redirect from http to https is still a list in clear', async () => {
    const secure = await site(rowWith(nodeCa), { tls: { key: siteCert.key, cert: siteCert.chain } });
    const store = newStore();
    const first = nodeList(store, { endpoints: [secure.listUrl] });
    await first.start();
    const lines: Array<Record<string, unknown>> = [];
    const redirect = await site({ redirect: secure.listUrl });
    secure.set(rowWith(attackerCa));
    const l = nodeList(store, { endpoints: [redirect.listUrl], logger: recordingLogger(lines) });
    await l.start();
    await l.refresh();
    expect(secure.hits()).toBeGreaterThanOrEqual(2);
    expect(byId(l, 'public-vpn-7').profile).not.toContain(attackerCa.trim().split('\n')[1]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        event: 'list-ca-change-refused',
        nodes: 1,
        msg: expect.stringMatching(/came without HTTPS and gave 1 nodes \(public-vpn-7\) another CA/),
      }),
    );
  });

  it('a file the user imports vouches for its rows; a node whose vouched row names another CA is reported as rekeyed', async () => {
    const rekeyed: string[][] = [];
    const l = nodeList(newStore(), { endpoints: [], onRekeyed: (ids) => void rekeyed.push([...ids]) });
    await l.start();
    l.importCsv(rowWith(nodeCa));
    expect(byId(l, 'public-vpn-7').caVouchedBy).toBe('file');
    l.importCsv(rowWith(nodeCa, '203.0.113.70'));
    expect(rekeyed).toEqual([]);
    l.importCsv(rowWith(attackerCa));
    expect(rekeyed).toEqual([['public-vpn-7']]);
    expect(byId(l, 'public-vpn-7').profile).toContain(attackerCa.trim().split('\n')[1]);
  });
});
