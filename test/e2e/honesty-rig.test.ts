/**
 * Honesty checks through each node's own tunnel (#43), against dishonest nodes that are real
 * servers in their nodes' namespaces: n2's resolver lies for files.test and answers names that do
 * not exist; n3's outgoing HTTP goes through a transparent proxy that injects a script into pages,
 * only for requests that do not look like a check (#59); n4's outgoing TLS meets an interceptor
 * with its own CA. n1 is honest. The checks aim at the rig's own
 * "internet" (rigHonesty), whose HTTPS names come from the rig's "public" root, installed here as
 * the OS roots are for real. Also the opt-ins: encrypted DNS in the tunnel, HTTPS only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { ErrorCodes, isGatehopError, silentLogger } from '../../core/common/index.js';
import { TunnelEgress } from '../../core/egress/index.js';
import type { SwitchRecord } from '../../core/groups/index.js';
import { checkNodeHonesty } from '../../core/honesty/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { curl } from '../helpers/curl.js';
import { eventually, until } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { installPublicRoot } from '../helpers/pki.js';
import { fileLogger, rigAppConfig, rigAppInput, rigHonesty } from '../helpers/rig-app.js';
import { sevpnLinkOf } from '../helpers/rig-links.js';
import { Rig } from '../rig/rig.js';
import { HONESTY_PAGE } from '../rig/services/fixed.mjs';

/**
 * An explicit switch once none runs: the controller may be moving on its own (leaving a node the
 * checks just flagged, a URL test's verdict), and a switch asked for meanwhile is refused with
 * GH_ERR_SWITCH_IN_PROGRESS, so wait for that one to end and ask again.
 */
async function switchWhenFree(a: RunningApp, reason: string): Promise<SwitchRecord> {
  for (let attempt = 1; ; attempt++) {
    await eventually(() => a.controller!.switching === null, 60_000, 'no switch running');
    try {
      return await a.controller!.switchNow({ reason }).done;
    } catch (err) {
      if (!isGatehopError(err) || err.code !== ErrorCodes.SWITCH_IN_PROGRESS || attempt === 5) throw err;
    }
  }
}

const TOKEN = 'honesty-rig-test-token-0001';

