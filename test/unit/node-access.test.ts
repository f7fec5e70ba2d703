import { describe, expect, it } from 'vitest';
import { buildConfig, type GatehopConfig } from '../../core/app/index.js';
import { protocolOptionsOf } from '../../core/app/config.js';
import { NodeAccess } from '../../core/app/node-access.js';
import { silentLogger } from '../../core/common/index.js';
import { ProtocolChoice, type ProtocolLesson } from '../../core/groups/index.js';
import { Store } from '../../core/store/index.js';
import type { Ranking } from '../../core/selector/index.js';
import { parseVpnGateCsv, staticNodeFromFile, type VpnGateNode } from '../../core/vpngate/index.js';
import { testRootCa } from '../helpers/pki.js';
import { rootCertificates } from 'node:tls';
import { vpnGateCsv, vpnGateProfile } from '../helpers/vpngate-fixtures.js';
import { eventually } from '../helpers/fds.js';
import { createSocket } from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const store = { setting: () => null, setSetting: () => undefined } as unknown as Store;

/** The real protocol ladder on network "here", taught `lesson` there before (or nothing). */
function ladderOf(config: GatehopConfig, lesson: ProtocolLesson | null = null): ProtocolChoice {
  const ladder = new ProtocolChoice(
    protocolOptionsOf(config),
    { load: () => lesson, save: () => undefined },
    silentLogger(),
  );
  ladder.setNetwork('here');
  return ladder;
}

describe('one address per node: the tunnel dials what the probes probe (#34)', () => {
  const [node] = parseVpnGateCsv(
    vpnGateCsv([{ host: 'public-vpn-1', ip: '203.0.113.1', profile: vpnGateProfile('vpn.example.org', 443, 'tcp') }]),
  ).nodes;

  it('dials a listed node at its row address, whatever name its profile gives', () => {
    const access = new NodeAccess(() => buildConfig({}, {}), store, silentLogger(), ladderOf(buildConfig({}, {})));
    expect(access.hostOf(node!)).toBe('203.0.113.1');
    // …and its certificate is judged under its DDNS name (#43), never the address dialled; a row
    // parsed from a list with nothing to vouch for it (fetched in clear) carries that too (#59).
    expect(access.openVpnSpec(node!)).toEqual({
      remoteHost: '203.0.113.1',
      trust: { serverName: 'public-vpn-1.opengw.net', profileCaInClear: true },
    });
    expect(access.openVpnSpec({ ...node!, caVouchedBy: 'https' })).toEqual({
      remoteHost: '203.0.113.1',
      trust: { serverName: 'public-vpn-1.opengw.net' },
    });
  });

  it('dials its DDNS name with connectBy: hostname, for the probe and the tunnel alike', () => {
    const access = new NodeAccess(
      () => buildConfig({ vpngate: { connectBy: 'hostname' } }, {}),
      store,
      silentLogger(),
      ladderOf(buildConfig({ vpngate: { connectBy: 'hostname' } }, {})),
    );
    expect(access.openVpnSpec({ ...node!, caVouchedBy: 'file' })).toEqual({
      remoteHost: access.hostOf(node!),
      trust: { serverName: 'public-vpn-1.opengw.net' },
    });
    expect(access.hostOf(node!)).toBe('public-vpn-1.opengw.net');
  });

  it('trusts the user’s own profile as it is (no name: OpenVPN’s own rule)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-access-'));
    writeFileSync(join(dir, 'mine.ovpn'), vpnGateProfile('192.168.1.5', 1194, 'udp'));
    const mine = staticNodeFromFile(join(dir, 'mine.ovpn'));
    const access = new NodeAccess(() => buildConfig({}, {}), store, silentLogger(), ladderOf(buildConfig({}, {})));
    expect(access.openVpnSpec(mine)).toEqual({ trust: { serverName: null } });
    expect(access.hostOf(mine)).toBe('192.168.1.5');
  });

  it('checks the user’s own profile the same on every protocol: its verify-x509-name for SE-VPN too, a DDNS remote as the node’s name (#59)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-access-'));
    writeFileSync(
      join(dir, 'named.ovpn'),
      vpnGateProfile('192.168.1.5', 1194, 'udp', ['verify-x509-name server.example name', 'remote-cert-tls server']),
    );
    writeFileSync(join(dir, 'ddns.ovpn'), vpnGateProfile('vpn123.opengw.net', 443, 'tcp'));
    const named = staticNodeFromFile(join(dir, 'named.ovpn'));
    const ddns = staticNodeFromFile(join(dir, 'ddns.ovpn'));
    const config = buildConfig({}, {});
    const access = new NodeAccess(() => config, store, silentLogger(), ladderOf(config));
    const checks = { remoteCertTls: 'server', verifyX509Name: { name: 'server.example', type: 'name' } };
    expect(access.sevpnSpec(named).trust).toMatchObject({ serverName: null, profileChecks: checks });
    expect(access.trustOf(ddns).serverName).toBe('vpn123.opengw.net');
    expect(access.sevpnSpec(ddns).trust.serverName).toBe('vpn123.opengw.net');
    expect(access.openVpnSpec(ddns).trust).toEqual({ serverName: 'vpn123.opengw.net' });
  });
});

