import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bareAddress, compressIpv6, ipv6Groups } from '../../core/reach/index.js';

describe('one IPv6 expander for address classes, CIDR sets and the SOCKS5 wire (#47)', () => {
  it.each([
    ['::', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['::1', [0, 0, 0, 0, 0, 0, 0, 1]],
    ['2001:db8::', [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0]],
    ['::ffff:1.2.3.4', [0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]],
    ['64:ff9b::1.2.3.4', [0x64, 0xff9b, 0, 0, 0, 0, 0x102, 0x304]],
    ['FE80:0:0:0:0:0:0:1', [0xfe80, 0, 0, 0, 0, 0, 0, 1]],
  ])('%s', (ip, groups) => {
    expect(ipv6Groups(ip)).toEqual(groups);
  });

  it.each(['1.2.3.4', '1::2::3', '1:2:3:4:5:6:7:8:9', '1:2:3:4::5:6:7:8', 'g::1', '::1.2.3.400', '12345::', ''])(
    '%s is not one',
    (ip) => {
      expect(ipv6Groups(ip)).toBeNull();
    },
  );

  it('reads back every text form of eight groups (property), as Node agrees it is an address', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (groups) => {
        const full = groups.map((g) => g.toString(16)).join(':');
        const short = compressIpv6(groups.map((g) => g.toString(16)));
        for (const text of [full, short]) {
          expect(isIP(text)).toBe(6);
          expect(ipv6Groups(text)).toEqual(groups);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('bareAddress strips brackets and a zone', () => {
    expect(bareAddress('[fe80::1%eth0]')).toBe('fe80::1');
    expect(bareAddress('10.0.0.1')).toBe('10.0.0.1');
  });
});
