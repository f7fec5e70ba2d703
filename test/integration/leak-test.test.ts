/**
 * The core's part of the leak test on a real kernel (#64): the real core runs in a namespace of the
 * test's own; with a global IPv6 address and an IPv6 default route the report names both (programs
 * that do not use the proxy would leave by them), without the route it says there is no IPv6 way
 * out; with no node in use, the exit and resolver parts say so instead of guessing. Nothing is sent
 * outside the namespace (no tunnel, so no echo service is asked).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LeakReport } from '../../core/api/index.js';
import { adminOverSocket } from '../helpers/admin-client.js';
import { coreInNamespace, hasIpv6, isRoot, NetNs } from '../helpers/netns.js';

describe.skipIf(!isRoot || !hasIpv6)('the leak test in a namespace of our own (#64)', () => {
  let ns: NetNs;
  let dir = '';
  const v6 = `2001:db8:${(process.pid % 0xffff).toString(16)}:1::`;
  const leakTest = (): LeakReport => adminOverSocket<LeakReport>(dir, 'POST', '/leak-test').json;

  beforeAll(async () => {
    ns = new NetNs();
    ns.exec(['ip', 'link', 'add', 'wan0', 'type', 'veth', 'peer', 'name', 'wan0p']);
    ns.exec(['ip', 'link', 'set', 'wan0', 'up']);
    ns.exec(['ip', 'link', 'set', 'wan0p', 'up']);
    ns.exec(['ip', 'addr', 'add', '198.18.0.2/24', 'dev', 'wan0']);
    ns.exec(['ip', '-6', 'addr', 'add', `${v6}2/64`, 'dev', 'wan0', 'nodad']);
    ns.exec(['ip', 'route', 'add', 'default', 'via', '198.18.0.1', 'dev', 'wan0']);
    ns.exec(['ip', '-6', 'route', 'add', 'default', 'via', `${v6}1`, 'dev', 'wan0']);
    dir = mkdtempSync(join(tmpdir(), 'gh-leak-'));
    await coreInNamespace(ns, dir);
  }, 60_000);

  afterAll(() => {
    ns?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("names this computer's IPv6 way out while there is one, and says when there is none", () => {
    const with6 = leakTest();
    expect(with6.ipv6).toEqual({ address: `${v6}2`, defaultRoute: true });
    ns.exec(['ip', '-6', 'route', 'del', 'default']);
    expect(leakTest().ipv6).toEqual({ address: `${v6}2`, defaultRoute: false });
  });

  it('says no node is in use instead of guessing the exit and the resolver, and names the STUN server the window asks', () => {
    const r = leakTest();
    expect(r.nodeId).toBeNull();
    expect(r.exit).toMatchObject({ address: null, error: 'no tunnel is up: connect to a node first' });
    expect(r.resolver).toMatchObject({ address: null, error: 'no tunnel is up: connect to a node first' });
    expect(r.stunUrl).toBe('stun:stun.cloudflare.com:3478');
    expect(r.systemProxy === null || typeof r.systemProxy === 'boolean').toBe(true);
  });
});
