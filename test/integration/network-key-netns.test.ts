/**
 * What "this network" is (core/common/network-watch.ts, #58), read from a real kernel: a network
 * namespace of the test's own, whose interfaces and routes the test sets with iproute2. What a
 * network taught (OpenVPN blocked here, nodes through the upstream proxy) is kept under its key,
 * so an interface that is not the way out (a container's bridge, a VM's, another test's rig) must
 * not change it; the default route moving to another interface must.
 */
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { networkKeyOf, type NetworkSnapshot } from '../../core/common/index.js';
import { isRoot, NetNs } from '../helpers/netns.js';

const WATCH = resolve(import.meta.dirname, '../../core/common/network-watch.ts');

describe.runIf(isRoot)('the network key in a namespace of our own (#58)', () => {
  const ns = new NetNs();
  afterAll(() => ns.close());

  /** The snapshot as Gatehop reads it, by a Node process inside the namespace. */
  const snapshot = (): NetworkSnapshot =>
    JSON.parse(
      ns.exec([
        process.execPath,
        '--import',
        'tsx',
        '-e',
        `import(${JSON.stringify(WATCH)}).then((m) => console.log(JSON.stringify(m.readNetworkSnapshot())))`,
      ]),
    ) as NetworkSnapshot;
  /** A veth pair inside the namespace, one end addressed (nothing is sent anywhere). */
  const link = (name: string, cidr: string): void => {
    ns.exec(['ip', 'link', 'add', name, 'type', 'veth', 'peer', 'name', `${name}p`]);
    ns.exec(['ip', 'addr', 'add', cidr, 'dev', name]);
    ns.exec(['ip', 'link', 'set', name, 'up']);
    ns.exec(['ip', 'link', 'set', `${name}p`, 'up']);
  };

  it('counts the way out only: a veth beside it keeps the key, the default route moving changes it, no route at all counts every interface', () => {
    link('wan0', '198.18.0.2/24');
    ns.exec(['ip', 'route', 'add', 'default', 'via', '198.18.0.1', 'dev', 'wan0']);
    const home = snapshot();
    expect(home).toMatchObject({ defaultRoute: true, defaultInterfaces: ['wan0'] });
    const key = networkKeyOf(home);

    // A bridge of a container or a VM appears: not the way out, the same network.
    link('br9', '198.18.9.1/24');
    const beside = snapshot();
    expect(beside.addresses).toContain('br9 198.18.9.1');
    expect(networkKeyOf(beside)).toBe(key);

    // The way out moves to another interface (a cable, a phone's tether): another network.
    link('wan1', '198.18.7.2/24');
    ns.exec(['ip', 'route', 'replace', 'default', 'via', '198.18.7.1', 'dev', 'wan1']);
    const moved = snapshot();
    expect(moved.defaultInterfaces).toEqual(['wan1']);
    expect(networkKeyOf(moved)).not.toBe(key);

    // No default route: every interface names the network (there is no way out to prefer).
    ns.exec(['ip', 'route', 'del', 'default']);
    const none = snapshot();
    expect(none).toMatchObject({ defaultRoute: false, defaultInterfaces: [] });
    expect(networkKeyOf(none)).not.toBe(networkKeyOf(moved));
    expect(networkKeyOf(none)).toBe(
      networkKeyOf({ addresses: none.addresses, defaultRoute: null }), // as where routes cannot be read
    );
  });
});

describe('the network key without a namespace', () => {
  it('keeps every interface where the routes cannot be read (not Linux), and ignores IPv6 addresses', () => {
    const snap = { addresses: ['en0 192.0.2.3', 'en0 2001:db8::3', 'bridge0 198.18.1.1'], defaultRoute: null };
    expect(networkKeyOf(snap)).not.toBe(networkKeyOf({ ...snap, addresses: ['en0 192.0.2.3'] }));
    expect(networkKeyOf(snap)).toBe(networkKeyOf({ ...snap, addresses: ['en0 192.0.2.99', 'bridge0 198.18.1.1'] }));
  });
});
