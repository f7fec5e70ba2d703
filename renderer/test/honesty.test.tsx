// @vitest-environment happy-dom
/**
 * What the window says of the honesty checks (#43): each node's row says "checked" or "tampers
 * (DNS)" with why and the evidence; a pick of a flagged node asks first and sends the user's
 * confirmation; "Check" asks for a check now; the Overview warns about a flagged node in use and
 * counts the verdicts; Settings turns checks and the privacy opt-ins on and off. In the four
 * languages (Chinese and Persian here).
 */
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Actions } from '../src/store/feed.js';
import { createAppStore } from '../src/store/index.js';
import type { NodeDto } from '../src/store/types.js';
import { Nodes } from '../src/views/Nodes.js';
import { Overview } from '../src/views/Overview.js';
import { Settings } from '../src/views/Settings.js';
import { honesty, node, savingCore, settings as fakeSettings, status } from './fakes.js';
import { mount } from './mount.js';

afterEach(cleanup);

const FLAGGED = node(1, {
  honesty: honesty({
    verdict: 'dns-tampering',
    checkedAt: 40_000,
    evidence: [
      { check: 'dns', target: 'dns.google at 10.211.254.254', expected: '8.8.8.8, 8.8.4.4', got: '203.0.113.66' },
    ],
  }),
});
const HONEST = node(2, { honesty: honesty({ verdict: 'honest', checkedAt: 40_000 }) });
const FRESH = node(3, { honesty: honesty({}) });

