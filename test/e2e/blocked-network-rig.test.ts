import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { statusSchema, type Status } from '../../core/api/index.js';
import { startApp, type ConfigInput, type RunningApp } from '../../core/app/index.js';
import { networkKeyOf, readNetworkSnapshot } from '../../core/common/index.js';
import { isTunnel } from '../../core/egress/index.js';
import type { NodeTunnel } from '../../core/groups/index.js';
import { parseProfile } from '../../core/ovpn/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { curl, sha256 } from '../helpers/curl.js';
import { eventually, until } from '../helpers/fds.js';
import { GatehopProcess, runGatehop, type LogLine } from '../helpers/gatehop-process.js';
import { isRoot } from '../helpers/netns.js';
import { freePort } from '../helpers/ports.js';
import { fileLogger, rigAppConfig } from '../helpers/rig-app.js';
import { dante, microsocks, tinyproxy, type RunningProxy } from '../helpers/upstream-proxies.js';
import { Rig, type RigSite } from '../rig/rig.js';

/**
 * Issue #20 on the rig, each a real network situation: an official site dropped by nftables, mirror
 * directories and junk mirrors on hosts of their own, a list reachable only through a tunnel, and a
 * host that reaches the nodes only through a SOCKS5 or HTTP proxy in another namespace.
 */