describe.skipIf(!isRoot)('honesty checks of nodes, through their own tunnels (#43)', () => {
  let rig: Rig;
  let restoreRoots: () => void = () => {};
  const tunnels: TunnelEgress[] = [];
  let app: RunningApp | null = null;

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 4, openvpn: [], dishonest: { n2: 'dns', n3: 'http', n4: 'tls' } });
    restoreRoots = installPublicRoot({ certFile: rig.state.publicRootFile });
  }, 240_000);
  afterEach(async () => {
    await Promise.all(tunnels.splice(0).map((t) => t.close()));
    await app?.stop();
    app = null;
  });
  afterAll(() => {
    restoreRoots();
    rig?.down();
  });

  const options = () => buildConfig(rigHonesty(rig), {});

  async function sevpn(nodeName: string, extra: { doh?: boolean } = {}): Promise<TunnelEgress> {
    const t = await TunnelEgress.open({
      id: `check-${nodeName}`,
      nodeId: nodeName,
      link: sevpnLinkOf(rig, nodeName),
      logger: silentLogger(),
      connectTimeoutMs: 20_000,
      ...(extra.doh ? { doh: options().dohServers.map((d) => ({ ...d })) } : {}),
    });
    tunnels.push(t);
    return t;
  }

  const check = async (nodeName: string) => {
    const t = await sevpn(nodeName);
    const c = options();
    return checkNodeHonesty(t, t.dnsServers, c.honesty, { direct: null, doh: c.dohServers });
  };

  it('an honest node is honest: every kind of check passed, within the budget', async () => {
    const r = await check('rig-node1');
    expect(r.inconclusive).toEqual([]);
    expect(r.verdict).toBe('honest');
    expect(r.evidence).toEqual([]);
    expect(r.bytes).toBeGreaterThan(0);
    expect(r.bytes).toBeLessThan(options().honesty.maxBytes);
  }, 60_000);

  it('a resolver that lies for a public name and rewrites NXDOMAIN is dns-tampering, with what it said', async () => {
    const r = await check('rig-node2');
    expect(r.verdict).toBe('dns-tampering');
    expect(r.evidence).toContainEqual(
      expect.objectContaining({
        check: 'dns',
        target: expect.stringMatching(/^files\.test at /),
        got: '198.51.100.66',
      }),
    );
    expect(r.evidence).toContainEqual(
      expect.objectContaining({ check: 'nxdomain', expected: 'NXDOMAIN (no such name)', got: '198.51.100.66' }),
    );
  }, 60_000);

  it('a transparent proxy that injects a script only into pages, and only for what does not look like a check, is http-tampering, with the page it served (#59)', async () => {
    // What the injector does to the checks' old fingerprint (HTTP/1.0, a bare Mozilla/5.0): nothing.
    const t = await sevpn('rig-node3');
    const c = await t.connectTcp(rig.state.inetAddress, 80, { timeoutMs: 10_000 });
    c.stream.write('GET /honesty.html HTTP/1.0\r\nHost: files.test\r\nUser-Agent: Mozilla/5.0\r\nAccept: */*\r\n\r\n');
    const chunks: Buffer[] = [];
    for await (const chunk of c.stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString().split('\r\n\r\n')[1]).toBe(HONESTY_PAGE);
    await t.close();
    // The checks ask as a browser: the page shows the script; the text file, untouched, passes.
    const r = await check('rig-node3');
    expect(r.verdict, `inconclusive: ${r.inconclusive.join('; ')}`).toBe('http-tampering');
    expect(r.evidence).toEqual([
      expect.objectContaining({
        check: 'http',
        target: 'http://files.test/honesty.html',
        got: expect.stringMatching(/<script src=\\"http:\/\/ads\.injector\.test\/track\.js\\">/),
      }),
    ]);
  }, 60_000);

  it('a TLS interceptor with its own CA is tls-interception, naming the CA', async () => {
    const r = await check('rig-node4');
    expect(r.verdict).toBe('tls-interception');
    expect(r.evidence).toContainEqual(
      expect.objectContaining({
        check: 'tls',
        target: 'tls.rig.test:443',
        got: expect.stringMatching(/from Rig Interceptor CA/),
      }),
    );
  }, 60_000);

  it('a node that is simply down (its way out cut) is not flagged: unchecked, with why', async () => {
    const t = await sevpn('rig-node1');
    const restore = rig.cutExit('rig-node1');
    try {
      const c = options();
      const r = await checkNodeHonesty(
        t,
        t.dnsServers,
        { ...c.honesty, timeoutMs: 12_000 },
        {
          direct: null,
          doh: c.dohServers,
        },
      );
      expect(r.verdict).toBe('unchecked');
      expect(r.evidence).toEqual([]);
      expect(r.inconclusive.length).toBeGreaterThan(0);
    } finally {
      restore();
    }
  }, 60_000);

  it('a core flags them as they are used, keeps the verdicts, never selects a flagged node, and asks before a pick', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-honesty-'));
    const start = () =>
      startApp(
        rigAppConfig(rig, dir, {
          ...rigHonesty(rig),
          admin: '127.0.0.1:0',
          adminToken: TOKEN,
          tunnel: { protocols: ['sevpn'], sevpn: { hub: 'RIG' } },
        }),
        fileLogger(join(dir, 'log.jsonl')),
      );
    app = await start();
    const a = app;
    const api = (method: string, path: string, body?: object) =>
      apiRequest(a.listening.admin!.port, method, path, { token: TOKEN, ...(body ? { body } : {}) });
    const honestyOf = async (id: string): Promise<{ verdict: string; inconclusive: string[] }> =>
      (await api('GET', '/nodes'))
        .json<{ nodes: Array<{ id: string; honesty: { verdict: string; inconclusive: string[] } }> }>()
        .nodes.find((n) => n.id === id)!.honesty;
    const verdictOf = async (id: string): Promise<string> => (await honestyOf(id)).verdict;
    // The first tunnel is checked once it carries sessions.
    await eventually(() => a.controller?.active !== null && a.controller?.active !== undefined, 60_000, 'a tunnel');
    const first = a.controller!.active!.node.id;
    await until(
      async () => ((await verdictOf(first)) !== 'unchecked' ? true : undefined),
      60_000,
      async () => `a verdict on ${first} (inconclusive: ${(await honestyOf(first)).inconclusive.join('; ')})`,
    );
    // "Check now" on every node: a tunnel of its own for those not in use.
    for (const n of ['rig-node1', 'rig-node2', 'rig-node3', 'rig-node4']) {
      const r = await api('POST', `/nodes/${n}/check`);
      expect(r.status, r.text).toBe(200);
    }
    const verdicts = await api('GET', '/nodes');
    const byId = new Map(
      verdicts
        .json<{ nodes: Array<{ id: string; honesty: { verdict: string; evidence: unknown[] } }> }>()
        .nodes.map((n) => [n.id, n.honesty]),
    );
    expect(Object.fromEntries([...byId].map(([id, h]) => [id, h.verdict]))).toEqual({
      'rig-node1': 'honest',
      'rig-node2': 'dns-tampering',
      'rig-node3': 'http-tampering',
      'rig-node4': 'tls-interception',
    });
    expect(byId.get('rig-node3')!.evidence.length).toBeGreaterThan(0);
    const status = (await api('GET', '/status')).json<{ honesty: { honest: number; flagged: number } }>();
    expect(status.honesty).toMatchObject({ honest: 1, flagged: 3 });
    const metrics = (await api('GET', '/metrics')).text;
    expect(metrics).toMatch(/gatehop_nodes_by_honesty\{verdict="tls-interception"\} 1/);
    // The Clash API carries it too.
    const proxies = (await api('GET', '/proxies')).json<{ proxies: Record<string, { extra: unknown }> }>();
    expect(proxies.proxies['rig-node2']!.extra).toMatchObject({ honesty: { verdict: 'dns-tampering' } });
    // Never selected automatically: ranked out, and with the honest node gone, nothing is chosen.
    await a.selector!.rank(a.nodes!.nodes);
    expect(
      a
        .selector!.last!.excluded.filter((e) => e.reason === 'tampers')
        .map((e) => e.nodeId)
        .sort(),
    ).toEqual(['rig-node2', 'rig-node3', 'rig-node4']);
    // The core leaves every node it finds flagged on its own, the last of them perhaps only now:
    // once it has settled on the honest one, that node is cut off and a switch meets nothing else.
    await eventually(
      () => a.controller!.switching === null && a.controller!.active?.node.id === 'rig-node1',
      60_000,
      'the core settled on the honest node',
    );
    rig.blackhole('rig-node1');
    try {
      const record = await switchWhenFree(a, 'test: the honest node is gone');
      expect(['rig-node2', 'rig-node3', 'rig-node4']).not.toContain(record.to);
      expect(['rig-node2', 'rig-node3', 'rig-node4']).not.toContain(a.controller!.active?.node.id);
    } finally {
      rig.unblackhole('rig-node1');
    }
    // A manual pick of a flagged node asks first (the API refuses without confirm, and says why)…
    const refused = await api('POST', '/switch', { nodeId: 'rig-node3' });
    expect(refused.status).toBe(409);
    expect(refused.json()).toMatchObject({
      error: 'GH_ERR_NODE_FLAGGED',
      message: expect.stringMatching(/http-tampering/),
    });
    const dashboard = await api('PUT', '/proxies/GATEHOP', { name: 'rig-node3' });
    expect(dashboard.status).toBe(409);
    // …and with the user's confirmation it goes there, and stays (accepted).
    const ok = await api('POST', '/switch', { nodeId: 'rig-node3', confirm: true });
    expect(ok.status).toBe(202);
    await eventually(() => a.controller!.active?.node.id === 'rig-node3', 60_000, 'the confirmed pick');
    // Remembered across a restart.
    await a.stop();
    app = await start();
    const again = (await apiRequest(app.listening.admin!.port, 'GET', '/nodes', { token: TOKEN })).json<{
      nodes: Array<{ id: string; honesty: { verdict: string; accepted: boolean } }>;
    }>();
    expect(again.nodes.find((n) => n.id === 'rig-node4')!.honesty.verdict).toBe('tls-interception');
    expect(again.nodes.find((n) => n.id === 'rig-node3')!.honesty).toMatchObject({
      verdict: 'http-tampering',
      accepted: true,
    });
  }, 300_000);

  it('encrypted DNS in the tunnel: no DNS packet to the node’s resolver leaves the tunnel’s stack', async () => {
    const count = (t: TunnelEgress): (() => number) => {
      let dns = 0;
      const write = t.link.write.bind(t.link);
      t.link.write = (frame: Buffer) => {
        // An Ethernet frame (SE-VPN): IPv4, UDP, destination port 53.
        if (frame.readUInt16BE(12) === 0x0800 && frame[14 + 9] === 17) {
          const ihl = (frame[14]! & 0x0f) * 4;
          if (frame.readUInt16BE(14 + ihl + 2) === 53) dns++;
        }
        write(frame);
      };
      return () => dns;
    };
    const clear = await sevpn('rig-node1');
    const clearDns = count(clear);
    expect(await clear.resolve('files.test')).toEqual([rig.state.inetAddress]);
    expect(clearDns()).toBeGreaterThan(0); // the counter counts
    const encrypted = await sevpn('rig-node1', { doh: true });
    const encryptedDns = count(encrypted);
    expect(await encrypted.resolve('files.test')).toEqual([rig.state.inetAddress]);
    expect(await encrypted.resolve('www.rig.test')).toEqual([rig.state.inetAddress]);
    await expect(encrypted.resolve('nothing.nx.test')).rejects.toMatchObject({ code: 'GH_ERR_EGRESS_DNS_NOT_FOUND' });
    expect(await encrypted.measureDns()).toBeGreaterThan(0);
    expect(encryptedDns()).toBe(0);
    // Even the lying resolver of n2 is never asked.
    const honestAnswer = await sevpn('rig-node2', { doh: true });
    expect(await honestAnswer.resolve('files.test')).toEqual([rig.state.inetAddress]);
  }, 60_000);

  it('HTTPS only through volunteer nodes: plain HTTP through the tunnel gets a page that says why, HTTPS works, DIRECT is untouched', async () => {
    const local: Server = createServer((_req, res) => res.end('direct and plain\n'));
    await new Promise<void>((r) => local.listen(0, '127.0.0.1', () => r()));
    const localPort = (local.address() as AddressInfo).port;
    try {
      const dir = mkdtempSync(join(tmpdir(), 'gh-https-only-'));
      // The privacy settings as a config file has them, so the window's settings (PUT /settings) may change them.
      const fromFile = { privacy: { httpsOnly: true } };
      const fromFlags = rigAppInput(rig, dir, {
        ...rigHonesty(rig),
        honesty: { enabled: false },
        mode: 'rule',
        rules: ['IP-CIDR,127.0.0.0/8,DIRECT,no-resolve', 'MATCH,TUNNEL'],
        groups: { mode: 'manual', defaultNode: 'rig-node1' },
        tunnel: { protocols: ['sevpn'], sevpn: { hub: 'RIG' } },
        admin: '127.0.0.1:0',
        adminToken: TOKEN,
      });
      app = await startApp(buildConfig(fromFile, fromFlags), silentLogger(), { layers: { fromFile, fromFlags } });
      const a = app;
      await eventually(() => a.controller?.active?.node.id === 'rig-node1', 60_000, 'the tunnel');
      const port = a.listening.proxy.port;
      const ca = rig.state.publicRootFile;
      for (const how of [
        ['--socks5-hostname', `127.0.0.1:${port}`],
        ['-x', `http://127.0.0.1:${port}`],
      ]) {
        const plain = await curl(['-s', '-w', '\n%{http_code}', ...how, 'http://files.test/']);
        expect(plain.stdout.toString()).toMatch(/HTTPS only through volunteer nodes[\s\S]*403$/);
        // Any port: what matters is that it is plain HTTP (through a SOCKS5 or CONNECT tunnel too).
        const other = await curl(['-s', '-w', '\n%{http_code}', '-p', ...how, 'http://tls.rig.test:8080/']);
        expect(other.stdout.toString()).toMatch(/HTTPS only[\s\S]*403$/);
        const secure = await curl(['-s', '--cacert', ca, '-w', '\n%{http_code}', ...how, 'https://tls.rig.test/']);
        expect(secure.stdout.toString()).toMatch(/200$/);
        const direct = await curl(['-s', ...how, `http://127.0.0.1:${localPort}/`]);
        expect(direct.stdout.toString()).toBe('direct and plain\n');
      }
      expect(a.proxy.stats.httpsOnlyRefused).toBeGreaterThanOrEqual(4);
      // Encrypted DNS turned on now: the tunnel in use resolves as it was opened, and /status says
      // so rather than reporting it applied (#59); the next tunnel has it.
      const admin = a.listening.admin!.port;
      const privacy = async (): Promise<unknown> =>
        (await apiRequest(admin, 'GET', '/status', { token: TOKEN })).json<{ privacy: unknown }>().privacy;
      expect(await privacy()).toEqual({ encryptedDns: false, encryptedDnsNext: false, httpsOnly: true });
      const put = await apiRequest(admin, 'PUT', '/settings', {
        token: TOKEN,
        body: { privacy: { checkNodes: false, checkUrls: null, encryptedDns: true, httpsOnly: true } },
      });
      expect(put.status).toBe(200);
      expect(await privacy()).toEqual({ encryptedDns: false, encryptedDnsNext: true, httpsOnly: true });
      await switchWhenFree(a, 'the test: a new tunnel');
      expect(await privacy()).toEqual({ encryptedDns: true, encryptedDnsNext: true, httpsOnly: true });
    } finally {
      local.close();
    }
  }, 120_000);

  it('HTTPS only has no back door (#59): a GET written 1 s after CONNECT, another protocol, or silence is refused, and the node never sees a connect', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-https-only-late-'));
    app = await startApp(
      rigAppConfig(rig, dir, {
        ...rigHonesty(rig),
        honesty: { enabled: false },
        privacy: { httpsOnly: true },
        proxy: { handshakeTimeoutMs: 3_000 },
        groups: { mode: 'manual', defaultNode: 'rig-node1' },
        tunnel: { protocols: ['sevpn'], sevpn: { hub: 'RIG' } },
      }),
      silentLogger(),
    );
    const a = app;
    await eventually(() => a.controller?.active?.node.id === 'rig-node1', 60_000, 'the tunnel');
    const tunnel = a.manager!.active!;
    const { SocksClient } = await import('socks');
    /** A SOCKS5 CONNECT to files.test:80 whose first bytes come `afterMs` later (or never); all it got back, once closed. */
    const late = async (bytes: string | null, afterMs: number): Promise<string> => {
      const { socket } = await SocksClient.createConnection({
        proxy: { host: '127.0.0.1', port: a.listening.proxy.port, type: 5 },
        command: 'connect',
        destination: { host: 'files.test', port: 80 },
      });
      const got: Buffer[] = [];
      socket.on('data', (c: Buffer) => got.push(c));
      const closed = new Promise((r) => socket.once('close', r));
      socket.on('error', () => {});
      if (bytes !== null) setTimeout(() => socket.write(bytes), afterMs);
      await closed;
      return Buffer.concat(got).toString();
    };
    const sessionsBefore = tunnel.stats.sessionsTotal;
    const refusedBefore = a.proxy.stats.httpsOnlyRefused;
    // The old judge read for 300 ms, then let "no bytes yet" through unchecked.
    expect(await late('GET / HTTP/1.1\r\nHost: files.test\r\n\r\n', 1_000)).toMatch(/^HTTP\/1\.1 403[\s\S]*HTTPS only/);
    // A method outside the old list is plain HTTP too; a protocol that is not TLS gets nothing through.
    expect(await late('REPORT / HTTP/1.1\r\nHost: files.test\r\n\r\n', 0)).toMatch(/^HTTP\/1\.1 403/);
    expect(await late('SSH-2.0-OpenSSH_9.2\r\n', 1_000)).toBe('');
    expect(a.proxy.stats.httpsOnlyRefused - refusedBefore).toBe(3);
    // A client that never writes is closed at the handshake timeout (the session's own), never dialled.
    const handshakeTimeouts = a.proxy.stats.timeouts.handshake;
    expect(await late(null, 0)).toBe('');
    expect(a.proxy.stats.timeouts.handshake).toBe(handshakeTimeouts + 1);
    expect(tunnel.stats.sessionsTotal).toBe(sessionsBefore);
    // TLS goes through as before.
    const secure = await curl([
      '-s',
      '--cacert',
      rig.state.publicRootFile,
      '-w',
      '\n%{http_code}',
      '--socks5-hostname',
      `127.0.0.1:${a.listening.proxy.port}`,
      'https://tls.rig.test/',
    ]);
    expect(secure.stdout.toString()).toMatch(/200$/);
  }, 120_000);
});
