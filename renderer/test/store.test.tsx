// @vitest-environment happy-dom
import { act, cleanup, render, screen } from '@testing-library/react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, describe, expect, it } from 'vitest';
import { takeToken } from '../src/client/token.js';
import { AppContext } from '../src/components/context.js';
import { flagOf, formatAgo, formatBytes, formatCountdown } from '../src/format.js';
import { createI18n, systemLanguage } from '../src/i18n/index.js';
import { en } from '../../core/api/catalog/en.js';
import { zhCN } from '../../core/api/catalog/zh-CN.js';
import { zhTW } from '../../core/api/catalog/zh-TW.js';
import { fa } from '../../core/api/catalog/fa.js';
import type { Actions } from '../src/store/feed.js';
import { createAppStore } from '../src/store/index.js';
import { LATENCY_MAX_POINTS, LATENCY_WINDOW_MS } from '../src/store/latency-slice.js';
import { MAX_LOG_LINES } from '../src/store/logs-slice.js';
import { Nodes, renderCounts, sortAndFilter } from '../src/views/Nodes.js';
import { Overview } from '../src/views/Overview.js';
import { Banner } from '../src/components/Banner.js';
import { connectStore } from '../src/store/feed.js';
import type { CoreClient, CoreEvent } from '../src/client/core-client.js';
import { node, status } from './fakes.js';

afterEach(cleanup);

const noActions = new Proxy({}, { get: () => async () => ({ ok: true, value: null }) }) as Actions;

function mount(ui: React.ReactElement, store = createAppStore(), lng: 'en' | 'zh-CN' = 'en') {
  const view = render(
    <I18nextProvider i18n={createI18n(lng)}>
      <AppContext.Provider value={{ store, actions: noActions, now: () => 100_000 }}>{ui}</AppContext.Provider>
    </I18nextProvider>,
  );
  return { store, ...view };
}

