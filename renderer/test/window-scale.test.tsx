// @vitest-environment happy-dom
/**
 * The window at a thousand nodes (issue #23): one latency batch per ranking costs one pass, a
 * `nodes` event re-renders only the rows that changed, the table is windowed, a hidden window
 * renders nothing, the Settings form does not undo a change made elsewhere, banners announce
 * once, and the tabs are a tablist driven by the keyboard.
 */
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from '../src/App.js';
import { Banner } from '../src/components/Banner.js';
import { AppContext } from '../src/components/context.js';
import { Header } from '../src/components/Header.js';
import { createI18n } from '../src/i18n/index.js';
import type { Actions } from '../src/store/feed.js';
import { createAppStore } from '../src/store/index.js';
import { shareNodes } from '../src/store/nodes-slice.js';
import type { Settings as SettingsDto } from '../src/store/types.js';
import { Nodes, renderCounts } from '../src/views/Nodes.js';
import { Overview } from '../src/views/Overview.js';
import { Settings } from '../src/views/Settings.js';
import { node, settings as fakeSettings, status } from './fakes.js';

afterEach(cleanup);

function mount(ui: React.ReactElement, store = createAppStore(), actions: Partial<Actions> = {}, now = () => 100_000) {
  const all = new Proxy(actions, {
    get: (o, k) => (o as Record<string, unknown>)[k as string] ?? (async () => ({ ok: true, value: null })),
  }) as Actions;
  const view = render(
    <I18nextProvider i18n={createI18n('en')}>
      <AppContext.Provider value={{ store, actions: all, now }}>{ui}</AppContext.Provider>
    </I18nextProvider>,
  );
  return { store, ...view };
}

const SETTINGS: SettingsDto = fakeSettings();

describe('at scale', () => {
  it('takes a ranking of 5,000 nodes as one latency batch, keeping untouched series as they were', () => {
    const store = createAppStore();
    store.getState().addLatency([{ nodeId: 'other', at: 99_000, kind: 'url', ms: 5, success: true }], 100_000);
    const other = store.getState().latency.other;
    const batch = Array.from({ length: 5000 }, (_, i) => ({
      nodeId: `n${i}`,
      at: 100_000,
      kind: 'tcp' as const,
      ms: i % 90,
      success: true,
    }));
    // One store update per batch (not one per node, each copying the whole map).
    let updates = 0;
    const off = store.subscribe(() => updates++);
    store.getState().addLatency(batch, 100_000);
    store.getState().addLatency(
      batch.map((s) => ({ ...s, at: 101_000 })),
      101_000,
    );
    off();
    expect(updates).toBe(2);
    expect(store.getState().latency.n4999).toHaveLength(2);
    expect(store.getState().latency.other).toBe(other);
  });

  it('a nodes event re-renders only the rows that changed; the table shows a window of a 1,000-node pool', () => {
    const store = createAppStore();
    const nodes = Array.from({ length: 1000 }, (_, i) => node(i));
    store.getState().setNodes({ nodes, fetchedAt: 1, source: 'x', via: 'direct' });
    mount(<Nodes />, store);
    const table = screen.getByRole('table');
    expect(table.getAttribute('aria-rowcount')).toBe('1001');
    const rows = screen.getAllByRole('row');
    expect(rows.length).toBeLessThan(100);
    expect(rows[1]!.getAttribute('aria-rowindex')).toBe('2');
    // The same list again as fresh objects (what every event brings), one node changed.
    const before = renderCounts.nodeRow;
    const fresh = nodes.map((n) => ({
      ...n,
      scoreTerms: n.scoreTerms && { ...n.scoreTerms },
      protocols: n.protocols.map((p) => ({ ...p })),
    }));
    fresh[0] = { ...fresh[0]!, rttMs: 999 };
    act(() => store.getState().setNodes({ nodes: fresh, fetchedAt: 2, source: 'x', via: 'direct' }));
    expect(renderCounts.nodeRow - before).toBe(1);
    expect(store.getState().nodes[1]).toBe(nodes[1]);
    // Nothing changed at all: the very array stays.
    const kept = store.getState().nodes;
    expect(
      shareNodes(
        kept,
        kept.map((n) => ({ ...n })),
      ),
    ).toBe(kept);
  });

  it('on Overview, a status tick with 5,000 nodes looks the active node up by id instead of walking the list', () => {
    const store = createAppStore();
    let reads = 0;
    // Counts every element read of the node list, by any selector.
    const nodes = new Proxy(
      Array.from({ length: 5000 }, (_, i) => node(i)),
      { get: (t, k, r) => (typeof k === 'string' && /^\d+$/.test(k) && reads++, Reflect.get(t, k, r)) },
    );
    store.getState().setNodes({ nodes, fetchedAt: 1, source: 'x', via: 'direct' });
    store.getState().setStatus(status());
    mount(<Overview />, store);
    reads = 0;
    for (let i = 1; i <= 10; i++)
      act(() => store.getState().setStatus(status({ sessions: { active: i, total: i, rejected: 0 } })));
    expect(reads).toBe(0);
  });

  it('renders nothing while the window is hidden; the store still takes every event', () => {
    const store = createAppStore();
    store.getState().setStatus(status());
    mount(<App languages={['en']} />, store);
    expect(screen.getByRole('tablist')).toBeTruthy();
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    act(() => void document.dispatchEvent(new Event('visibilitychange')));
    expect(screen.queryByRole('tablist')).toBeNull();
    act(() => store.getState().setStatus(status({ sessions: { active: 7, total: 9, rejected: 0 } })));
    expect(store.getState().status!.sessions.active).toBe(7);
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'visible' });
    act(() => void document.dispatchEvent(new Event('visibilitychange')));
    expect(screen.getByRole('tablist')).toBeTruthy();
  });
});

