// @vitest-environment happy-dom
/**
 * What the window says goes through Gatehop and what does not (#46): the Overview's card follows
 * the system proxy's state and the kill switch; Settings turns the kill switch on (saved alone, as
 * the patch the core takes live). English and Persian here; the catalogue test checks all four.
 */
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppStore } from '../src/store/index.js';
import { Protection } from '../src/components/Protection.js';
import { Settings } from '../src/views/Settings.js';
import { savingCore, settings as fakeSettings } from './fakes.js';
import { mount } from './mount.js';

afterEach(cleanup);

const sysproxy = (enabled: boolean) => ({ supported: true, backend: 'GNOME', current: null, enabled, error: null });

describe('what goes through Gatehop (#46)', () => {
  it('names the protected and the unprotected, and what a stop does, as the system proxy and the kill switch change', () => {
    const store = createAppStore();
    store.getState().setSettings(fakeSettings({ killSwitch: false }));
    store.getState().setSysproxy(sysproxy(true));
    mount(<Protection />, store);
    const card = screen.getByRole('article', { name: 'What goes through Gatehop' });
    expect(screen.getByTestId('protection-system').textContent).toMatch(/^✓ Programs that use the system proxy/);
    expect(card.textContent).toMatch(/Not protected[\s\S]*ignore the proxy setting[\s\S]*WebRTC/);
    expect(screen.getByTestId('protection-kill-switch').textContent).toMatch(/^Kill switch off: if Gatehop stops/);
    act(() => store.getState().setSettings(fakeSettings({ killSwitch: true })));
    expect(screen.getByTestId('protection-kill-switch').textContent).toMatch(/stay offline instead/);
    act(() => store.getState().setSysproxy(sysproxy(false)));
    expect(screen.getByTestId('protection-system').textContent).toMatch(/^The system proxy is off/);
    expect(screen.getByTestId('protection-kill-switch').textContent).toMatch(/nothing for it to hold/);
  });

  it('says it in Persian too', () => {
    const store = createAppStore();
    store.getState().setSettings(fakeSettings({ killSwitch: true }));
    store.getState().setSysproxy(sysproxy(true));
    mount(<Protection />, store, {}, 'fa');
    expect(screen.getByRole('article', { name: 'چه چیزی از Gatehop می‌گذرد' })).toBeTruthy();
    expect(screen.getByTestId('protection-kill-switch').textContent).toMatch(/^کلید قطع روشن است/);
  });

  it('Settings turns the kill switch on, saving only that key', async () => {
    const store = createAppStore();
    store.getState().setSettings(fakeSettings({ startAtLogin: null }));
    const { saved, saveSettings } = savingCore();
    mount(<Settings />, store, { saveSettings });
    const box = screen.getByRole('checkbox', { name: 'Kill switch: keep programs offline when Gatehop stops' });
    expect((box as HTMLInputElement).checked).toBe(false);
    expect(screen.getByText(/the system proxy stays pointed at it/)).toBeTruthy();
    fireEvent.click(box);
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(saved).toEqual([{ killSwitch: true }]));
    await waitFor(() => expect(screen.getByRole('status').textContent).toMatch(/Saved/));
  });
});
