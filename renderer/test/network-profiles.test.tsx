// @vitest-environment happy-dom
/**
 * The "A profile per network" card (#64): the network this computer is on and the profile in force
 * there, a save that sends only the choices made (the first protocol before the other two in the
 * default order), a profile named by what it changes, Remove only once confirmed, and nothing to
 * save offline. Real Chromium shows it over a real core in test/browser/profiles-window.test.ts.
 */
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProfilesStateView } from '../../core/api/schemas.js';
import { NetworkProfiles } from '../src/components/NetworkProfiles.js';
import type { Actions } from '../src/store/feed.js';
import { createAppStore } from '../src/store/index.js';
import { mount } from './mount.js';

afterEach(() => cleanup());

const HERE = { key: 'bbbb', label: 'wlan0 10.0.0.x' };
const cafe = {
  network: 'bbbb',
  label: 'wlan0 10.0.0.x',
  name: 'Café',
  choices: {
    mode: 'global' as const,
    httpsOnly: true,
    protocols: ['sevpn' as const, 'openvpn' as const, 'sstp' as const],
  },
  savedAt: 1,
};
const state = (over: Partial<ProfilesStateView> = {}): ProfilesStateView => ({
  network: HERE,
  profiles: [],
  applied: null,
  ...over,
});

describe('the profiles-per-network card', () => {
  it('saves the choices made for this network and lists the profile by what it changes', async () => {
    // The core's side: what it answers after the save is what it reads from then on.
    let now = state();
    const saveProfile = vi.fn(async () => {
      now = state({ profiles: [cafe], applied: { network: 'bbbb', name: 'Café', at: 1 } });
      return { ok: true as const, value: now };
    });
    mount(<NetworkProfiles />, createAppStore(), {
      getProfiles: async () => ({ ok: true, value: now }),
      saveProfile,
    } as Partial<Actions>);
    expect((await screen.findByTestId('profiles-here')).textContent).toMatch(
      /This network: wlan0 10\.0\.0\.x · No profile for this network/,
    );
    const save = screen.getByRole('button', { name: 'Save for this network' });
    fireEvent.change(screen.getByLabelText('Profile name'), { target: { value: 'Café' } });
    // A name and nothing to change: not a profile yet.
    expect(save).toHaveProperty('disabled', true);
    expect(screen.getByText(/at least one thing/)).toBeTruthy();
    fireEvent.change(screen.getByLabelText('What goes through the VPN'), { target: { value: 'global' } });
    fireEvent.change(screen.getByLabelText('HTTPS only'), { target: { value: 'on' } });
    fireEvent.change(screen.getByLabelText('Protocol tried first'), { target: { value: 'sevpn' } });
    fireEvent.click(save);
    await waitFor(() =>
      expect(saveProfile).toHaveBeenCalledWith({
        name: 'Café',
        choices: { mode: 'global', httpsOnly: true, protocols: ['sevpn', 'openvpn', 'sstp'] },
      }),
    );
    expect((await screen.findByTestId('profile')).textContent).toMatch(
      /Café · this network.*through the VPN: Everything, HTTPS only on, SE-VPN first/,
    );
    expect(screen.getByTestId('profiles-here').textContent).toMatch(/In force here: “Café”/);
  });

  it('sends only a choice that was made', async () => {
    const saveProfile = vi.fn(async () => ({ ok: true as const, value: state() }));
    mount(<NetworkProfiles />, createAppStore(), {
      getProfiles: async () => ({ ok: true, value: state() }),
      saveProfile,
    } as Partial<Actions>);
    fireEvent.change(await screen.findByLabelText('Profile name'), { target: { value: ' Home ' } });
    fireEvent.change(screen.getByLabelText('What goes through the VPN'), { target: { value: 'direct' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save for this network' }));
    await waitFor(() => expect(saveProfile).toHaveBeenCalledWith({ name: 'Home', choices: { mode: 'direct' } }));
  });

  it('removes a profile of another network only once confirmed', async () => {
    const other = { ...cafe, network: 'cccc', label: 'eth1 172.16.0.x', name: 'Office' };
    const removeProfile = vi.fn(async () => ({ ok: true as const, value: state() }));
    mount(<NetworkProfiles />, createAppStore(), {
      getProfiles: async () => ({ ok: true, value: state({ profiles: [other] }) }),
      removeProfile,
    } as Partial<Actions>);
    expect((await screen.findByTestId('profile')).textContent).toContain('eth1 172.16.0.x');
    const confirm = vi.fn().mockReturnValueOnce(false).mockReturnValueOnce(true);
    vi.stubGlobal('confirm', confirm);
    fireEvent.click(screen.getByRole('button', { name: 'Remove' }));
    expect(removeProfile).not.toHaveBeenCalled();
    await waitFor(() => expect(screen.getByRole('button', { name: 'Remove' })).toHaveProperty('disabled', false));
    fireEvent.click(screen.getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(removeProfile).toHaveBeenCalledWith('cccc'));
    vi.unstubAllGlobals();
  });

  it('says there is no network to save for while offline', async () => {
    mount(<NetworkProfiles />, createAppStore(), {
      getProfiles: async () => ({ ok: true, value: state({ network: { key: 'offline', label: 'offline' } }) }),
    } as Partial<Actions>);
    expect((await screen.findByTestId('profiles-here')).textContent).toMatch(/on no network now/);
    fireEvent.change(screen.getByLabelText('Profile name'), { target: { value: 'x' } });
    fireEvent.change(screen.getByLabelText('What goes through the VPN'), { target: { value: 'direct' } });
    expect(screen.getByRole('button', { name: 'Save for this network' })).toHaveProperty('disabled', true);
  });
});
