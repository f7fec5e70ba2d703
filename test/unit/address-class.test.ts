import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyAddress, isLocalName, refusedAddress } from '../../core/reach/index.js';

describe('address classes: where someone else may send Gatehop (#34)', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['203.0.113.7', 'public'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.128.0.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['169.254.169.254', 'link-local'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['fd00::5', 'private'],
    ['2001:db8::1', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['[::1]', 'loopback'],
  ])('%s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it('is null for what is not an address', () => {
    expect(classifyAddress('example.org')).toBeNull();
    expect(classifyAddress('999.1.1.1')).toBeNull();
  });

  it('refuses this machine, its link and many hosts always; the LAN only unless allowed', () => {
    for (const ip of ['127.0.0.1', '0.0.0.0', '169.254.1.1', '224.0.0.1', '255.255.255.255', '::1', 'fe80::2'])
      expect(refusedAddress(ip, true)).not.toBeNull();
    expect(refusedAddress('192.168.0.10', false)).toBe('private');
    expect(refusedAddress('192.168.0.10', true)).toBeNull();
    expect(refusedAddress('219.100.37.1', false)).toBeNull();
  });

  it('knows the names that always mean this machine', () => {
    expect(isLocalName('localhost')).toBe(true);
    expect(isLocalName('LOCALHOST.')).toBe(true);
    expect(isLocalName('router.localhost')).toBe(true);
    expect(isLocalName('localhost.example.org')).toBe(false);
  });

  it('never throws on what a list may hold, and classes every IP address (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 60 }), fc.ipV4(), fc.ipV6(), fc.ipV4Extended()), (s) => {
        const c = classifyAddress(s);
        if (c === null) return;
        expect([
          'public',
          'private',
          'loopback',
          'unspecified',
          'link-local',
          'multicast',
          'broadcast',
          'reserved',
        ]).toContain(c);
      }),
    );
  });
});
