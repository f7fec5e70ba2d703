/**
 * The leak test's readings (#64): the resolver an echo service names (ip-api's EDNS echo JSON, a
 * plain `ip`, or text), this computer's IPv6 way out from its addresses and the kernel's IPv6
 * routes, a browser's ICE candidate lines, and the findings in plain words: WebRTC showing an
 * address that is not the node's is a leak whatever the system proxy, the node's own is not.
 */
import { describe, expect, it } from 'vitest';
import { ipv6Facts, parseResolver } from '../../core/app/leak-test.js';
import type { LeakReport } from '../../core/api/index.js';
import { translate } from '../../core/api/catalog/index.js';
import { leakFindings } from '../../renderer/src/leak-findings.js';
import { parseCandidate } from '../../renderer/src/webrtc-check.js';

const t = (key: string, vars?: Record<string, unknown>) => translate('en', key, vars as Record<string, string>);

describe('the leak test', () => {
  it('reads the resolver an echo names: JSON dns.ip, ip or resolver, or the first address in text', () => {
    expect(parseResolver('{"dns":{"geo":"NL - Example","ip":"198.51.100.53"},"edns":{}}')).toBe('198.51.100.53');
    expect(parseResolver('{"ip":"2001:db8::53"}')).toBe('2001:db8::53');
    expect(parseResolver('resolver: 203.0.113.9\n')).toBe('203.0.113.9');
    expect(parseResolver('{"dns":{"ip":"not an address"}}')).toBeNull();
    expect(parseResolver('<html>nothing</html>')).toBeNull();
  });

  it("tells an IPv6 way out from a global address and the kernel's ::/0 route (lo's unreachable one is not one)", () => {
    const snap = { addresses: ['eth0 192.0.2.4', 'eth0 fe80::1', 'eth0 2001:db8::4'], defaultRoute: true };
    const v6default =
      '00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003     eth0\n';
    const loOnly =
      '00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n';
    expect(ipv6Facts(snap, v6default)).toEqual({ address: '2001:db8::4', defaultRoute: true });
    expect(ipv6Facts(snap, loOnly)).toEqual({ address: '2001:db8::4', defaultRoute: false });
    expect(
      ipv6Facts({ ...snap, addresses: ['eth0 192.0.2.4', 'eth0 fe80::1', 'eth0 fd00::4'] }, v6default).address,
    ).toBeNull();
    expect(ipv6Facts(snap, null)).toEqual({ address: '2001:db8::4', defaultRoute: null });
  });

  it('reads ICE candidate lines: host, mDNS-hidden host and server-reflexive', () => {
    expect(
      parseCandidate(
        'candidate:842163049 1 udp 1677729535 203.0.113.7 46154 typ srflx raddr 0.0.0.0 rport 0 generation 0',
      ),
    ).toEqual({ address: '203.0.113.7', type: 'srflx' });
    expect(
      parseCandidate('a=candidate:1 1 udp 2122260223 3f1c2a9e-0d1b-4c2e-9a51-6d0f2b1e7c44.local 54321 typ host'),
    ).toEqual({ address: '3f1c2a9e-0d1b-4c2e-9a51-6d0f2b1e7c44.local', type: 'host' });
    expect(parseCandidate('not a candidate')).toBeNull();
  });

  const report = (over: Partial<LeakReport> = {}): LeakReport => ({
    at: 1,
    nodeId: 'vpn1',
    exit: { url: 'http://ip-api.com/json', address: '198.51.100.7', country: 'JP', error: null },
    resolver: { url: 'http://{nonce}.edns.ip-api.com/json', address: '198.51.100.53', encrypted: false, error: null },
    ipv6: { address: null, defaultRoute: true },
    systemProxy: true,
    stunUrl: 'stun:stun.example:3478',
    ...over,
  });

  it('calls WebRTC showing another address than the node’s a leak with the system proxy on, and the node’s own not', () => {
    const leak = leakFindings(
      report(),
      { supported: true, local: ['192.168.1.5'], hidden: false, public: ['203.0.113.7'] },
      t,
    );
    const w = leak.find((f) => f.part === 'webrtc')!;
    expect(w.verdict).toBe('warn');
    expect(w.text).toContain('your own address 203.0.113.7');
    expect(w.text).toContain('with it (on now)');
    expect(w.text).toContain('your local address: 192.168.1.5');
    const through = leakFindings(report(), { supported: true, local: [], hidden: true, public: ['198.51.100.7'] }, t);
    expect(through.find((f) => f.part === 'webrtc')!.verdict).toBe('ok');
    expect(
      leakFindings(report({ stunUrl: null }), { supported: true, local: [], hidden: false, public: [] }, t).find(
        (f) => f.part === 'webrtc',
      )!.verdict,
    ).toBe('off');
  });

  it('says what the exit, the resolver and IPv6 mean, and what was not tested', () => {
    const f = leakFindings(
      report({
        exit: { url: null, address: null, country: null, error: 'no tunnel is up: connect to a node first' },
        resolver: { url: null, address: null, encrypted: false, error: null },
        ipv6: { address: '2001:db8::4', defaultRoute: true },
      }),
      { supported: false, local: [], hidden: false, public: [] },
      t,
    );
    expect(f.map((x) => [x.part, x.verdict])).toEqual([
      ['exit', 'off'],
      ['resolver', 'off'],
      ['ipv6', 'warn'],
      ['webrtc', 'off'],
    ]);
    expect(f[0]!.text).toContain('connect to a node first');
    expect(f[2]!.text).toContain('its tunnels carry IPv4 only');
    const ok = leakFindings(
      report({ resolver: { url: 'x', address: '1.1.1.1', encrypted: true, error: null } }),
      { supported: true, local: [], hidden: false, public: [] },
      t,
    );
    expect(ok[0]!.text).toBe('Sites see 198.51.100.7 (Japan): the node’s address, not yours.');
    expect(ok[1]).toMatchObject({ verdict: 'ok' });
    expect(ok[2]).toMatchObject({ verdict: 'ok' });
  });
});