describe('slices', () => {
  it('keeps the latency series to the window and the point cap', () => {
    const store = createAppStore();
    const now = 50 * 60_000;
    store
      .getState()
      .addLatency([{ nodeId: 'a', at: now - LATENCY_WINDOW_MS - 1, kind: 'url', ms: 5, success: true }], now);
    expect(store.getState().latency.a).toBeUndefined();
    const many = Array.from({ length: LATENCY_MAX_POINTS + 50 }, (_, i) => ({
      nodeId: 'a',
      at: now - 1000 + i / 10,
      kind: 'tcp' as const,
      ms: i,
      success: true,
    }));
    store.getState().addLatency(many, now);
    expect(store.getState().latency.a).toHaveLength(LATENCY_MAX_POINTS);
    store.getState().addLatency([{ nodeId: 'a', at: now - 5000, kind: 'url', ms: 1, success: true }], now); // late: put in its place
    const at = store.getState().latency.a!.map((p) => p.at);
    expect([...at].sort((x, y) => x - y)).toEqual(at);
  });

  it('keeps a fixed number of log lines', () => {
    const store = createAppStore();
    for (let i = 0; i < MAX_LOG_LINES + 20; i++) store.getState().addLog({ time: i, level: '30', msg: `line ${i}` });
    expect(store.getState().logs).toHaveLength(MAX_LOG_LINES);
    expect(store.getState().logs[0]!.msg).toBe('line 20');
  });

  it('takes the recent log a (re)connect replays without showing a line twice', () => {
    const store = createAppStore();
    const add = (time: number, msg: string) => store.getState().addLog({ time, level: '30', msg });
    add(1, 'a');
    add(2, 'b');
    add(2, 'c');
    // Replayed after a reconnect: every line so far, then one logged while the window was away.
    for (const [t, m] of [
      [1, 'a'],
      [2, 'b'],
      [2, 'c'],
      [3, 'd'],
    ] as const)
      add(t, m);
    expect(store.getState().logs.map((l) => l.msg)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('turns two status samples into up/down throughput', () => {
    const store = createAppStore();
    store.getState().setStatus(status({ traffic: { bytesUp: 0, bytesDown: 0, at: 1000 } }));
    store.getState().setStatus(status({ traffic: { bytesUp: 2048, bytesDown: 4 * 1024 * 1024, at: 3000 } }));
    expect(store.getState().throughput).toEqual({ up: 1024, down: 2 * 1024 * 1024 });
  });
});

describe('views', () => {
  it('does not re-render the node table on a latency tick or a status update (narrow selectors)', () => {
    const store = createAppStore();
    store
      .getState()
      .setNodes({ nodes: Array.from({ length: 250 }, (_, i) => node(i)), fetchedAt: 1, source: 'x', via: 'direct' });
    mount(<Nodes />, store);
    // Windowed: the header, the rows in view (and a spacer standing for the rest); the table says it has 251 rows.
    expect(screen.getByRole('table').getAttribute('aria-rowcount')).toBe('251');
    expect(screen.getAllByRole('row').length).toBeLessThan(80);
    const before = renderCounts.nodeTable;
    act(() => {
      for (let i = 0; i < 20; i++)
        store.getState().addLatency([{ nodeId: 'node-1', at: Date.now() + i, kind: 'url', ms: i, success: true }]);
      store.getState().setStatus(status());
      store.getState().setStatus(status({ sessions: { active: 9, total: 9, rejected: 0 } }));
    });
    expect(renderCounts.nodeTable).toBe(before);
    act(() => store.getState().setNodes({ nodes: [node(1)], fetchedAt: 2, source: 'x', via: 'direct' }));
    expect(renderCounts.nodeTable).toBe(before + 1);
  });

  it('gives each row a "Connect to <host>" button, and says which node is active', () => {
    const store = createAppStore();
    store
      .getState()
      .setNodes({ nodes: [node(1, { state: 'active' }), node(2)], fetchedAt: 1, source: 'x', via: 'direct' });
    mount(<Nodes />, store);
    expect(screen.getByRole('button', { name: 'Connect to public-vpn-2' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Connect to public-vpn-1' })).toBeNull();
    expect(screen.getByText('Active')).toBeTruthy();
  });

  it('sorts by any column with nulls last and filters by country, protocol and text', () => {
    const nodes = [node(1, { rttMs: null }), node(2, { rttMs: 5 }), node(3, { rttMs: 50, host: 'special-host' })];
    expect(
      sortAndFilter(nodes, { sort: 'rttMs', desc: false, country: '', proto: '', text: '' }).map((n) => n.id),
    ).toEqual(['node-2', 'node-3', 'node-1']);
    expect(
      sortAndFilter(nodes, { sort: 'rttMs', desc: true, country: '', proto: '', text: '' }).map((n) => n.id),
    ).toEqual(['node-3', 'node-2', 'node-1']);
    expect(
      sortAndFilter(nodes, { sort: 'host', desc: false, country: '', proto: '', text: 'SPECIAL' }).map((n) => n.id),
    ).toEqual(['node-3']);
    expect(
      sortAndFilter(nodes, { sort: 'host', desc: false, country: 'KR', proto: 'udp', text: '' }).map((n) => n.id),
    ).toEqual([]);
  });

  it('with several tunnels, lists each member with its sessions and marks one that is avoided (issue #15)', () => {
    const store = createAppStore();
    store.getState().setNodes({
      nodes: [node(1, { state: 'active' }), node(2, { state: 'active' })],
      fetchedAt: 1,
      source: 'x',
      via: 'direct',
    });
    const m = (i: number, over: object) => ({
      egressId: `t${i}`,
      nodeId: `node-${i}`,
      protocol: 'openvpn' as const,
      primary: i === 1,
      host: null,
      ip: null,
      country: null,
      since: 0,
      down: false,
      sessions: 2,
      bytesUp: 0,
      bytesDown: 2048,
      rttMs: 40,
      failures: 0,
      ...over,
    });
    store.getState().setStatus(
      status({
        members: [m(1, {}), m(2, { down: true, sessions: 1 })],
        balance: { strategy: 'round-robin', tunnels: 2 },
      }),
    );
    const { unmount } = mount(<Overview />, store);
    const region = screen.getByRole('region', { name: 'Tunnels in use' });
    expect(region.textContent).toContain('2 tunnels, round robin');
    expect(region.textContent).toContain('public-vpn-1 · OpenVPN · active');
    expect(region.textContent).toContain('1 session');
    expect(region.textContent).toContain('avoided: failing its probes');
    unmount();
    // One tunnel: no list (the active card says it all).
    store.getState().setStatus(status());
    mount(<Overview />, store);
    expect(screen.queryByRole('region', { name: 'Tunnels in use' })).toBeNull();
  });

  it("says when another program changed the system proxy, until dismissed; Gatehop's own changes say nothing", async () => {
    const store = createAppStore();
    let emit: (ev: CoreEvent) => void = () => {};
    const client: CoreClient = {
      call: async () => ({ ok: false, error: { code: 'GH_ERR_TEST', message: 'not in this test' } }) as never,
      subscribe: (fn) => ((emit = fn), () => {}),
      onConnection: () => () => {},
      onResync: () => () => {},
      close: () => {},
    };
    connectStore(store, client);
    store.getState().setConnection({ state: 'open' });
    store.getState().setActionError(null);
    act(() => emit({ type: 'sysproxy', data: { type: 'applied', message: 'system proxy set to 127.0.0.1:1080' } }));
    mount(<Banner />, store);
    expect(screen.queryByText(/Another program changed the system proxy/)).toBeNull();
    act(() =>
      emit({
        type: 'sysproxy',
        data: { type: 'overridden', message: 'another program changed the system proxy (none)' },
      }),
    );
    expect(screen.getByText(/Another program changed the system proxy/)).toBeTruthy();
    act(() => screen.getByRole('button', { name: 'Dismiss' }).click());
    expect(screen.queryByText(/Another program changed the system proxy/)).toBeNull();
  });

  it('lists draining tunnels in a region named "Draining" with a countdown and Close now, in Chinese too', () => {
    const store = createAppStore();
    store.getState().setNodes({
      nodes: [node(1, { state: 'active' }), node(2, { state: 'draining' })],
      fetchedAt: 1,
      source: 'x',
      via: 'direct',
    });
    store.getState().setStatus(
      status({
        draining: [
          {
            egressId: 'tunnel-0',
            nodeId: 'node-2',
            host: 'node-2',
            ip: '203.0.113.2',
            protocol: 'sstp',
            sessions: 1,
            since: 0,
            graceEndsAt: 100_000 + 65_000,
          },
        ],
      }),
    );
    const { unmount } = mount(<Overview />, store);
    const region = screen.getByRole('region', { name: 'Draining' });
    expect(region.textContent).toContain('public-vpn-2');
    expect(region.textContent).toContain('1 session left');
    expect(region.textContent).toContain('01:05');
    expect(screen.getByRole('button', { name: 'Close now: public-vpn-2' })).toBeTruthy();
    unmount();
    mount(<Overview />, store, 'zh-CN');
    expect(screen.getByRole('region', { name: '排空中' })).toBeTruthy();
  });
});

describe('formatting, language and token', () => {
  it('formats what people read', () => {
    const t = createI18n('en').t;
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5.0 MiB');
    expect(formatCountdown(125_000)).toBe('02:05');
    expect(formatAgo(0 + 1, 1 + 180_000, t)).toBe('3 min ago');
    expect(flagOf('jp')).toBe('🇯🇵');
    expect(systemLanguage(['zh-TW', 'en'])).toBe('zh-TW');
    expect(systemLanguage(['zh-Hant-HK'])).toBe('zh-TW');
    expect(systemLanguage(['zh-Hans-CN', 'zh-TW'])).toBe('zh-CN');
    expect(systemLanguage(['fa-IR', 'en'])).toBe('fa');
    expect(systemLanguage(['de-DE', 'fa'])).toBe('fa');
    expect(systemLanguage(['de-DE'])).toBe('en');
  });

  it('has every English key in each catalogue (简体中文, 繁體中文, فارسی), with the same {{placeholders}}', () => {
    const keys = (o: object, p = ''): string[] =>
      Object.entries(o).flatMap(([k, v]) => (typeof v === 'object' ? keys(v as object, `${p}${k}.`) : [`${p}${k}`]));
    const leaf = (o: object, path: string): string =>
      path.split('.').reduce((x: unknown, k) => (x as Record<string, unknown>)[k], o) as string;
    const holes = (text: string): string[] => [...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!).sort();
    for (const [name, cat] of Object.entries({ zhCN, zhTW, fa })) {
      expect(keys(cat).sort(), name).toEqual(keys(en).sort());
      for (const k of keys(en)) expect(holes(leaf(cat, k)), `${name} ${k}`).toEqual(holes(leaf(en, k)));
    }
  });

  it('takes the token from the fragment into sessionStorage and out of the address bar', () => {
    window.history.replaceState(null, '', '/ui/#token=abc%2Bdef');
    expect(takeToken(window.location, window.sessionStorage, window.history)).toBe('abc+def');
    expect(window.location.hash).toBe('');
    expect(takeToken(window.location, window.sessionStorage, window.history)).toBe('abc+def');
  });
});
