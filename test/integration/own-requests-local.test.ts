import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUpstreamUrl } from '../../core/reach/index.js';
import { httpGet, isLocalHost, localGoesDirect, upstreamDialer } from '../../core/reach/index.js';
import { listSite, type ListSite } from '../helpers/list-site.js';

/**
 * Issue #33: Gatehop's own requests follow the routing's first rule. A list source on this machine
 * used to be asked of the --upstream proxy, which cannot reach the user's loopback, so no list came.
 */
describe("Gatehop's own requests to this machine never go through the upstream proxy (#33)", () => {
  let site: ListSite;
  let proxy: Server;
  let proxied = 0;
  beforeAll(async () => {
    site = await listSite('*vpn_servers\n');
    // An "upstream proxy" that only counts who came: nothing local should.
    proxy = createServer((s) => {
      proxied++;
      s.destroy();
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    await site.close();
    await new Promise<void>((r) => proxy.close(() => r()));
  });

  it('a loopback list source is fetched straight even with an upstream proxy set', async () => {
    const up = parseUpstreamUrl(`socks5://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
    const res = await httpGet(site.listUrl, {
      dialer: localGoesDirect(upstreamDialer(up)),
      timeoutMs: 5_000,
      maxBytes: 1024,
    });
    expect(res.status).toBe(200);
    expect(proxied).toBe(0);
    // Without the rule, the same request goes to the proxy (and fails there).
    await expect(
      httpGet(site.listUrl, { dialer: upstreamDialer(up), timeoutMs: 5_000, maxBytes: 1024 }),
    ).rejects.toThrow();
    expect(proxied).toBe(1);
  });

  it('this machine is always local; the LAN is local unless the global mode sends it through the tunnel', () => {
    expect(isLocalHost('localhost')).toBe(true);
    expect(isLocalHost('127.0.0.1', false)).toBe(true);
    expect(isLocalHost('192.168.1.10')).toBe(true);
    expect(isLocalHost('192.168.1.10', false)).toBe(false);
    expect(isLocalHost('www.vpngate.net')).toBe(false);
    expect(isLocalHost('203.0.113.5')).toBe(false);
  });
});
