// @vitest-environment happy-dom
/**
 * What people reach for in the window (issue #23): copy the proxy address, test all nodes and one
 * node, where am I, search and pause in Logs, search in Connections, start at login and Restart
 * now in Settings; and the window in Persian (right to left, Persian digits) and with country
 * names in the UI language.
 */
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { App } from '../src/App.js';
import { ProxyAddress, proxyForms } from '../src/components/ProxyAddress.js';
import { WhereAmI } from '../src/components/WhereAmI.js';
import { formatBytes, formatNumber, setFormatLocale } from '../src/format.js';
import type { Actions } from '../src/store/feed.js';
import { createAppStore } from '../src/store/index.js';
import type { Settings as SettingsDto } from '../src/store/types.js';
import { Connections } from '../src/views/Connections.js';
import { Logs } from '../src/views/Logs.js';
import { Nodes } from '../src/views/Nodes.js';
import { Settings } from '../src/views/Settings.js';
import { node, settings as fakeSettings, status } from './fakes.js';
import { mount } from './mount.js';

afterEach(() => {
  cleanup();
  setFormatLocale('en');
  document.documentElement.dir = 'ltr';
});

describe('what people reach for', () => {
  it('copies the proxy address as SOCKS5, HTTP and a terminal line, and says so', async () => {
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText } });
    const store = createAppStore();
    store.getState().setStatus(status({ listen: { proxy: '127.0.0.1:1080', admin: null } }));
    mount(<ProxyAddress />, store);
    expect(screen.getByTestId('proxy-socks').textContent).toBe('socks5h://127.0.0.1:1080');
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Copy the Terminal address' })));
    expect(writeText).toHaveBeenCalledWith(
      'export https_proxy=http://127.0.0.1:1080 http_proxy=http://127.0.0.1:1080 all_proxy=socks5h://127.0.0.1:1080',
    );
    expect(screen.getByRole('status').textContent).toBe('Copied the Terminal address.');
    expect(proxyForms('::1:1080')[1]!.value).toBe('http://[::1]:1080');
  });

  it('Test all shows its progress and each node’s result; Cancel stops it; one node is tested from its row', async () => {
    const store = createAppStore();
    store.getState().setStatus(status());
    store.getState().setNodes({ nodes: [node(1), node(2)], fetchedAt: 1, source: 'x', via: 'direct' });
    const calls: string[] = [];
    mount(<Nodes />, store, {
      testAll: async () => (calls.push('all'), { ok: true, value: null }),
      cancelTest: async () => (calls.push('cancel'), { ok: true, value: { cancelled: true } }),
      testNode: async (id: string) => (
        calls.push(`one ${id}`),
        store.getState().setTestResult(id, { ms: 42, error: null }),
        { ok: true, value: null }
      ),
    } as unknown as Partial<Actions>);
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Test all' })));
    act(() =>
      store.getState().setNodeTest({
        sweepId: 1,
        state: 'running',
        url: 'u',
        total: 2,
        done: 1,
        ok: 1,
        failed: 0,
        last: { nodeId: 'node-1', ms: 17 },
        startedAt: 1,
      }),
    );
    expect(screen.getByRole('status').textContent).toMatch(/Testing 1 of 2 nodes/);
    expect((screen.getByRole('progressbar') as HTMLProgressElement).value).toBe(1);
    expect(screen.getByTestId('delay-node-1').textContent).toBe('17 ms');
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Cancel test' })));
    act(() =>
      store.getState().setNodeTest({
        sweepId: 1,
        state: 'cancelled',
        url: 'u',
        total: 2,
        done: 1,
        ok: 1,
        failed: 0,
        last: { nodeId: 'node-1', ms: 17 },
        startedAt: 1,
      }),
    );
    expect(screen.getByText('Test stopped after 1 of 2 nodes.')).toBeTruthy();
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Test public-vpn-2' })));
    expect(screen.getByTestId('delay-node-2').textContent).toBe('42 ms');
    expect(calls).toEqual(['all', 'cancel', 'one node-2']);
  });

  it('where am I: the exit measured through the tunnel beside the listed one, a relay node flagged', () => {
    const store = createAppStore();
    store.getState().setStatus(status({ active: { ...status().active!, nodeId: 'node-1', host: '203.0.113.1' } }));
    store.getState().setNodes({
      nodes: [node(1, { countryCode: 'JP', country: 'Japan' })],
      fetchedAt: 1,
      source: 'x',
      via: 'direct',
    });
    store.getState().setExit({ nodeId: 'node-1', address: '198.51.100.7', country: 'US', at: 99_000, error: null });
    mount(<WhereAmI />, store);
    expect(screen.getByTestId('exit-address').textContent).toMatch(/^198\.51\.100\.7 · 🇺🇸 United States/);
    expect(screen.getByTestId('exit-mismatch').textContent).toBe(
      'This node relays: your traffic leaves from United States, not from Japan as listed.',
    );
    cleanup();
    store
      .getState()
      .setExit({ nodeId: 'node-1', address: null, country: null, at: 99_000, error: 'exitCheck.url is not set' });
    mount(<WhereAmI />, store);
    expect(screen.getByText(/set exitCheck\.url/)).toBeTruthy();
  });

  it('Logs: search, and pause that holds the lines while new ones are counted', () => {
    const store = createAppStore();
    for (let i = 0; i < 5; i++)
      store.getState().addLog({ time: i + 1, level: '30', msg: i % 2 ? `tunnel up ${i}` : `list fetched ${i}` });
    mount(<Logs />, store);
    fireEvent.change(screen.getByRole('searchbox'), { target: { value: 'TUNNEL' } });
    expect(screen.getAllByRole('listitem').map((l) => l.textContent)).toEqual([
      expect.stringMatching(/tunnel up 3$/),
      expect.stringMatching(/tunnel up 1$/),
    ]);
    fireEvent.click(screen.getByRole('button', { name: 'Pause' }));
    act(() => store.getState().addLog({ time: 10, level: '30', msg: 'tunnel up 10' }));
    expect(screen.getAllByRole('listitem')).toHaveLength(2);
    fireEvent.click(screen.getByRole('button', { name: 'Resume (1 new line)' }));
    expect(screen.getAllByRole('listitem')[0]!.textContent).toMatch(/tunnel up 10$/);
  });

  it('Connections: search by client, target or node', () => {
    const store = createAppStore();
    store.getState().setConnections([
      {
        id: '1',
        client: '127.0.0.1:5000',
        target: 'example.org:443',
        egressId: 't1',
        nodeId: 'node-1',
        bytesUp: 1,
        bytesDown: 2,
        startedAt: 1,
      },
      {
        id: '2',
        client: '127.0.0.1:5001',
        target: 'files.test:80',
        egressId: 't1',
        nodeId: 'node-1',
        bytesUp: 1,
        bytesDown: 2,
        startedAt: 1,
      },
    ] as never);
    mount(<Connections />, store, {
      loadConnections: async () => undefined,
      closedConnections: async () => ({ ok: true, value: { connections: [], held: 0, max: 1000, kept: false } }),
    } as Partial<Actions>);
    fireEvent.change(screen.getByPlaceholderText('client, target or node'), { target: { value: 'files' } });
    expect(screen.getAllByRole('row')).toHaveLength(2); // the header and one session
    expect(screen.getByText('files.test:80')).toBeTruthy();
  });

  it('Settings: start at login (where the desktop app is), and Restart now when a saved setting needs it', async () => {
    const store = createAppStore();
    const settings: SettingsDto = fakeSettings();
    store.getState().setSettings(settings);
    store.getState().setStatus(status({ desktop: true }));
    const restarts: number[] = [];
    mount(<Settings />, store, {
      saveSettings: async (patch: Partial<SettingsDto>) => {
        store.getState().setSettings({ ...settings, ...patch }, ['listen']);
        return { ok: true, value: { settings: { ...settings, ...patch }, restartRequired: ['listen'] } };
      },
      restart: async () => (restarts.push(1), { ok: true, value: null }),
    } as unknown as Partial<Actions>);
    fireEvent.click(screen.getByLabelText('Start Gatehop when I log in'));
    fireEvent.change(screen.getByLabelText('Proxy listen address'), { target: { value: '127.0.0.1:1090' } });
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Save' })));
    expect(screen.getByRole('status').textContent).toMatch(/after Gatehop restarts: proxy listen address\./);
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Restart now' })));
    expect(restarts).toEqual([1]);
  });
});