describe.skipIf(!isRoot)('where VPN Gate is blocked (issue #20), on the rig', () => {
  let rig: Rig;
  const sites: RigSite[] = [];
  const proxies: RunningProxy[] = [];
  const procs: GatehopProcess[] = [];
  const unblock: Array<() => void> = [];
  let app: RunningApp | null = null;

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 2, openvpn: ['gcm-udp', 'cbc-tcp'], bigMib: 2 });
    // The SoftEther nodes as VPN Gate's are: the shared *.opengw.net certificate from a public CA,
    // whose root is their profiles' <ca>. Lists in clear (mirrors, a site through a tunnel) are
    // where VPN Gate is blocked, and the DDNS name is what makes such a node trusted from them;
    // the stock OpenVPN nodes keep the rig's private CA, which no list in clear vouches for (#59).
    const publicRoot = readFileSync(rig.state.publicRootFile, 'utf8').trim();
    for (const n of rig.softether) {
      rig.setNodeCert(n.name, 'public', ['*.opengw.net']);
      const profile = readFileSync(n.listProfile, 'utf8');
      writeFileSync(n.listProfile, profile.replace(/<ca>[\s\S]*?<\/ca>/, `<ca>\r\n${publicRoot}\r\n</ca>`));
    }
  }, 240_000);

  afterEach(async () => {
    await app?.stop();
    app = null;
    await Promise.all(procs.splice(0).map((p) => p.stop()));
    for (const u of unblock.splice(0)) u();
  });

  afterAll(async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
    for (const s of sites.splice(0)) s.stop();
    rig?.down();
  });

  const serve = async (o: Parameters<Rig['serveList']>[0]): Promise<RigSite> => {
    const s = await rig.serveList(o);
    sites.push(s);
    return s;
  };

  /** A config file as a user in a blocked network would have it (short source deadlines for the test). */
  function configFile(dir: string, extra: string[] = []): string {
    const f = join(dir, 'gatehop.yaml');
    writeFileSync(
      f,
      [
        'groups:',
        `  urlTest: { url: "${rig.url('/generate_204')}", intervalMs: 600000 }`,
        'switching:',
        '  healthDnsName: files.test',
        // The rig's internet is in 10/8: through the tunnel, not the default table's LAN rule.
        'mode: global',
        'vpngate:',
        '  timeoutMs: 3000',
        '  headStartMs: 4000',
        '  allowPrivateNodes: true',
        ...extra,
        '',
      ].join('\n'),
    );
    return f;
  }

  async function gatehop(
    dir: string,
    args: string[],
    opts: { hosts?: Record<string, string> } = {},
  ): Promise<{ proc: GatehopProcess; status: () => Promise<Status>; logFile: string }> {
    const admin = await freePort();
    const logFile = join(dir, `gatehop-${procs.length}.log`);
    const proc = new GatehopProcess(
      dir,
      [
        '--egress',
        'vpngate',
        '--listen',
        `127.0.0.1:${await freePort()}`,
        '--admin',
        `127.0.0.1:${admin}`,
        '--data-dir',
        dir,
        '--log-file',
        logFile,
        ...args,
      ],
      opts,
    );
    procs.push(proc);
    await proc.ready();
    const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
    const status = async (): Promise<Status> =>
      statusSchema.parse((await apiRequest(admin, 'GET', '/status', { token })).json());
    return { proc, status, logFile };
  }

  it('the official endpoint blackholed by nftables: the list comes from a mirror a directory page names elsewhere, junk mirrors are named on the way, and that mirror goes first at the next start', async () => {
    const h = rig.addHost('sites', { extraAddresses: 5 });
    const [dirAt, stallAt, htmlAt, truncAt, goodAt] = h.extra as [string, string, string, string, string];
    const official = await serve({ ns: h.ns, host: h.address, port: 8080 });
    const good = await serve({ ns: h.ns, host: goodAt, port: 8080 });
    const stall = await serve({ ns: h.ns, host: stallAt, port: 8080, mode: 'stall' });
    const html = await serve({ ns: h.ns, host: htmlAt, port: 8080, mode: 'html' });
    const trunc = await serve({ ns: h.ns, host: truncAt, port: 8080, mode: 'truncated' });
    const directory = await serve({
      ns: h.ns,
      host: dirAt,
      port: 8080,
      noList: true,
      mirrors: [stall, html, trunc, good].map((s) => s.origin),
    });
    unblock.push(rig.blockFromHost(`${h.address}/32`));
    const dir = mkdtempSync(join(tmpdir(), 'gh-blocked-'));
    const args = ['--config', configFile(dir), '--api', official.listUrl, '--api', directory.listUrl];

    const first = await gatehop(dir, args);
    const list = await until(
      async () => {
        const s = await first.status();
        return s.list?.via === 'mirror' && s.active ? s.list : undefined;
      },
      90_000,
      async () => `the list from a mirror and a tunnel up (status: ${JSON.stringify((await first.status()).list)})`,
    );
    expect(list.source).toBe(good.listUrl);
    // From a mirror in clear: a node trusted under its DDNS name, never the rig's private CA.
    const st = await first.status();
    expect(rig.softether.map((n) => n.name)).toContain(st.active?.nodeId);
    expect(st.tunnels.find((t) => t.nodeId === st.active?.nodeId)?.trustRule).toBe('public-ca-name');
    const by = Object.fromEntries(list.sources.map((s) => [s.url, s]));
    expect(by[official.listUrl]).toMatchObject({
      kind: 'api',
      via: 'direct',
      ok: false,
      error: expect.stringMatching(/timed out/),
    });
    expect(by[directory.listUrl]).toMatchObject({ ok: false, error: 'HTTP 404' });
    expect(by[stall.listUrl]).toMatchObject({ kind: 'mirror', ok: false, error: expect.stringMatching(/timed out/) });
    expect(by[html.listUrl]).toMatchObject({ kind: 'mirror', ok: false, error: expect.stringMatching(/HTML page/) });
    expect(by[trunc.listUrl]).toMatchObject({ kind: 'mirror', ok: false, error: expect.stringMatching(/truncated/) });
    expect(by[good.listUrl]).toMatchObject({ kind: 'mirror', via: 'direct', ok: true });
    expect(await first.proc.stop()).toBe(0);

    // The next start remembers the mirror that worked and asks it first: the blackholed official
    // endpoint (first in --api) is not even tried before the mirror answers.
    const second = await gatehop(dir, args);
    await until(
      async () =>
        ((await second.status()).list?.sources.find((s) => s.url === good.listUrl)?.at ?? 0) >
          (by[good.listUrl]!.at ?? 0) || undefined,
      30_000,
      'the mirror asked again',
    );
    const events = second.proc
      .log(second.logFile)
      .filter((l: LogLine) => l.event === 'list-fetched' || l.event === 'list-source-failed');
    expect(events[0]).toMatchObject({ event: 'list-fetched', url: good.listUrl, kind: 'mirror' });
  }, 180_000);

  it('an imported file in an empty data dir brings a tunnel up, and the list then refreshes through that tunnel from a site only the tunnel reaches (names resolved inside it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-through-'));
    // The file a user was sent: part of the list, weeks old perhaps; and one that is not a list at all.
    const partial = await serve({ ns: null, host: '127.0.0.1', nodes: [rig.softether[0]!.name, rig.openvpn[1]!.name] });
    const file = join(dir, 'vpngate.csv');
    writeFileSync(file, await (await fetch(partial.listUrl)).text());
    writeFileSync(join(dir, 'portal.html'), '<html><body>Log in to use this Wi-Fi</body></html>');
    const junk = await runGatehop(['import-list', join(dir, 'portal.html'), '--data-dir', dir]);
    expect(junk).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/portal\.html is not a VPN Gate list: the list is an HTML page/),
    });
    // The rig's nodes sit at private addresses: refused unless allowed, with the reason.
    const refused = await runGatehop(['import-list', file, '--data-dir', dir]);
    expect(refused).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/no usable node \(skipped: 2 private-address\)/),
    });
    const imported = await runGatehop(['import-list', file, '--data-dir', dir, '--allow-private-nodes']);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/imported 2 nodes from .*vpngate\.csv into .*; the pool has 2 nodes/);

    // The whole list, on the rig's internet side only: the host has no route there and no resolver for the name.
    await serve({ ns: rig.state.inetNs, host: rig.state.inetAddress, port: 8080 });
    const api = 'http://www.rig.test:8080/api/iphone/';
    const g = await gatehop(dir, ['--config', configFile(dir), '--api', api]);
    const list = await until(
      async () => {
        const s = await g.status();
        return s.list?.via === 'tunnel' ? s.list : undefined;
      },
      90_000,
      async () => `the list through the tunnel (status: ${JSON.stringify((await g.status()).list)})`,
    );
    expect(list).toMatchObject({ source: api, nodes: rig.state.nodes.length });
    expect(list.sources).toEqual([expect.objectContaining({ url: api, via: 'tunnel', ok: true })]);
    // Directly the name did not even resolve: tried first, and said.
    const failedDirect = g.proc.log(g.logFile).find((l) => l.event === 'list-source-failed' && l.via === 'direct');
    expect(failedDirect).toMatchObject({ url: api, err: expect.stringMatching(/EAI_AGAIN|ENOTFOUND/) });
  }, 180_000);

  describe("the nodes only through the user's other proxy (upstream)", () => {
    let px: ReturnType<Rig['addHost']>;
    const api = 'http://api.upstream.test:8081/api/iphone/';
    const udpNodes = (): string[] =>
      rig.state.nodes
        .filter((n) => parseProfile(readFileSync(n.listProfile, 'utf8')).remotes[0]!.proto === 'udp')
        .map((n) => n.name);

    beforeAll(async () => {
      // The proxy's host is on the lan with the nodes; the list is on its own loopback, by a name only it knows.
      px = rig.addHost('px', { lan: true, hosts: { 'api.upstream.test': '127.0.0.1' } });
      await serve({ ns: px.ns, host: '127.0.0.1', port: 8081 });
      const exec = ['ip', 'netns', 'exec', px.ns];
      proxies.push(
        await microsocks({ host: px.address, exec }),
        await tinyproxy({ host: px.address, exec }),
        await dante({ host: px.address, external: px.lanAddress!, exec }),
      );
    }, 60_000);

    async function through(url: string, over: ConfigInput = {}): Promise<RunningApp> {
      unblock.push(rig.blockFromHost(rig.state.lan));
      const dir = mkdtempSync(join(tmpdir(), 'gh-upstream-'));
      app = await startApp(
        rigAppConfig(rig, dir, { api: [api], upstream: { url }, ...over }),
        fileLogger(join(dir, 'gatehop.log')),
      );
      const a = app;
      await eventually(
        () => isTunnel(a.manager!.active),
        90_000,
        () => `a tunnel through ${url} (log: ${join(dir, 'gatehop.log')})`,
      );
      return a;
    }

    async function downloadIntact(a: RunningApp): Promise<void> {
      const d = await curl([
        '--max-time',
        '120',
        '--socks5-hostname',
        `127.0.0.1:${a.listening.proxy.port}`,
        rig.url('/big'),
      ]);
      expect(d.stderr).toBe('');
      expect(sha256(d.stdout)).toBe(rig.state.bigSha256);
    }

    it.each([
      ['a SOCKS5 proxy without UDP (microsocks)', 0],
      ['an HTTP CONNECT proxy (tinyproxy)', 1],
    ])(
      'through %s with OpenVPN only: TCP nodes work, UDP nodes are skipped with the reason, a download is intact',
      async (_what, i) => {
        // The host itself reaches no node: only the proxy does.
        const direct = await curl(['--max-time', '3', `http://${rig.state.nodes[0]!.vpnAddress}:1194/`]);
        expect(direct.code).not.toBe(0);
        const a = await through(proxies[i]!.url, { tunnel: { protocols: ['openvpn'] } });
        const node = (a.manager!.active as NodeTunnel).nodeId;
        expect(udpNodes()).not.toContain(node);
        const excluded = await until(
          () => {
            const x = a.selector!.last?.excluded.filter((e) => e.reason === 'needs-udp').map((e) => e.nodeId);
            return x && x.length > 0 ? x : undefined;
          },
          30_000,
          'UDP nodes skipped',
        );
        expect(excluded.sort()).toEqual(udpNodes().sort());
        await downloadIntact(a);
      },
      180_000,
    );

    it('through an HTTP CONNECT proxy (tinyproxy) with SSTP on: a node listed only for OpenVPN over UDP is reached over SSTP, and the download is intact (issue #22)', async () => {
      const udpSoftEther = rig.softether.find((n) => udpNodes().includes(n.name))!.name;
      const a = await through(proxies[1]!.url, {
        groups: { mode: 'manual', defaultNode: udpSoftEther },
        tunnel: { nodeCa: rig.state.caFile },
      });
      await eventually(
        () => (a.manager!.active as NodeTunnel).nodeId === udpSoftEther,
        60_000,
        `the pinned UDP node ${udpSoftEther} active`,
      );
      expect((a.manager!.active as NodeTunnel).protocol).toBe('sstp');
      expect(a.selector!.last?.excluded.filter((e) => e.reason === 'needs-udp')).toEqual([]);
      await downloadIntact(a);
    }, 180_000);

    it('upstream.nodes: fallback (#35): direct first; where no node answers directly the tunnel comes up through the proxy, and a restart on this network starts there', async () => {
      unblock.push(rig.blockFromHost(rig.state.lan));
      const dataDir = mkdtempSync(join(tmpdir(), 'gh-fallback-'));
      const config = rigAppConfig(rig, dataDir, {
        api: [api],
        upstream: { url: proxies[1]!.url, nodes: 'fallback' },
        tunnel: { protocols: ['openvpn'] },
      });
      const pathEvents = (file: string): string[] =>
        readFileSync(join(dataDir, file), 'utf8')
          .split('\n')
          .filter((l) => l.includes('"event":"node-path"'))
          .map((l) => (JSON.parse(l) as { reason: string }).reason);
      app = await startApp(config, fileLogger(join(dataDir, 'first.log')));
      const a = app;
      await eventually(() => isTunnel(a.manager!.active), 90_000, 'a tunnel through the proxy');
      expect(pathEvents('first.log')).toEqual(['no node answered directly']);
      const key = networkKeyOf(readNetworkSnapshot());
      await eventually(() => a.store!.setting(`node-path ${key}`) === 'upstream', 30_000, 'the path remembered');
      await downloadIntact(a);
      await a.stop();
      app = await startApp(config, fileLogger(join(dataDir, 'again.log')));
      const b = app;
      await eventually(() => isTunnel(b.manager!.active), 90_000, 'a tunnel again');
      // Straight to the proxy: no direct round that found nothing first.
      expect(pathEvents('again.log')).toEqual(['remembered for this network']);
    }, 240_000);

    it('through a SOCKS5 proxy whose UDP relay works (Dante): a UDP node carries the download, and the relay is remembered as working', async () => {
      const udpNode = udpNodes()[0]!;
      const a = await through(proxies[2]!.url, { groups: { mode: 'manual', defaultNode: udpNode } });
      await eventually(
        () => (a.manager!.active as NodeTunnel).nodeId === udpNode,
        60_000,
        `the pinned UDP node ${udpNode} active`,
      );
      await downloadIntact(a);
      expect(a.store!.setting(`upstream-udp ${proxies[2]!.url}`)).toBe('works');
    }, 180_000);
  });

  it('vpngate.connectBy: hostname dials the node by its DDNS name (<HostName>.opengw.net), resolved as the system resolves it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-byname-'));
    const hosts = Object.fromEntries(rig.state.nodes.map((n) => [`${n.name}.opengw.net`, n.vpnAddress]));
    const g = await gatehop(dir, ['--config', configFile(dir, ['  connectBy: hostname']), '--api', rig.state.apiUrl], {
      hosts,
    });
    await until(async () => (await g.status()).active?.nodeId ?? undefined, 90_000, 'a tunnel by name');
    const remotes = g.proc
      .log(g.logFile)
      .filter((l) => l.event === 'tunnel-opening')
      .map((l) => l.remote)
      .filter((r): r is string => typeof r === 'string');
    expect(remotes.length).toBeGreaterThan(0);
    expect(remotes.every((r) => r.includes('.opengw.net:'))).toBe(true);
    expect((await g.status()).reach).toEqual({
      connectBy: 'hostname',
      upstream: null,
      upstreamUdp: null,
      nodePath: null,
    });
  }, 120_000);
});
