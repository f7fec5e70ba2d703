// @vitest-environment happy-dom
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClashImport } from '../src/components/ClashImport.js';
import type { Actions } from '../src/store/feed.js';
import type { RuleImportResult } from '../src/store/types.js';
import { mount } from './mount.js';

afterEach(cleanup);

const readResult: RuleImportResult = {
  mode: 'global',
  rules: 7,
  subRules: ['udp'],
  ruleSets: ['ads'],
  targets: [
    { name: 'DIRECT', guess: 'DIRECT', why: 'builtin', rules: 1, saved: null, use: 'DIRECT' },
    { name: '🚀 节点选择', guess: 'TUNNEL', why: 'first-member', rules: 3, saved: null, use: 'TUNNEL' },
    { name: 'Ads', guess: 'REJECT', why: 'all-reject', rules: 2, saved: 'DIRECT', use: 'DIRECT' },
  ],
  ask: ['🚀 节点选择'],
  skipped: [{ what: 'rule-providers.local', why: 'a file rule set has no source Gatehop can reach (http sets only)' }],
  applied: false,
  restartRequired: [],
};

describe('Settings → Routing → Import from a Clash config (#45)', () => {
  it('reads a pasted config, shows each name with its guess, and applies the mapping the user chose', async () => {
    const importRules = vi
      .fn<Actions['importRules']>()
      .mockResolvedValueOnce({ ok: true, value: readResult })
      .mockResolvedValueOnce({ ok: true, value: { ...readResult, applied: true, ask: [] } });
    mount(<ClashImport />, undefined, { importRules });
    fireEvent.change(screen.getByLabelText('Config, or its https:// address'), {
      target: { value: 'rules: [MATCH,PROXY]' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Read' }));
    await screen.findByText('7 rules, 1 rule sets, 1 sub-rule lists. Where should each name go?');
    expect(importRules).toHaveBeenLastCalledWith({ config: 'rules: [MATCH,PROXY]', mapping: {}, apply: false });
    // Gatehop's own names are not asked about; the others are, with why the guess is what it is.
    expect(screen.queryByLabelText('Where DIRECT goes')).toBeNull();
    expect((screen.getByLabelText('Where 🚀 节点选择 goes') as HTMLSelectElement).value).toBe('TUNNEL');
    expect(screen.getByText('its first choice')).toBeTruthy();
    expect((screen.getByLabelText('Where Ads goes') as HTMLSelectElement).value).toBe('DIRECT');
    expect(screen.getByText('as you chose last time')).toBeTruthy();
    expect(screen.getByText(/Left out: rule-providers.local/)).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Where Ads goes'), { target: { value: 'REJECT' } });
    // Its mode is shown and not taken unless ticked (#59): a global one would send the home network through a node.
    const takeMode = screen.getByLabelText('Also take its mode: “Everything” (your current mode stays otherwise)');
    expect((takeMode as HTMLInputElement).checked).toBe(false);
    fireEvent.click(screen.getByRole('button', { name: 'Use these rules' }));
    await screen.findByText('7 rules imported and in use.');
    expect(importRules).toHaveBeenLastCalledWith({
      config: 'rules: [MATCH,PROXY]',
      mapping: { DIRECT: 'DIRECT', '🚀 节点选择': 'TUNNEL', Ads: 'REJECT' },
      apply: true,
      setMode: false,
    });
  });

  it('takes the config’s mode only when the user ticks it (#59)', async () => {
    const importRules = vi
      .fn<Actions['importRules']>()
      .mockResolvedValueOnce({ ok: true, value: readResult })
      .mockResolvedValueOnce({ ok: true, value: { ...readResult, applied: true, ask: [] } });
    mount(<ClashImport />, undefined, { importRules });
    fireEvent.change(screen.getByLabelText('Config, or its https:// address'), { target: { value: 'mode: global' } });
    fireEvent.click(screen.getByRole('button', { name: 'Read' }));
    fireEvent.click(await screen.findByLabelText(/Also take its mode: “Everything”/));
    fireEvent.click(screen.getByRole('button', { name: 'Use these rules' }));
    await screen.findByText('7 rules imported and in use.');
    expect(importRules).toHaveBeenLastCalledWith(expect.objectContaining({ apply: true, setMode: true }));
  });

  it('an address is fetched by the core; a refusal is shown as it came', async () => {
    const importRules = vi.fn<Actions['importRules']>().mockResolvedValue({
      ok: false,
      error: { code: 'GH_ERR_CONFIG_INVALID', message: 'not a Clash config with rules: no rules: list in it' },
    });
    mount(<ClashImport />, undefined, { importRules });
    fireEvent.change(screen.getByLabelText('Config, or its https:// address'), {
      target: { value: ' https://sub.example/clash.yaml ' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Read' }));
    await waitFor(() =>
      expect(importRules).toHaveBeenCalledWith({ url: 'https://sub.example/clash.yaml', mapping: {}, apply: false }),
    );
    expect((await screen.findByRole('alert')).textContent).toBe('not a Clash config with rules: no rules: list in it');
  });

  it('in Persian and Chinese', () => {
    mount(<ClashImport />, undefined, {}, 'fa');
    expect(screen.getByText('وارد کردن از پیکربندی Clash')).toBeTruthy();
    cleanup();
    mount(<ClashImport />, undefined, {}, 'zh-CN');
    expect(screen.getByRole('button', { name: '读取' })).toBeTruthy();
  });
});
