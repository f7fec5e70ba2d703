/**
 * A profile per network on a real network change (#64): the real core runs in a namespace of the
 * test's own whose way out the test moves with iproute2, as a laptop moving from home to a café.
 * A profile saved on the café's network is in force there at once (the mode, HTTPS only, the
 * protocol order, in the saved settings and in how a real curl's flow is routed); moving the
 * default route to the home interface puts the user's own settings back within the network watch's
 * poll, and moving it back applies the profile again. A mode the user picks while at the café stays
 * theirs when they leave. A stop at the café and a start at home restore too. Nothing is sent
 * outside the namespace.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOverSocket } from '../helpers/admin-client.js';
import { coreInNamespace, isRoot, NetNs, twoWaysOut, waitForLine } from '../helpers/netns.js';

interface Profiles {
  network: { key: string; label: string };
  profiles: Array<{ network: string; name: string; choices: Record<string, unknown> }>;
  applied: { network: string; name: string } | null;
}
interface Settings {
  mode: string;
  protocols: string[];
  privacy: { httpsOnly: boolean };
}

describe.skipIf(!isRoot)('a profile per network, on a real network change (#64)', () => {
  let ns: NetNs;
  let dir = '';
  let core: ChildProcess | null = null;
  const net = `10.${60 + (process.pid % 60)}`;
  const home = `${net}.1`;
  const cafe = `${net}.2`;

  const api = <T>(path: string, method = 'GET', body?: object) => adminOverSocket<T>(dir, method, path, body);
  let wayOut: (iface: 'home0' | 'cafe0') => void;
  const startCore = async () => {
    core = await coreInNamespace(ns, dir, { admin: true, logFile: join(dir, 'gatehop.log') });
  };
  const stopCore = async () => {
    const c = core!;
    core = null;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await gone;
  };
  /** How the core routed a real curl's request to a server on the home network (closed connections). */
  const routeOfAFetch = async (): Promise<string | null> => {
    const got = spawnSync(
      'ip',
      [
        'netns',
        'exec',
        ns.name,
        'curl',
        '-sS',
        '--max-time',
        '5',
        '-x',
        'socks5h://127.0.0.1:1080',
        `http://${home}.1:8080/hello.txt`,
      ],
      { encoding: 'utf8' },
    );
    expect(got.stdout, got.stderr).toBe('hello\n');
    let route: string | null = null;
    await expect
      .poll(() => {
        const c = api<{ connections: Array<{ host: string; route: string | null }> }>('/traffic/closed?limit=1').json;
        route = c.connections[0]?.host === `${home}.1` ? c.connections[0].route : null;
        return route;
      })
      .not.toBeNull();
    api('/traffic/ledger', 'DELETE');
    return route;
  };
  const settings = () => api<{ settings: Settings }>('/settings').json.settings;

  beforeAll(async () => {
    ns = new NetNs();
    wayOut = twoWaysOut(ns, { home0: home, cafe0: cafe });
    wayOut('home0');
    dir = mkdtempSync(join(tmpdir(), 'gh-profiles-'));
    mkdirSync(join(dir, 'site'));
    writeFileSync(join(dir, 'site', 'hello.txt'), 'hello\n');
    const server = ns.spawn([
      'python3',
      '-u',
      '-m',
      'http.server',
      '8080',
      '--bind',
      `${home}.1`,
      '--directory',
      join(dir, 'site'),
    ]);
    await waitForLine(server, /Serving HTTP/, 10_000);
    await startCore();
  }, 60_000);

  afterAll(() => {
    ns?.close();
    if (dir && !process.env.KEEP) rmSync(dir, { recursive: true, force: true });
  });

  it('applies the café profile there, gives the own settings back at home, and applies it again on return', async () => {
    const atHome = api<Profiles>('/profiles').json;
    expect(atHome.network.label).toBe(`home0 ${home}.x`);
    expect(atHome.applied).toBeNull();
    const own = settings();
    expect(await routeOfAFetch()).toBe('DIRECT'); // by rules: the home network goes direct

    // At the café: saved for its network, in force at once.
    wayOut('cafe0');
    await expect.poll(() => api<Profiles>('/profiles').json.network.label, { timeout: 10_000 }).toBe(`cafe0 ${cafe}.x`);
    const saved = api<Profiles>('/profiles/here', 'PUT', {
      name: 'Café',
      choices: { mode: 'global', httpsOnly: true, protocols: ['sevpn', 'openvpn', 'sstp'] },
    });
    expect(saved.status).toBe(200);
    expect(saved.json.applied).toMatchObject({ name: 'Café' });
    expect(settings()).toMatchObject({
      mode: 'global',
      protocols: ['sevpn', 'openvpn', 'sstp'],
      privacy: { httpsOnly: true },
    });
    expect(await routeOfAFetch()).toBe('TUNNEL'); // everything through the VPN now
    const file = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')) as { settings: Partial<Settings> };
    expect(file.settings.mode).toBe('global');

    // Home again: the settings before the café come back.
    wayOut('home0');
    await expect.poll(() => settings().mode, { timeout: 10_000 }).toBe('rule');
    expect(settings()).toMatchObject({ protocols: own.protocols, privacy: { httpsOnly: false } });
    expect(own.protocols[0]).toBe('openvpn');
    expect(api<Profiles>('/profiles').json.applied).toBeNull();
    expect(await routeOfAFetch()).toBe('DIRECT');

    // And back to the café: applied again by itself.
    wayOut('cafe0');
    await expect.poll(() => settings().mode, { timeout: 10_000 }).toBe('global');
    expect(settings().privacy.httpsOnly).toBe(true);
  }, 60_000);

  it('keeps a mode the user picks at the café when they leave, and restores after a stop at the café and a start at home', async () => {
    // The user picks "direct" from the tray (the Clash API's mode) while the café profile is in force.
    expect(api('/configs', 'PATCH', { mode: 'direct' }).status).toBe(204);
    wayOut('home0');
    await expect.poll(() => settings().privacy.httpsOnly, { timeout: 10_000 }).toBe(false);
    expect(settings().mode).toBe('direct');

    // The café again, then a stop there, and a start at home: the profile's values do not outlive it.
    wayOut('cafe0');
    await expect.poll(() => settings().privacy.httpsOnly, { timeout: 10_000 }).toBe(true);
    await stopCore();
    wayOut('home0');
    await startCore();
    await expect.poll(() => settings().privacy.httpsOnly, { timeout: 10_000 }).toBe(false);
    expect(api<Profiles>('/profiles').json).toMatchObject({ applied: null, profiles: [{ name: 'Café' }] });
  }, 90_000);

  it('refuses what is not a profile with a 400, and an unknown network with a 404', () => {
    expect(api('/profiles/here', 'PUT', { name: '', choices: { mode: 'global' } }).status).toBe(400);
    expect(api('/profiles/here', 'PUT', { name: 'x', choices: { protocols: ['sstp', 'sstp'] } }).status).toBe(400);
    expect(api('/profiles/here', 'PUT', { name: 'x', choices: {} }).status).toBe(400);
    expect(api('/profiles/0123456789abcdef', 'DELETE').status).toBe(404);
  });
});
