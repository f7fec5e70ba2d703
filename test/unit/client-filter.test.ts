import type { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { allowFromEntryProblem, ClientFilter } from '../../core/proxy/client-filter.js';

type Ifaces = ReturnType<typeof networkInterfaces>;
const iface = (address: string, cidr: string, family: 'IPv4' | 'IPv6' = 'IPv4') =>
  ({ address, cidr, family, netmask: '', mac: '00:00:00:00:00:00', internal: false }) as Ifaces[string] extends
    Array<infer T> | undefined
    ? T
    : never;

describe('who may connect to the proxy (proxy.allowFrom, #63)', () => {
  it('local: this machine and the networks its interfaces are on, nothing else', () => {
    const f = new ClientFilter(['local'], () => ({
      eth0: [iface('192.168.1.23', '192.168.1.23/24'), iface('fd00::23', 'fd00::23/64', 'IPv6')],
    }));
    expect(f.allows('127.0.0.1')).toBe(true);
    expect(f.allows('::1')).toBe(true);
    expect(f.allows('192.168.1.77')).toBe(true);
    expect(f.allows('::ffff:192.168.1.77')).toBe(true);
    expect(f.allows('fd00::99')).toBe(true);
    expect(f.allows('192.168.2.77')).toBe(false);
    expect(f.allows('203.0.113.5')).toBe(false);
    expect(f.allows('fd01::1')).toBe(false);
    expect(f.allows(undefined)).toBe(false);
  });

  it("lan (the shared listener's): the networks this machine is on, but never its own loopback", () => {
    const f = new ClientFilter(['lan'], () => ({ eth0: [iface('192.168.1.23', '192.168.1.23/24')] }));
    expect(f.allows('192.168.1.77')).toBe(true);
    expect(f.allows('::ffff:192.168.1.77')).toBe(true);
    expect(f.allows('127.0.0.1')).toBe(false);
    expect(f.allows('::1')).toBe(false);
    expect(f.allows('::ffff:127.0.0.1')).toBe(false);
    expect(f.allows('10.9.9.9')).toBe(false);
  });

  it('reads the interfaces again after a few seconds: a new network counts without a restart', () => {
    let now = 0;
    let ifaces: Ifaces = { eth0: [iface('10.0.0.2', '10.0.0.2/24')] };
    const f = new ClientFilter(
      ['local'],
      () => ifaces,
      () => now,
    );
    expect(f.allows('10.0.5.9')).toBe(false);
    ifaces = { wlan0: [iface('10.0.5.2', '10.0.5.2/24')] };
    expect(f.allows('10.0.5.9')).toBe(false); // still the reading of a moment ago
    now = 6_000;
    expect(f.allows('10.0.5.9')).toBe(true);
  });

  it('address blocks the user names are let in beside local, or instead of it', () => {
    const f = new ClientFilter(['192.168.2.0/24', '2001:db8::/32'], () => ({}));
    expect(f.allows('192.168.2.200')).toBe(true);
    expect(f.allows('2001:db8::5')).toBe(true);
    expect(f.allows('127.0.0.1')).toBe(false); // without local, not even this machine
    expect(allowFromEntryProblem('local')).toBeNull();
    expect(allowFromEntryProblem('10.0.0.0/8')).toBeNull();
    expect(allowFromEntryProblem('10.0.0.0/33')).toMatch(/prefix too long/);
    expect(allowFromEntryProblem('everyone')).toMatch(/neither local nor/);
  });
});