describe('the Settings form', () => {
  it('does not undo a change made in the tray while it is open: it saves only what the user changed', async () => {
    const store = createAppStore();
    store.getState().setSettings(SETTINGS);
    const saved: Array<Partial<SettingsDto>> = [];
    mount(<Settings />, store, {
      saveSettings: async (patch: Partial<SettingsDto>) => (
        saved.push(patch),
        { ok: true, value: { settings: { ...store.getState().settings!, ...patch }, restartRequired: [] } }
      ),
    } as Partial<Actions>);
    fireEvent.change(screen.getByLabelText('Drain grace (minutes)'), { target: { value: '5' } });
    // Meanwhile the tray turns a notification kind off.
    act(() =>
      store.getState().setSettings({ ...SETTINGS, notifications: { ...SETTINGS.notifications, switched: false } }),
    );
    expect((screen.getByLabelText('When the node changes') as HTMLInputElement).checked).toBe(false);
    expect((screen.getByLabelText('Drain grace (minutes)') as HTMLInputElement).value).toBe('5');
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Save' })));
    expect(saved).toEqual([{ drainGraceMs: 300_000 }]);
  });

  it('says what is wrong in the UI language, in the units the form asks', async () => {
    const store = createAppStore();
    store.getState().setSettings(SETTINGS);
    render(
      <I18nextProvider i18n={createI18n('zh-CN')}>
        <AppContext.Provider
          value={{
            store,
            actions: new Proxy({}, { get: () => async () => ({ ok: true, value: null }) }) as Actions,
            now: () => 1,
          }}
        >
          <Settings />
        </AppContext.Provider>
      </I18nextProvider>,
    );
    fireEvent.change(screen.getByLabelText('代理监听地址'), { target: { value: 'nonsense' } });
    fireEvent.change(screen.getByLabelText('自动选择测试间隔（秒）'), { target: { value: '0' } });
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: '保存' })));
    expect(screen.getByText('请输入 主机:端口，例如 127.0.0.1:1080。')).toBeTruthy();
    expect(screen.getByText('至少为 1。')).toBeTruthy(); // 1 s, not 1000 ms
  });
});

describe('accessibility', () => {
  it('a banner with a countdown keeps its element and announces its text once (the seconds are not read out)', () => {
    const store = createAppStore();
    store.getState().setConnection({ state: 'down', since: 90_000, retryAt: 110_000, reason: 'ECONNREFUSED' });
    let now = 100_000;
    mount(<Banner />, store, {}, () => now);
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toMatch(/not reachable\. Retrying….*Retry in 10 s/);
    expect(alert.querySelector('[aria-hidden="true"]')!.textContent).toMatch(/10 s/);
    now = 105_000;
    act(() =>
      store.getState().setConnection({ state: 'down', since: 90_000, retryAt: 110_000, reason: 'ECONNREFUSED' }),
    );
    expect(screen.getByRole('alert')).toBe(alert);
  });

  it('a damaged database is said once: the banner names the kept file in the chosen language, and Dismiss hides it for good (#32)', () => {
    const store = createAppStore();
    store.getState().setConnection({ state: 'open' });
    const incident = {
      health: 'recovered' as const,
      at: 12_345,
      movedTo: '/data/gatehop.db.damaged-2026',
      found: 'open' as const,
      reason: 'quick_check: page 7 is never used',
      carried: ['selection', 'settings'],
    };
    store.getState().setStatus({ ...status(), store: { health: 'recovered', incident } });
    mount(<Banner />, store);
    const line = screen.getByRole('status');
    expect(line.textContent).toMatch(
      /history file was damaged.*\/data\/gatehop\.db\.damaged-2026.*pinned node and settings were kept/,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByRole('status')).toBeNull();
    // Another status with the same incident does not bring it back; a new store does not either.
    act(() => store.getState().setStatus({ ...status(), store: { health: 'recovered', incident } }));
    expect(screen.queryByRole('status')).toBeNull();
    expect(createAppStore().getState().dismissedStoreIncidentAt).toBe(12_345);
  });

  it('the tabs are a tablist: arrow keys, Home and End move and focus, one tab in the Tab order, each controls the panel', () => {
    const store = createAppStore();
    mount(
      <>
        <Header />
        <main role="tabpanel" id="panel-overview" />
      </>,
      store,
    );
    const tabs = screen.getAllByRole('tab');
    expect(tabs.map((t) => t.getAttribute('tabindex'))).toEqual(['0', '-1', '-1', '-1', '-1', '-1', '-1']);
    expect(tabs[0]!.getAttribute('aria-controls')).toBe('panel-overview');
    tabs[0]!.focus();
    fireEvent.keyDown(tabs[0]!, { key: 'ArrowRight' });
    expect(store.getState().view).toBe('nodes');
    expect(document.activeElement).toBe(screen.getByRole('tab', { name: 'Nodes' }));
    fireEvent.keyDown(document.activeElement!, { key: 'End' });
    expect(store.getState().view).toBe('settings');
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowRight' }); // wraps
    expect(store.getState().view).toBe('overview');
    document.documentElement.dir = 'rtl';
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowLeft' }); // right to left: left is next
    expect(store.getState().view).toBe('nodes');
    document.documentElement.dir = 'ltr';
  });
});
