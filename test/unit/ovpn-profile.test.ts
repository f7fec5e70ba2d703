import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../core/common/index.js';
import { profileCertificateProblem as checkServerCertificate } from '../../core/reach/index.js';
import { parseProfile } from '../../core/ovpn/index.js';
import { vpnGateProfile } from '../helpers/vpngate-fixtures.js';

describe('.ovpn profile parsing', () => {
  it('reads a VPN Gate profile (CRLF): remote, proto, cipher, auth, inline ca/cert/key', () => {
    const p = parseProfile(vpnGateProfile('203.0.113.7', 995, 'tcp'));
    expect(p.remotes).toEqual([{ host: '203.0.113.7', port: 995, proto: 'tcp' }]);
    expect(p.cipher).toBe('AES-128-CBC');
    expect(p.auth).toBe('SHA1');
    expect(p.ca).toMatch(/BEGIN CERTIFICATE/);
    expect(p.cert).toMatch(/MIIdummy/);
    expect(p.key).toMatch(/PRIVATE KEY/);
    expect(p.authUserPass).toBe(false);
    expect(p.warnings).toEqual([]);
  });

  it('reads a stock OpenVPN 2.6 profile: data-ciphers, tls-auth with key-direction, keepalive, reneg-sec, compress', () => {
    const p = parseProfile(
      [
        'client',
        'dev tun',
        'proto udp',
        'port 1195',
        'remote vpn.example.test',
        'remote 198.51.100.2 443 tcp-client',
        'data-ciphers AES-256-GCM:chacha20-poly1305',
        'data-ciphers-fallback AES-128-CBC',
        'keepalive 10 60',
        'reneg-sec 20',
        'remote-cert-tls server',
        'verify-x509-name server_abc name',
        'compress stub-v2',
        'tun-mtu 1400',
        'auth-user-pass',
        'key-direction 1',
        '<tls-auth>',
        'KEY',
        '</tls-auth>',
        '<ca>',
        'CA',
        '</ca>',
      ].join('\n'),
    );
    expect(p.remotes).toEqual([
      { host: 'vpn.example.test', port: 1195, proto: 'udp' },
      { host: '198.51.100.2', port: 443, proto: 'tcp' },
    ]);
    expect(p.dataCiphers).toEqual(['AES-256-GCM', 'CHACHA20-POLY1305']);
    expect(p.dataCiphersFallback).toBe('AES-128-CBC');
    expect([p.pingS, p.pingRestartS, p.renegSec, p.tunMtu]).toEqual([10, 60, 20, 1400]);
    expect(p.tlsAuth).toBe('KEY\n');
    expect(p.keyDirection).toBe(1);
    expect(p.remoteCertTls).toBe('server');
    expect(p.verifyX509Name).toEqual({ name: 'server_abc', type: 'name' });
    expect(p.compression).toBe('compress stub-v2');
    expect(p.authUserPass).toBe(true);
  });

  it('drops directives that would run code or touch the host, with a warning each', () => {
    const p = parseProfile(
      [
        vpnGateProfile('203.0.113.7', 443, 'udp'),
        'script-security 2',
        'up /tmp/evil.sh',
        'management 127.0.0.1 7505',
        'dev-node /dev/x',
      ].join('\r\n'),
    );
    expect(p.warnings.filter((w) => /dropped/.test(w))).toHaveLength(4);
  });

  it('reports unknown directives without failing, and fails on ones that change the wire protocol', () => {
    expect(parseProfile(`${vpnGateProfile('203.0.113.7', 443, 'udp')}\r\nfrobnicate yes`).warnings).toEqual([
      expect.stringMatching(/unknown directive "frobnicate"/),
    ]);
    expect(() => parseProfile(`${vpnGateProfile('203.0.113.7', 443, 'udp')}\r\ntls-crypt-v2 key`)).toThrow(
      /tls-crypt-v2/,
    );
    expect(() => parseProfile('dev tap\nremote 1.2.3.4 1194')).toThrow(/dev tun/);
  });

  it('checks remote-cert-tls and verify-x509-name against the server certificate', () => {
    const cert = {
      subject: { C: 'JP', CN: 'public-vpn-7' },
      ext_key_usage: ['1.3.6.1.5.5.7.3.1'],
    } as unknown as import('node:tls').PeerCertificate;
    const noEku = { subject: { CN: 'x' } } as unknown as import('node:tls').PeerCertificate;
    expect(checkServerCertificate(cert, { remoteCertTls: 'server', verifyX509Name: null })).toBeNull();
    expect(checkServerCertificate(noEku, { remoteCertTls: 'server', verifyX509Name: null })).toMatch(
      /Server Authentication/,
    );
    expect(
      checkServerCertificate(cert, { remoteCertTls: null, verifyX509Name: { name: 'public-vpn-7', type: 'name' } }),
    ).toBeNull();
    expect(
      checkServerCertificate(cert, {
        remoteCertTls: null,
        verifyX509Name: { name: 'public-vpn', type: 'name-prefix' },
      }),
    ).toBeNull();
    expect(
      checkServerCertificate(cert, {
        remoteCertTls: null,
        verifyX509Name: { name: 'C=JP, CN=public-vpn-7', type: 'subject' },
      }),
    ).toBeNull();
    expect(
      checkServerCertificate(cert, { remoteCertTls: null, verifyX509Name: { name: 'other', type: 'name' } }),
    ).toMatch(/"public-vpn-7"/);
    expect(() => parseProfile('remote 1.2.3.4\nverify-x509-name x bogus')).toThrow(/subject, name or name-prefix/);
  });

  it('names what is wrong: no remote, bad port, unclosed block', () => {
    expect(() => parseProfile('dev tun\nproto udp')).toThrow(
      expect.objectContaining({ code: ErrorCodes.PROFILE_INVALID, message: expect.stringMatching(/no "remote"/) }),
    );
    expect(() => parseProfile('remote 1.2.3.4 99999')).toThrow(/line 1: bad port/);
    expect(() => parseProfile('remote 1.2.3.4\n<ca>\nabc')).toThrow(/never closed/);
  });
});