describe('honesty in the window (#43)', () => {
  it('each row says what the checks found: checked, tampers (with why and evidence), nothing before a check', () => {
    const store = createAppStore();
    store.getState().setNodes({ nodes: [FLAGGED, HONEST, FRESH], fetchedAt: 1, source: 'x', via: 'direct' });
    mount(<Nodes />, store);
    const bad = screen.getByTestId('honesty-node-1');
    expect(bad.textContent).toBe(' · ⚠ tampers (DNS)');
    expect(bad.getAttribute('title')).toMatch(
      /wrong addresses[\s\S]*dns\.google at 10\.211\.254\.254: expected 8\.8\.8\.8, 8\.8\.4\.4, got 203\.0\.113\.66/,
    );
    expect(screen.getByTestId('honesty-node-2').textContent).toBe(' · ✓ checked');
    expect(screen.getByTestId('honesty-node-2').getAttribute('title')).toMatch(/^Checked 1 min ago/);
    expect(screen.queryByTestId('honesty-node-3')).toBeNull();
  });

  it('a flagged node with clean checks since says how many of the three that clear it came (#59; in Chinese too)', () => {
    const recovering = node(4, {
      honesty: honesty({ verdict: 'http-tampering', checkedAt: 40_000, cleanChecks: 1 }),
    });
    for (const [lang, text] of [
      ['en', ' (1 of 3 clean checks since: the flag goes after 3 in a row)'],
      ['zh-CN', ' (此后已有 1/3 次检查正常：连续 3 次正常后取消标记)'],
    ] as const) {
      const store = createAppStore();
      store.getState().setNodes({ nodes: [recovering, FLAGGED], fetchedAt: 1, source: 'x', via: 'direct' });
      mount(<Nodes />, store, {}, lang);
      expect(screen.getByTestId('clean-since-node-4').textContent).toBe(text);
      expect(screen.queryByTestId('clean-since-node-1')).toBeNull();
      cleanup();
    }
  });

  it('picking a node that tampers asks first; "Use it anyway" sends the confirmation, Cancel nothing', async () => {
    const store = createAppStore();
    store.getState().setNodes({ nodes: [FLAGGED, HONEST], fetchedAt: 1, source: 'x', via: 'direct' });
    const picks: Array<[string, boolean | undefined]> = [];
    const switchTo: Actions['switchTo'] = async (id, confirm) => {
      picks.push([id, confirm]);
      return { ok: true, value: { switchId: 1 } };
    };
    mount(<Nodes />, store, { switchTo });
    fireEvent.click(screen.getByRole('button', { name: `Connect to ${FLAGGED.host}` }));
    const dialog = screen.getByRole('alertdialog', { name: `${FLAGGED.host} was found to tamper with traffic` });
    expect(dialog.textContent).toMatch(/Use it anyway\? Prefer HTTPS sites/);
    expect(picks).toEqual([]);
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: `Connect to ${FLAGGED.host}` }));
    fireEvent.click(screen.getByRole('button', { name: 'Use it anyway' }));
    // An honest node is picked at once.
    fireEvent.click(screen.getByRole('button', { name: `Connect to ${HONEST.host}` }));
    await waitFor(() =>
      expect(picks).toEqual([
        [FLAGGED.id, true],
        [HONEST.id, undefined],
      ]),
    );
  });

  it('"Check" asks for a check of that node now, and its row says "checking…" meanwhile', async () => {
    const store = createAppStore();
    store.getState().setNodes({ nodes: [FRESH], fetchedAt: 1, source: 'x', via: 'direct' });
    let release: () => void = () => {};
    const checked: string[] = [];
    const checkNode: Actions['checkNode'] = async (id) => {
      checked.push(id);
      store.getState().setChecking(id, true);
      await new Promise<void>((r) => (release = r));
      store.getState().setChecking(id, false);
      store.getState().setNodeHonesty(id, honesty({ verdict: 'honest', checkedAt: 99_000 }));
      return { ok: true, value: honesty({ verdict: 'honest', checkedAt: 99_000 }) };
    };
    mount(<Nodes />, store, { checkNode });
    fireEvent.click(screen.getByRole('button', { name: `Check ${FRESH.host} for tampering` }));
    await waitFor(() => expect(screen.getByTestId('honesty-node-3').textContent).toBe(' · checking…'));
    release();
    await waitFor(() => expect(screen.getByTestId('honesty-node-3').textContent).toBe(' · ✓ checked'));
    expect(checked).toEqual([FRESH.id]);
  });

  it('Overview warns when the node in use was found to tamper, and counts the verdicts (in Chinese too)', () => {
    const store = createAppStore();
    store
      .getState()
      .setNodes({ nodes: [{ ...FLAGGED, id: 'n1', host: 'n1' }], fetchedAt: 1, source: 'x', via: 'direct' });
    const st = status();
    store.getState().setStatus({
      ...st,
      active: { ...st.active!, honesty: 'tls-interception' },
      honesty: { enabled: true, honest: 12, flagged: 2, unchecked: 80, checking: 1, lastFlagged: null },
    });
    mount(<Overview />, store);
    expect(screen.getByTestId('active-flagged').textContent).toBe(
      'n1, the node in use, was found to tamper with traffic: tampers (reads HTTPS).',
    );
    expect(screen.getByTestId('active-honesty').textContent).toBe('⚠ tampers (reads HTTPS)');
    expect(screen.getByTestId('honesty-summary').textContent).toBe('ChecksNode checks: 12 checked, 2 found to tamper');
    cleanup();
    mount(<Overview />, store, {}, 'zh-CN');
    expect(screen.getByTestId('active-flagged').textContent).toBe(
      '正在使用的节点 n1 被发现篡改流量：篡改（窃听 HTTPS）。',
    );
  });

  it('Settings turns the checks and the privacy opt-ins on and off, names check pages, and refuses a link that is not http://', async () => {
    const store = createAppStore();
    store.getState().setSettings(fakeSettings({ startAtLogin: null }));
    const { saved, saveSettings } = savingCore();
    mount(<Settings />, store, { saveSettings });
    const privacy = screen.getByTestId('privacy');
    expect(privacy.textContent).toMatch(/Trust and privacy/);
    fireEvent.click(screen.getByRole('checkbox', { name: 'Encrypted DNS in the tunnel' }));
    fireEvent.click(screen.getByRole('checkbox', { name: 'HTTPS only through volunteer nodes' }));
    fireEvent.change(screen.getByLabelText(/Plain web pages to check/), { target: { value: 'https://example.org/' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toMatch(/http:\/\/ or https:\/\//));
    expect(saved).toEqual([]);
    fireEvent.change(screen.getByLabelText(/Plain web pages to check/), {
      target: { value: 'http://example.org/fixed.txt' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(saved).toEqual([
        {
          privacy: {
            checkNodes: true,
            checkUrls: ['http://example.org/fixed.txt'],
            encryptedDns: true,
            httpsOnly: true,
          },
        },
      ]),
    );
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Saved.'));
    // Checks off: the pages to check are not asked for.
    fireEvent.click(screen.getByRole('checkbox', { name: 'Check nodes for tampering' }));
    expect(screen.queryByLabelText(/Plain web pages to check/)).toBeNull();
  });

  it('Persian: the row and the question are in Persian', () => {
    const store = createAppStore();
    store.getState().setNodes({ nodes: [FLAGGED], fetchedAt: 1, source: 'x', via: 'direct' });
    mount(<Nodes />, store, {}, 'fa');
    expect(screen.getByTestId('honesty-node-1').textContent).toBe(' · ⚠ دستکاری (DNS)');
  });
});

describe('encrypted DNS applies from the next tunnel (#59)', () => {
  it('Settings says so while the tunnel in use does otherwise, and says nothing once they agree (in Chinese too)', () => {
    for (const [lang, on] of [
      ['en', /On from the next tunnel: the one in use still asks the node’s resolver/],
      ['zh-CN', /从下一条隧道起生效/],
    ] as const) {
      const store = createAppStore();
      store.getState().setSettings(fakeSettings({}));
      const st = status();
      store.getState().setStatus({ ...st, privacy: { encryptedDns: false, encryptedDnsNext: true, httpsOnly: false } });
      mount(<Settings />, store, {}, lang);
      expect(screen.getByTestId('encrypted-dns-next').textContent).toMatch(on);
      act(() =>
        store
          .getState()
          .setStatus({ ...st, privacy: { encryptedDns: true, encryptedDnsNext: true, httpsOnly: false } }),
      );
      expect(screen.queryByTestId('encrypted-dns-next')).toBeNull();
      cleanup();
    }
  });
});