describe('in the user’s language', () => {
  it('Persian: right to left, Persian digits, Persian text, localised country names', async () => {
    const store = createAppStore();
    store.getState().setSettings(
      fakeSettings({
        autoSelect: { intervalMs: 180_000, toleranceMs: 50, url: 'http://x.test/' },
        language: 'fa',
        startAtLogin: null,
      }),
    );
    store.getState().setStatus(status());
    store.getState().setNodes({
      nodes: [node(1, { countryCode: 'JP', country: 'Japan', rttMs: 42 })],
      fetchedAt: 1,
      source: 'x',
      via: 'direct',
    });
    store.getState().setView('nodes');
    mount(<App languages={['en']} />, store, {}, 'fa');
    await act(async () => undefined);
    expect(document.documentElement.dir).toBe('rtl');
    expect(document.documentElement.lang).toBe('fa');
    expect(screen.getByRole('tab', { name: 'سرورها' })).toBeTruthy();
    expect(screen.getByText('ژاپن')).toBeTruthy();
    expect(screen.getAllByText('۴۲ میلی‌ثانیه').length).toBeGreaterThan(0);
    expect(formatNumber(1080)).toBe('۱۰۸۰');
    expect(formatBytes(1536)).toBe('۱٫۵ KiB');
  });

  it('简体中文 and 繁體中文 name countries in their own script, not VPN Gate’s English', () => {
    const store = createAppStore();
    store.getState().setNodes({
      nodes: [node(1, { countryCode: 'KR', country: 'Korea Republic of' })],
      fetchedAt: 1,
      source: 'x',
      via: 'direct',
    });
    setFormatLocale('zh-CN');
    mount(<Nodes />, store, {}, 'zh-CN');
    expect(screen.getAllByText('韩国').length).toBeGreaterThan(0);
    cleanup();
    setFormatLocale('zh-TW');
    mount(<Nodes />, store, {}, 'zh-TW');
    expect(screen.getAllByText('南韓').length).toBeGreaterThan(0);
    expect(screen.getByRole('button', { name: '重新整理節點清單' })).toBeTruthy();
  });
});