describe("a node's own protocol order (tunnel.nodeProtocols, #35)", () => {
  it('offers that node only its own protocols, in its own order; other nodes keep the configured ones', () => {
    const [a, b] = parseVpnGateCsv(
      vpnGateCsv([
        { host: 'public-vpn-1', ip: '203.0.113.1', profile: vpnGateProfile('203.0.113.1', 443, 'tcp') },
        { host: 'public-vpn-2', ip: '203.0.113.2', profile: vpnGateProfile('203.0.113.2', 443, 'tcp') },
      ]),
    ).nodes;
    const config = buildConfig({ tunnel: { nodeProtocols: { 'public-vpn-1': ['sstp', 'sevpn'] } } }, {});
    const access = new NodeAccess(() => config, store, silentLogger(), ladderOf(config));
    expect(access.offered(a!)).toEqual(['sstp', 'sevpn']);
    expect(access.offered(b!)).toEqual(['openvpn', 'sevpn', 'sstp']);
    expect(() => buildConfig({ tunnel: { nodeProtocols: { 'public-vpn-1': ['sstp', 'sstp'] } } }, {})).toThrow(
      /at most once/,
    );
  });
});

describe('probes where this network blocks OpenVPN (#35, #58)', () => {
  it('sends no OpenVPN packet once OpenVPN is known blocked here: the node is probed on its TLS port alone, once for SSTP and SE-VPN', async () => {
    // A node on loopback: its OpenVPN UDP port a socket that counts what arrives, its TLS port a listener.
    const udp = createSocket('udp4');
    let openVpnPackets = 0;
    udp.on('message', () => openVpnPackets++);
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
    let handshakes = 0;
    const tls = createServer((s) => {
      handshakes++;
      s.destroy();
    });
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', () => r()));
    try {
      // Parsed as a public node (the parser refuses rows aimed at this machine), then pointed here.
      const [listed] = parseVpnGateCsv(
        vpnGateCsv([
          {
            host: 'public-vpn-9',
            ip: '203.0.113.9',
            profile: vpnGateProfile('203.0.113.9', udp.address().port, 'udp'),
          },
        ]),
      ).nodes;
      const node = { ...listed!, ip: '127.0.0.1' };
      const config = buildConfig(
        { tunnel: { protocols: ['openvpn', 'sevpn', 'sstp'], sstp: { port: (tls.address() as AddressInfo).port } } },
        {},
      );
      const access = new NodeAccess(() => config, store, silentLogger(), ladderOf(config));
      // Nothing learnt: OpenVPN's hard reset goes first (the server here never answers it), then one TCP handshake.
      expect((await access.prober(node, { samples: 1, timeoutMs: 300 })).rttMs).not.toBeNull();
      await eventually(() => openVpnPackets >= 1, 2_000, 'the OpenVPN probe arrived');
      expect(handshakes).toBe(1);
      // A start on a network that taught "OpenVPN blocked, SE-VPN works" (#58): the ladder is
      // loaded before the first probe, and no OpenVPN packet is sent from that first probe on.
      const lesson: ProtocolLesson = { preferred: 'sevpn', blocked: 'openvpn', reason: 'taught', at: Date.now() };
      const taught = new NodeAccess(() => config, store, silentLogger(), ladderOf(config, lesson));
      const before = openVpnPackets;
      expect((await taught.prober(node, { samples: 2, timeoutMs: 300 })).rttMs).not.toBeNull();
      expect(handshakes).toBe(3);
      // Even when the TLS port does not answer, OpenVPN is not tried as a fallback.
      tls.close();
      expect((await taught.prober(node, { samples: 1, timeoutMs: 300 })).rttMs).toBeNull();
      await new Promise((r) => setTimeout(r, 100)); // a datagram sent would have arrived on loopback by now
      expect(openVpnPackets).toBe(before);
      // The user's own order for this node puts OpenVPN back: they asked for it there, so it is probed.
      const own = buildConfig(
        {
          tunnel: {
            protocols: ['openvpn', 'sevpn', 'sstp'],
            nodeProtocols: { [node.id]: ['openvpn'] },
            sstp: { port: (tls.address() as AddressInfo | null)?.port ?? 1 },
          },
        },
        {},
      );
      const mine = new NodeAccess(() => own, store, silentLogger(), ladderOf(own, lesson));
      expect(mine.offered(node)).toEqual(['openvpn']);
      await mine.prober(node, { samples: 1, timeoutMs: 300 });
      await eventually(() => openVpnPackets > before, 2_000, 'the OpenVPN probe the user asked for arrived');
    } finally {
      udp.close();
      tls.close();
    }
  });
});

