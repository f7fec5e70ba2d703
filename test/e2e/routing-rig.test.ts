import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig, type ConfigInput, type RunningApp } from '../../core/app/index.js';
import { ruleImportResultSchema } from '../../core/api/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { writeMrsDomains } from '../helpers/mrs-writer.js';
import { parseSocks5Udp, parseUpstreamUrl, socks5UdpAssociate, socks5UdpHeader } from '../../core/reach/index.js';
import { curl } from '../helpers/curl.js';
import { eventually, until } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { fileLogger, rigAppInput, startRigCore } from '../helpers/rig-app.js';
import { startUdpEcho, type TestUdpEcho } from '../helpers/servers.js';
import { socksConnect } from '../helpers/socks-client.js';
import { Rig } from '../rig/rig.js';
import { dnsCounter, dnsQueryPacket } from '../helpers/dns-counter.js';

/**
 * Issue #33 on real servers: one rule table sends some flows out of the host directly, others
 * through a real VPN tunnel, refuses others; told apart by the address each web host sees. The
 * direct side is a server on this host's loopback (the rig's "internet" is reachable only through
 * a tunnel), the tunnel side the rig's web host, which answers /ip with the address it sees.
 */
describe.skipIf(!isRoot)('routing flows by rules on the rig (#33)', () => {
  let rig: Rig;
  let app: RunningApp;
  let local: Server;
  let echo: TestUdpEcho;
  let localPort = 0;
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-routing-'));

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 1, openvpn: [], bigMib: 1 });
    // A web host on this machine that says who connected: what the "direct" side sees.
    local = createServer((req, res) => res.end(`direct ${req.socket.remoteAddress}`));
    await new Promise<void>((r) => local.listen(0, '127.0.0.1', () => r()));
    localPort = (local.address() as AddressInfo).port;
    echo = await startUdpEcho();
    // The rules come from the "config file" and the rig's settings from the "command line", so the
    // import test below can save settings over the file's rules, as a user's would be.
    const fromFile: ConfigInput = {
      mode: 'rule',
      rules: [
        'DOMAIN,localhost,DIRECT',
        'IP-CIDR,127.0.0.0/8,DIRECT,no-resolve',
        'DOMAIN-SUFFIX,blocked.test,REJECT',
        'DST-PORT,9,REJECT',
        // Needs the address of every named flow that gets this far: resolved inside the tunnel.
        'IP-CIDR,192.0.2.0/24,DIRECT',
        // here.test is a name only the rig's resolver (inside the tunnel) knows: it answers 127.0.0.1.
        'IP-CIDR,127.0.0.1/32,DIRECT',
        'MATCH,TUNNEL',
      ],
    };
    const { mode: _flagMode, ...fromFlags } = rigAppInput(rig, dataDir, { admin: '127.0.0.1:0' });
    app = await startRigCore(buildConfig(fromFile, fromFlags), fileLogger(join(dataDir, 'gatehop.log')), {
      settle: false,
      extras: { layers: { fromFile, fromFlags } },
    });
  }, 240_000);

  afterAll(async () => {
    await app?.stop();
    await new Promise<void>((r) => (local ? local.close(() => r()) : r()));
    await echo?.close();
    await rig?.down();
  });

  const proxy = (): string => `127.0.0.1:${app.listening.proxy.port}`;

  it('a name a rule sends DIRECT leaves from this host; another name and an address go through the tunnel', async () => {
    const direct = await curl(['--socks5-hostname', proxy(), `http://localhost:${localPort}/`]);
    expect(direct.stdout.toString()).toBe('direct 127.0.0.1');
    const exit = rig.state.nodes[0]!.exitAddress;
    // files.test exists only on the rig's side: resolved inside the tunnel, it answers with the node's exit.
    const byName = await curl(['--socks5-hostname', proxy(), 'http://files.test/ip']);
    expect(byName.stdout.toString()).toBe(exit);
    const byAddress = await curl(['-x', `http://${proxy()}`, rig.url('/ip')]);
    expect(byAddress.stdout.toString()).toBe(exit);
    const routed = app.proxy.stats.routed;
    expect(routed.DIRECT).toBeGreaterThanOrEqual(1);
    expect(routed.TUNNEL).toBeGreaterThanOrEqual(2);
    // /metrics: flows and bytes per target (bytes counted when the sessions end).
    await eventually(
      () => (app.proxy.stats.routedBytes.DIRECT ?? 0) > 0 && (app.proxy.stats.routedBytes.TUNNEL ?? 0) > 0,
    );
  }, 60_000);

  it('no clear DNS packet leaves this host for a tunnel-bound name while an IP rule needs its address', async () => {
    const { packets, remove } = dnsCounter('gh_dns', 0, { qname: 'files.test' });
    try {
      // The counter counts: a query for the name to port 53 on loopback (nothing listens there).
      const probe = createSocket('udp4');
      await new Promise<void>((r) => probe.send(dnsQueryPacket('files.test'), 53, '127.0.0.1', () => r()));
      probe.close();
      // Counted in the output hook during sendmsg, which returned before the send's callback: no wait.
      expect(packets()).toBeGreaterThanOrEqual(1);
      const before = packets();
      const byName = await curl(['--socks5-hostname', proxy(), 'http://files.test/ip']);
      expect(byName.stdout.toString()).toBe(rig.state.nodes[0]!.exitAddress);
      expect(packets()).toBe(before);
    } finally {
      remove();
    }
  }, 30_000);

  it('one pass, and a DIRECT flow decided on its in-tunnel address is dialled at that address: no clear DNS, no failure for a name only the tunnel knows (#45)', async () => {
    const { packets, remove } = dnsCounter('gh_dns2', 0, { qname: 'here.test' });
    try {
      const before = packets();
      // here.test → 127.0.0.1 inside the tunnel. The no-resolve 127/8 rule is passed (a name), the
      // 192.0.2/24 rule has it resolved, the 127.0.0.1/32 rule sends it DIRECT: to 127.0.0.1, not by name.
      const r = await curl(['--socks5-hostname', proxy(), `http://here.test:${localPort}/`]);
      expect(r.stdout.toString()).toBe('direct 127.0.0.1');
      expect(packets()).toBe(before);
    } finally {
      remove();
    }
  }, 30_000);

  it('REJECT: SOCKS5 answers 0x02 (not allowed by ruleset); HTTP answers 403 naming the rule', async () => {
    const { client, reply } = await socksConnect(app.listening.proxy.port, 'ads.blocked.test', 443);
    expect(reply[1]).toBe(0x02);
    client.destroy();
    const http = await curl(['-x', `http://${proxy()}`, '-w', '\n%{http_code}', 'http://www.blocked.test/']);
    expect(http.stdout.toString()).toBe('403 Forbidden: refused by the rule DOMAIN-SUFFIX,blocked.test\n\n403');
    const connect = await curl(['-x', `http://${proxy()}`, '-p', 'https://www.blocked.test/']);
    expect(connect.stderr).toMatch(/403/);
  }, 30_000);

  it('one UDP association talks to two peers routed apart, each reply attributed to its peer; a refused peer gets nothing', async () => {
    const up = parseUpstreamUrl(`socks5://${proxy()}`);
    const { control, relay } = await socks5UdpAssociate(up);
    const sock = createSocket('udp4');
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
    const got: Array<{ host: string; port: number; data: string }> = [];
    sock.on('message', (m) => {
      const d = parseSocks5Udp(m);
      if (d) got.push({ host: d.host, port: d.port, data: d.data.toString() });
    });
    const send = (host: string, port: number, text: string): void =>
      sock.send(Buffer.concat([socks5UdpHeader(host, port), Buffer.from(text)]), relay.port, relay.host);
    const inet = rig.state.inetAddress;
    try {
      // UDP may drop: send until both peers answered.
      await eventually(
        () => {
          if (!got.some((g) => g.host === inet)) send(inet, 7, 'via tunnel');
          if (!got.some((g) => g.host === '127.0.0.1')) send('127.0.0.1', echo.port, 'direct');
          send(inet, 9, 'refused');
          return got.some((g) => g.host === inet) && got.some((g) => g.host === '127.0.0.1');
        },
        20_000,
        () => `replies from both peers (got ${JSON.stringify(got)})`,
      );
      expect(got.find((g) => g.host === inet)).toEqual({ host: inet, port: 7, data: 'via tunnel' });
      expect(got.find((g) => g.host === '127.0.0.1')).toEqual({ host: '127.0.0.1', port: echo.port, data: 'direct' });
      expect(got.some((g) => g.data === 'refused')).toBe(false);
      expect(app.proxy.stats.udp.rejected).toBeGreaterThanOrEqual(1);
    } finally {
      sock.close();
      control.destroy();
    }
  }, 60_000);

  it('a Clash config with three groups, logic rules, rule sets in every format and a sub-rule list imports, asks for the mapping and routes as mapped (#45)', async () => {
    // The rule sets are served from this host, as a subscription's would be from the internet.
    const sets = createServer((req, res) => {
      if (req.url === '/ads.yaml') return res.end('payload:\n  - "+.yaml-ads.test"\n');
      if (req.url === '/trackers.txt') return res.end('DOMAIN-SUFFIX,text-ads.test\n');
      res.end(writeMrsDomains(['+.mrs-ads.test']));
    });
    await new Promise<void>((r) => sets.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(sets.address() as AddressInfo).port}`;
    const clash = (extra = ''): string => `
mode: rule
proxies:
  - { name: hk1, type: ss, server: 192.0.2.1, port: 8388, cipher: aes-128-gcm, password: x }
proxy-groups:
  - { name: "🚀 节点选择", type: select, proxies: [hk1, DIRECT] }
  - { name: "🎯 全球直连", type: select, proxies: [DIRECT] }
  - { name: "🛑 广告拦截", type: select, proxies: [REJECT, DIRECT] }${extra ? `\n  - { name: Japan, type: select, proxies: [hk1] }` : ''}
rule-providers:
  ads: { type: http, behavior: domain, format: yaml, url: "${base}/ads.yaml", interval: 86400 }
  trackers: { type: http, behavior: classical, format: text, url: "${base}/trackers.txt", interval: 86400 }
  binary: { type: http, behavior: domain, format: mrs, url: "${base}/binary.mrs", interval: 86400 }
sub-rules:
  udp-rules: [ "DST-PORT,9,🛑 广告拦截", "MATCH,🚀 节点选择" ]
rules:
  - DOMAIN,localhost,🎯 全球直连
  - RULE-SET,ads,🛑 广告拦截
  - RULE-SET,trackers,🛑 广告拦截
  - RULE-SET,binary,🛑 广告拦截
  - AND,((NETWORK,TCP),(DOMAIN-SUFFIX,logic.test)),🛑 广告拦截
  - SUB-RULE,(NETWORK,UDP),udp-rules${extra}
  - IP-CIDR,127.0.0.0/8,🎯 全球直连,no-resolve
  - MATCH,🚀 节点选择
`;
    const port = app.listening.admin!.port;
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const post = async (body: object) => {
      const r = await apiRequest(port, 'POST', '/routing/import', { token, body });
      expect(r.status, r.text).toBe(200);
      return ruleImportResultSchema.parse(r.json());
    };
    try {
      const read = await post({ config: clash() });
      expect(read.applied).toBe(false);
      expect(read.ask).toEqual(['🎯 全球直连', '🛑 广告拦截', '🚀 节点选择']);
      expect(Object.fromEntries(read.targets.map((t) => [t.name, t.guess]))).toEqual({
        '🎯 全球直连': 'DIRECT',
        '🛑 广告拦截': 'REJECT',
        '🚀 节点选择': 'TUNNEL',
      });
      const done = await post({ config: clash(), mapping: { '🚀 节点选择': 'TUNNEL' }, apply: true });
      expect(done).toMatchObject({ applied: true, rules: 8, ruleSets: ['ads', 'trackers', 'binary'] });
      await until(
        () => (app.routing.status().ruleSets.filter((s) => s.entries > 0).length === 3 ? true : undefined),
        20_000,
        'the three imported rule sets fetched',
      );
      // Mapped DIRECT: from this host. Mapped TUNNEL: the node's exit. Mapped REJECT: refused.
      const direct = await curl(['--socks5-hostname', proxy(), `http://localhost:${localPort}/`]);
      expect(direct.stdout.toString()).toBe('direct 127.0.0.1');
      const tunnel = await curl(['--socks5-hostname', proxy(), 'http://files.test/ip']);
      expect(tunnel.stdout.toString()).toBe(rig.state.nodes[0]!.exitAddress);
      for (const name of ['www.yaml-ads.test', 'x.text-ads.test', 'mrs-ads.test', 'www.logic.test']) {
        const { client, reply } = await socksConnect(app.listening.proxy.port, name, 443);
        expect(reply[1], name).toBe(0x02);
        client.destroy();
      }
      // An updated file with a new group: only the new name is asked about; the others keep their answers.
      const again = await post({ config: clash('\n  - DOMAIN-SUFFIX,jp,Japan') });
      expect(again.ask).toEqual(['Japan']);
      expect(again.targets.find((t) => t.name === '🚀 节点选择')).toMatchObject({ saved: 'TUNNEL', use: 'TUNNEL' });
    } finally {
      await new Promise<void>((r) => sets.close(() => r()));
    }
  }, 90_000);
});
