/**
 * A profile per network (#64): the profile saved for a network is put in force when the machine is
 * seen there and the values it replaced come back on leaving, except a value the user changed while
 * there; the file keeps what to put back across a stop; a profile edited in force applies again
 * without a word; offline changes nothing; a bad file is set aside; a refused change leaves nothing
 * half-applied. The target here is a stand-in for the settings (test/integration/network-profiles
 * runs the real core, its settings and a real network change).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import {
  NetworkProfiles,
  profileFor,
  type ChoicesInForce,
  type NetworkSeen,
  type ProfileChoices,
  type ProfileEvent,
} from '../../core/profiles/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const HOME: NetworkSeen = { key: 'aaaa', label: 'eth0 192.168.1.x' };
const CAFE: NetworkSeen = { key: 'bbbb', label: 'wlan0 10.0.0.x' };
const OFFLINE: NetworkSeen = { key: 'offline', label: 'offline' };

function rig(file?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'gatehop-profiles-'));
  dirs.push(dir);
  const path = file ?? join(dir, 'network-profiles.json');
  const settings: ChoicesInForce = { mode: 'rule', httpsOnly: false, protocols: ['openvpn', 'sstp', 'sevpn'] };
  const applied: ProfileChoices[] = [];
  let refuse = false;
  let here = HOME;
  const make = () =>
    new NetworkProfiles({
      file: path,
      target: {
        read: () => ({ ...settings, protocols: [...settings.protocols] }),
        apply: async (c) => {
          if (refuse) throw new Error('refused by the settings');
          applied.push(c);
          Object.assign(settings, c);
        },
      },
      network: () => here,
      logger: silentLogger(),
    });
  const profiles = make();
  const events: ProfileEvent[] = [];
  profiles.onEvent((e) => events.push(e));
  return {
    dir,
    path,
    settings,
    applied,
    events,
    profiles,
    make,
    go: (n: NetworkSeen) => void (here = n),
    refuse: (on: boolean) => void (refuse = on),
  };
}

describe('a profile per network (#64)', () => {
  it('matches by the network key only, and offline never', () => {
    const p = { network: 'aaaa', label: '', name: 'Home', choices: { mode: 'direct' as const }, savedAt: 0 };
    expect(profileFor([p], 'aaaa')).toBe(p);
    expect(profileFor([p], 'bbbb')).toBeNull();
    expect(profileFor([{ ...p, network: 'offline' }], 'offline')).toBeNull();
  });

  it('applies a profile saved here at once, puts the old values back on leaving and applies it again on return', async () => {
    const r = rig();
    r.go(CAFE);
    const saved = await r.profiles.save('Café', { mode: 'global', httpsOnly: true, protocols: ['sevpn', 'openvpn'] });
    expect(saved.applied).toMatchObject({ network: 'bbbb', name: 'Café' });
    expect(r.settings).toEqual({ mode: 'global', httpsOnly: true, protocols: ['sevpn', 'openvpn'] });
    expect(r.events.at(-1)).toMatchObject({ type: 'applied', name: 'Café', network: 'wlan0 10.0.0.x' });

    r.go(HOME);
    await r.profiles.networkChanged();
    expect(r.settings).toEqual({ mode: 'rule', httpsOnly: false, protocols: ['openvpn', 'sstp', 'sevpn'] });
    expect(r.events.at(-1)).toMatchObject({ type: 'restored', name: 'Café', kept: [] });
    expect(r.profiles.state().applied).toBeNull();

    r.go(CAFE);
    await r.profiles.networkChanged();
    expect(r.settings.mode).toBe('global');
    // The same network seen again (a poll, a resume) changes nothing more.
    const n = r.applied.length;
    await r.profiles.networkChanged();
    expect(r.applied.length).toBe(n);
  });

  it('leaves what the user changed while on the network as they set it, and puts back only the rest', async () => {
    const r = rig();
    r.go(CAFE);
    await r.profiles.save('Café', { mode: 'global', httpsOnly: true });
    r.settings.mode = 'direct'; // the user, from the tray, while at the café
    r.go(HOME);
    await r.profiles.networkChanged();
    expect(r.settings).toMatchObject({ mode: 'direct', httpsOnly: false });
    expect(r.events.at(-1)).toMatchObject({ type: 'restored', kept: ['mode'] });
  });

  it('keeps what to put back across a stop: a start on another network restores it', async () => {
    const r = rig();
    r.go(CAFE);
    await r.profiles.save('Café', { httpsOnly: true });
    await r.profiles.close();
    r.go(HOME);
    const again = r.make();
    expect(again.state().applied).toMatchObject({ name: 'Café' });
    await again.networkChanged();
    expect(r.settings.httpsOnly).toBe(false);
    expect(again.state().applied).toBeNull();
  });

  it('changes nothing offline: what is in force stays until a network is seen', async () => {
    const r = rig();
    r.go(CAFE);
    await r.profiles.save('Café', { mode: 'global' });
    r.go(OFFLINE);
    await r.profiles.networkChanged();
    expect(r.settings.mode).toBe('global');
    await expect(r.profiles.save('Nowhere', { mode: 'direct' })).rejects.toMatchObject({
      code: 'GH_ERR_NETWORK_PROFILE_INVALID',
    });
  });

  it('applies an edited profile again without a notification, and a removed one gives the settings back', async () => {
    const r = rig();
    r.go(CAFE);
    await r.profiles.save('Café', { mode: 'global' });
    const before = r.events.length;
    await r.profiles.save('Café', { mode: 'direct', httpsOnly: true });
    expect(r.settings).toMatchObject({ mode: 'direct', httpsOnly: true });
    expect(r.events.length).toBe(before);
    await r.profiles.remove(CAFE.key);
    expect(r.settings).toMatchObject({ mode: 'rule', httpsOnly: false });
    expect(r.profiles.state().profiles).toEqual([]);
    expect(await r.profiles.remove(CAFE.key)).toBeNull();
  });

  it('refuses a profile without a name or a change, or with a bad protocol order', async () => {
    const r = rig();
    const code = { code: 'GH_ERR_NETWORK_PROFILE_INVALID' };
    await expect(r.profiles.save('  ', { mode: 'global' })).rejects.toMatchObject(code);
    await expect(r.profiles.save('Home', {})).rejects.toMatchObject(code);
    await expect(
      r.profiles.save('Home', { protocols: ['sstp', 'sstp'] } as unknown as ProfileChoices),
    ).rejects.toMatchObject(code);
    expect(existsSync(r.path)).toBe(false);
  });

  it('says a refused change and leaves nothing in force', async () => {
    const r = rig();
    r.refuse(true);
    await r.profiles.save('Home', { mode: 'direct' });
    expect(r.events.at(-1)).toMatchObject({ type: 'failed', name: 'Home', message: 'refused by the settings' });
    expect(r.profiles.state().applied).toBeNull();
    expect(r.settings.mode).toBe('rule');
  });

  it('sets a damaged file aside and starts with no profiles', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehop-profiles-bad-'));
    dirs.push(dir);
    const path = join(dir, 'network-profiles.json');
    writeFileSync(path, '{"version":1,"profiles":[{"network":');
    const r = rig(path);
    expect(r.profiles.state().profiles).toEqual([]);
    expect(readdirSync(dir).some((f) => f.startsWith('network-profiles.json.invalid-'))).toBe(true);
  });
});