describe('the path ladder (upstream.nodes: fallback, #35)', () => {
  it('direct first; the upstream once a ranking reached no node directly; remembered per network in the real store once a ranking on it reaches nodes', () => {
    const [node] = parseVpnGateCsv(
      vpnGateCsv([{ host: 'public-vpn-1', ip: '203.0.113.1', profile: vpnGateProfile('203.0.113.1', 443, 'tcp') }]),
    ).nodes;
    const real = new Store({ path: ':memory:', logger: silentLogger() });
    const config = buildConfig({ upstream: { url: 'socks5://127.0.0.1:1', nodes: 'fallback' } }, {});
    const ranking = (ranked: boolean, reason: 'unreachable' | 'backoff' = 'unreachable') =>
      ({
        ranked: ranked ? [{ node: node!, score: 1 }] : [],
        excluded: ranked ? [] : [{ nodeId: node!.id, reason }],
        at: 0,
      }) as unknown as Ranking;
    const access = new NodeAccess(() => config, real, silentLogger(), ladderOf(config));
    access.setNetwork('home');
    expect(access.path).toBe('direct');
    expect(access.openVpnSpec(node!).upstreamUrl).toBeUndefined();
    // Backed-off nodes say nothing about the path; no node answering directly does.
    access.observe(ranking(false, 'backoff'), [node!]);
    expect(access.path).toBe('direct');
    access.observe(ranking(false), [node!]);
    expect(access.path).toBe('upstream');
    expect(access.openVpnSpec(node!).upstreamUrl).toBe('socks5://127.0.0.1:1');
    expect(access.sevpnSpec(node!).upstreamUrl).toBe('socks5://127.0.0.1:1');
    expect(real.setting('node-path home')).toBeNull(); // not yet: nothing reached through it so far
    access.observe(ranking(true), [node!]);
    expect(real.setting('node-path home')).toBe('upstream');
    // A restart on this network starts through the upstream; another network starts direct.
    const next = new NodeAccess(() => config, real, silentLogger(), ladderOf(config));
    next.setNetwork('home');
    expect(next.path).toBe('upstream');
    next.setNetwork('cafe');
    expect(next.path).toBe('direct');
    // The upstream reaching none either: back to direct for the next ranking.
    next.setNetwork('home');
    next.observe(ranking(false), [node!]);
    expect(next.path).toBe('direct');
    // upstream.nodes true or false: no ladder.
    const upstreamAlways = buildConfig({ upstream: { url: 'socks5://127.0.0.1:1' } }, {});
    const always = new NodeAccess(() => upstreamAlways, real, silentLogger(), ladderOf(upstreamAlways));
    expect(always.path).toBeNull();
    expect(always.openVpnSpec(node!).upstreamUrl).toBe('socks5://127.0.0.1:1');
    real.close();
  });
});

describe('a private CA that only a list in clear names is not ranked (#59)', () => {
  const privateCa = testRootCa('Some Node Self-Signed');
  const withCa = (pem: string): string =>
    vpnGateProfile('203.0.113.9', 443, 'tcp').replace(/<ca>[\s\S]*<\/ca>/, `<ca>\n${pem.trim()}\n</ca>`);
  const row = (host: string, pem: string): VpnGateNode =>
    parseVpnGateCsv(vpnGateCsv([{ host, ip: '203.0.113.9', profile: withCa(pem) }])).nodes[0]!;
  const access = new NodeAccess(() => buildConfig({}, {}), store, silentLogger(), ladderOf(buildConfig({}, {})));

  it('left out as ca-in-clear when nothing vouches for its private <ca>; ranked once HTTPS or the user’s file does', () => {
    const n = row('self-signed-1', privateCa.cert);
    expect(access.untrusted(n)).toBe('ca-in-clear');
    expect(access.trustOf(n).profileCaInClear).toBe(true);
    expect(access.untrusted({ ...n, caVouchedBy: 'https' })).toBeNull();
    expect(access.untrusted({ ...n, caVouchedBy: 'file' })).toBeNull();
    expect(access.trustOf({ ...n, caVouchedBy: 'https' }).profileCaInClear).toBeUndefined();
  });

  it('a public root in <ca> (VPN Gate’s ISRG Root X1) is ranked from any list: the DDNS name check holds it', () => {
    expect(access.untrusted(row('public-vpn-2', rootCertificates[0]!))).toBeNull();
  });

  it('a CA the user trusts (tunnel.nodeCa) is theirs to vouch for: the node is ranked and judged under its name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-nodeca-'));
    writeFileSync(join(dir, 'ca.pem'), privateCa.cert);
    const trusting = new NodeAccess(
      () => buildConfig({ tunnel: { nodeCa: join(dir, 'ca.pem') } }, {}),
      store,
      silentLogger(),
      ladderOf(buildConfig({}, {})),
    );
    expect(trusting.untrusted(row('self-signed-1', privateCa.cert))).toBeNull();
  });

  it('the user’s own profile is theirs: never left out for this', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-own-'));
    writeFileSync(join(dir, 'own.ovpn'), withCa(privateCa.cert));
    expect(access.untrusted(staticNodeFromFile(join(dir, 'own.ovpn')))).toBeNull();
  });
});
