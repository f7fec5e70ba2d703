import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, GatehopError } from '../../core/common/index.js';
import { refusedAddress } from '../../core/reach/index.js';
import { parseVpnGateCsv } from '../../core/vpngate/index.js';
import { vpnGateCsv, vpnGateProfile } from '../helpers/vpngate-fixtures.js';

describe('VPN Gate CSV parsing', () => {
  const rows = [
    { host: 'public-vpn-1', ip: '203.0.113.1', score: 3003937, ping: 9, speed: 130714477, uptime: 9950160290 },
    {
      host: 'vpn118756292',
      ip: '203.0.113.2',
      ping: '',
      operator: '"Daiyuu Nobori, Japan. Academic Use Only."',
      profile: vpnGateProfile('203.0.113.2', 1194, 'udp'),
    },
  ];

  it.each([
    ['CRLF', '\r\n'],
    ['LF', '\n'],
  ])('reads banner, header and rows with %s, looking columns up by name, with units', (_n, eol) => {
    const { nodes, skipped } = parseVpnGateCsv(vpnGateCsv(rows, { eol }));
    expect(skipped).toEqual({});
    expect(nodes).toHaveLength(2);
    expect(nodes[0]).toMatchObject({
      id: 'public-vpn-1',
      ip: '203.0.113.1',
      port: 443,
      proto: 'tcp',
      score: 3003937,
      pingMs: 9,
      speedBps: 130714477,
      uptimeMs: 9950160290,
      countryShort: 'JP',
    });
    expect(nodes[1]).toMatchObject({
      id: 'vpn118756292',
      pingMs: null,
      proto: 'udp',
      port: 1194,
      operator: 'Daiyuu Nobori, Japan. Academic Use Only.',
    });
  });

  it('skips bad rows with a counted reason and keeps the good ones', () => {
    const text = vpnGateCsv([
      ...rows,
      { host: 'bad-ip', ip: '999.1.1.1' },
      { host: 'bad-b64', ip: '203.0.113.3', base64: '!!!not base64!!!' },
      { host: 'no-remote', ip: '203.0.113.4', profile: 'dev tun\r\nproto tcp\r\n<ca>\r\nx\r\n</ca>\r\n' },
      { host: 'public-vpn-1', ip: '203.0.113.1' },
    ]);
    const { nodes, skipped } = parseVpnGateCsv(text);
    expect(nodes.map((n) => n.id)).toEqual(['public-vpn-1', 'vpn118756292']);
    expect(skipped).toEqual({ 'bad-ip': 1, 'bad-base64': 1, 'bad-profile': 1, duplicate: 1 });
  });

  it('one address per node: a row whose profile dials another IP is skipped; a named remote is dialled at the row IP (#34)', () => {
    const { nodes, skipped } = parseVpnGateCsv(
      vpnGateCsv([
        { host: 'aims-home', ip: '203.0.113.9', profile: vpnGateProfile('127.0.0.1', 22, 'tcp') },
        { host: 'aims-router', ip: '203.0.113.10', profile: vpnGateProfile('192.168.1.1', 80, 'tcp') },
        { host: 'named', ip: '203.0.113.11', profile: vpnGateProfile('vpn.example.org', 443, 'tcp') },
      ]),
    );
    expect(skipped).toEqual({ 'remote-mismatch': 2 });
    expect(nodes.map((n) => [n.id, n.ip, n.port])).toEqual([['named', '203.0.113.11', 443]]);
  });

  it('never takes a row aimed at this machine, its link or many hosts; the LAN only where the policy allows (#34)', () => {
    const text = vpnGateCsv([
      { host: 'lo', ip: '127.0.0.1' },
      { host: 'any', ip: '0.0.0.0' },
      { host: 'metadata', ip: '169.254.169.254' },
      { host: 'mdns', ip: '224.0.0.251' },
      { host: 'bcast', ip: '255.255.255.255' },
      { host: 'router', ip: '192.168.1.1' },
      { host: 'cgnat', ip: '100.64.1.1' },
      { host: 'ok', ip: '203.0.113.1' },
    ]);
    const strict = parseVpnGateCsv(text);
    expect(strict.nodes.map((n) => n.id)).toEqual(['ok']);
    expect(strict.skipped).toEqual({
      'loopback-address': 1,
      'unspecified-address': 1,
      'link-local-address': 1,
      'multicast-address': 1,
      'broadcast-address': 1,
      'private-address': 2,
    });
    const lan = parseVpnGateCsv(text, { addressPolicy: (ip) => refusedAddress(ip, true) });
    expect(lan.nodes.map((n) => n.id)).toEqual(['router', 'cgnat', 'ok']);
  });

  it('refuses an HTML page, an empty body and a truncated list', () => {
    expect(() => parseVpnGateCsv('<html><body>wait</body></html>')).toThrow(/HTML/);
    expect(() => parseVpnGateCsv('   ')).toThrow(/empty/);
    expect(() => parseVpnGateCsv(vpnGateCsv(rows, { final: false }))).toThrow(/truncated/);
    const full = vpnGateCsv(rows);
    expect(() => parseVpnGateCsv(full.slice(0, full.length / 2))).toThrow(
      expect.objectContaining({ code: ErrorCodes.LIST_INVALID }),
    );
  });

  it('reads a 1 MB+ response', () => {
    // Real profiles carry a long comment header and a full CA: about 7 KB of base64 each.
    const padding = Array.from({ length: 70 }, (_, i) => `# ${'comment line of a real profile header '.repeat(2)}${i}`);
    const many = Array.from({ length: 200 }, (_, i) => {
      const ip = `198.51.${i >> 8}.${i & 0xff}`;
      return { host: `vpn${i}`, ip, profile: vpnGateProfile(ip, 443, 'tcp', padding) };
    });
    const text = vpnGateCsv(many);
    expect(text.length).toBeGreaterThan(1_000_000);
    expect(parseVpnGateCsv(text).nodes).toHaveLength(200);
  });

  it('random rows never throw past the row boundary (property)', () => {
    const field = fc.string({ maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, ' '));
    fc.assert(
      fc.property(fc.array(fc.array(field, { minLength: 0, maxLength: 18 }), { maxLength: 20 }), (garbage) => {
        const text = vpnGateCsv(rows).replace(/\*\r\n$/, `${garbage.map((r) => r.join(',')).join('\r\n')}\r\n*\r\n`);
        try {
          const r = parseVpnGateCsv(text);
          expect(r.nodes.length).toBeGreaterThanOrEqual(0);
        } catch (err) {
          // Only the whole-list verdicts may escape (e.g. CSV quoting broken by a stray quote).
          expect(err).toBeInstanceOf(GatehopError);
          expect((err as GatehopError).code).toBe(ErrorCodes.LIST_INVALID);
        }
      }),
      { numRuns: 500 },
    );
  });
});
