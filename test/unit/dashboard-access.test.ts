/** Which Host headers the admin API answers to (core/api/access.ts) and the LAN links it prints (#62). */
import { describe, expect, it } from 'vitest';
import { ownHosts } from '../../core/api/access.js';
import { lanDashboardUrls } from '../../core/app/dashboard-links.js';

const lan = (): string[] => ['127.0.0.1', '192.168.1.20', '[fe80::1]', '[::1]'];

describe('the Hosts the admin API answers to', () => {
  it('on loopback: its own address and the loopback names only, never a LAN address', () => {
    const own = ownHosts('127.0.0.1', 9090, [], lan);
    expect(own('127.0.0.1:9090')).toBe(true);
    expect(own('localhost:9090')).toBe(true);
    expect(own('192.168.1.20:9090')).toBe(false);
    expect(own('evil.example:9090')).toBe(false);
  });

  it("on every interface: any of this machine's addresses, as an address, on the API's port; names only when listed", () => {
    const own = ownHosts('0.0.0.0', 9090, ['homeserver.lan'], lan);
    expect(own('192.168.1.20:9090')).toBe(true);
    expect(own('[fe80::1]:9090')).toBe(true);
    expect(own('192.168.1.20:9091')).toBe(false);
    expect(own('192.168.1.21:9090')).toBe(false);
    expect(own('homeserver.lan:9090')).toBe(true);
    expect(own('rebound.example:9090')).toBe(false);
  });

  it('reads the interfaces when asked, so a new lease needs no restart', () => {
    let addrs = ['10.0.0.5'];
    const own = ownHosts('::', 80, [], () => addrs);
    expect(own('10.0.0.6:80')).toBe(false);
    addrs = ['10.0.0.6'];
    expect(own('10.0.0.6:80')).toBe(true);
  });
});

describe("the dashboard's links for the network", () => {
  const ifs = {
    lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true }],
    eth0: [
      { address: '192.168.1.20', family: 'IPv4', internal: false },
      { address: 'fe80::1', family: 'IPv6', internal: false },
    ],
    wlan0: [{ address: '169.254.3.3', family: 'IPv4', internal: false }],
  } as unknown as Parameters<typeof lanDashboardUrls>[2];

  it('one per LAN IPv4 address when the API listens on every interface, the token kept in the fragment', () => {
    expect(lanDashboardUrls('http://0.0.0.0:9090/ui/#token=abc', { host: '0.0.0.0', port: 9090 }, ifs)).toEqual([
      'http://192.168.1.20:9090/ui/#token=abc',
    ]);
  });

  it('none when it listens on loopback or not at all', () => {
    expect(lanDashboardUrls('http://127.0.0.1:9090/ui/#token=abc', { host: '127.0.0.1', port: 9090 }, ifs)).toEqual([]);
    expect(lanDashboardUrls(null, null, ifs)).toEqual([]);
  });
});
