// @vitest-environment happy-dom
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Actions } from '../src/store/feed.js';
import { createAppStore } from '../src/store/index.js';
import { Nodes } from '../src/views/Nodes.js';
import { Overview } from '../src/views/Overview.js';
import { node, status } from './fakes.js';
import { mount } from './mount.js';

afterEach(cleanup);

/** A core in a blocked network: no list, every source failed. */
const blocked = status({
  active: null,
  members: [],
  network: { state: 'waiting', reason: 'no-node-list', since: 1000, attempts: 2, nextAttemptAt: 120_000 },
  list: {
    source: null,
    via: 'none',
    fetchedAt: null,
    nodes: 0,
    refreshing: false,
    skipped: {},
    sources: [
      {
        url: 'https://www.vpngate.net/api/iphone/',
        kind: 'official',
        via: 'direct',
        ok: false,
        error: 'fetch https://www.vpngate.net/api/iphone/: timed out',
        at: 90_000,
      },
      {
        url: 'http://198.51.100.7:8080/api/iphone/',
        kind: 'mirror',
        via: 'direct',
        ok: false,
        error: 'the list is an HTML page, not CSV',
        at: 95_000,
      },
      { url: 'https://cdn.example/vpngate.csv', kind: 'user', via: null, ok: null, error: null, at: null },
    ],
  },
});

function mountBlocked(ui: React.ReactElement, actions: Partial<Actions>, lng: 'en' | 'zh-CN' = 'en') {
  const store = createAppStore();
  store.getState().setStatus(blocked);
  store.getState().setNodes({ nodes: [], fetchedAt: null, source: 'none', via: 'none' });
  return mount(ui, store, actions, lng);
}

describe('no node list yet (issue #20)', () => {
  it('Overview says what was tried, each source with why it failed, and offers a source URL and a file', () => {
    mountBlocked(<Overview />, {});
    expect(screen.getByRole('heading', { name: 'No node list yet' })).toBeTruthy();
    expect(screen.getByText(/fetch https:\/\/www\.vpngate\.net\/api\/iphone\/: timed out/)).toBeTruthy();
    expect(screen.getByText(/the list is an HTML page/)).toBeTruthy();
    // A source not tried yet is not "what it tried".
    expect(screen.queryByText('https://cdn.example/vpngate.csv')).toBeNull();
    expect(screen.getByLabelText('Add a source URL')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Import a list file…' })).toBeTruthy();
  });

  it('in Chinese too', () => {
    mountBlocked(<Overview />, {}, 'zh-CN');
    expect(screen.getByRole('heading', { name: '尚无节点列表' })).toBeTruthy();
    expect(screen.getByLabelText('添加来源网址')).toBeTruthy();
    expect(screen.getByRole('button', { name: '导入列表文件…' })).toBeTruthy();
    expect(screen.getAllByText(/失败（直连）/).length).toBe(2);
  });

  it('adds a source URL (refusing one that is not http/https) and says it is being fetched', async () => {
    const addListSource = vi.fn(async () => ({
      ok: true as const,
      value: { settings: {} as never, restartRequired: [] },
    }));
    mountBlocked(<Nodes />, { addListSource });
    const input = screen.getByLabelText('Add a source URL');
    fireEvent.change(input, { target: { value: 'ftp://nope' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add' }));
    expect(await screen.findByRole('alert')).toBeTruthy();
    expect(addListSource).not.toHaveBeenCalled();
    fireEvent.change(input, { target: { value: 'https://cdn.example/vpngate.csv' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add' }));
    await waitFor(() => expect(addListSource).toHaveBeenCalledWith('https://cdn.example/vpngate.csv'));
    expect(await screen.findByText('Added. Gatehop is fetching from it now.')).toBeTruthy();
  });

  it('imports a picked file and says how many nodes it took; a file that is not a list gets the reason', async () => {
    const importList = vi
      .fn<Actions['importList']>()
      .mockResolvedValueOnce({
        ok: false,
        error: { code: 'GH_ERR_LIST_INVALID', message: 'the list is an HTML page, not CSV' },
      })
      .mockResolvedValueOnce({ ok: true, value: { imported: 97, skipped: {}, nodes: 97 } });
    mountBlocked(<Nodes />, { importList });
    const picker = screen.getAllByLabelText('Import a list file…').find((e) => e.tagName === 'INPUT')!;
    await act(async () => fireEvent.change(picker, { target: { files: [new File(['<html>'], 'portal.html')] } }));
    expect(await screen.findByText('That file is not a VPN Gate list: the list is an HTML page, not CSV')).toBeTruthy();
    await act(async () => fireEvent.change(picker, { target: { files: [new File(['*vpn_servers'], 'vpngate.csv')] } }));
    expect(await screen.findByText('Imported 97 nodes; 97 in the pool now.')).toBeTruthy();
    expect(importList).toHaveBeenLastCalledWith('*vpn_servers');
  });

  it('with a list: says where it came from and when, and shows when each node was last listed', () => {
    const store = mountBlocked(<Nodes />, {});
    act(() => {
      store.getState().setStatus(
        status({
          list: {
            source: 'http://198.51.100.7:8080/api/iphone/',
            via: 'mirror',
            fetchedAt: 40_000,
            nodes: 2,
            refreshing: false,
            sources: blocked.list!.sources,
            skipped: { 'loopback-address': 2, 'link-local-address': 1, 'private-address': 4, 'remote-mismatch': 1 },
          },
        }),
      );
      store.getState().setNodes({
        nodes: [node(1, { lastListedAt: 100_000 - 3 * 3600_000 }), node(2, { lastListedAt: 95_000 })],
        fetchedAt: 40_000,
        source: 'x',
        via: 'mirror',
      });
    });
    expect(screen.getByTestId('list-origin').textContent).toBe(
      'List of 2 nodes from a VPN Gate mirror, 1 min ago · http://198.51.100.7:8080/api/iphone/',
    );
    expect(screen.getByText('3 h ago')).toBeTruthy();
    expect(screen.getByText('Where the list comes from: 3 sources, 2 failing')).toBeTruthy(); // Rows a list aimed at this machine or the LAN are named, grouped as the user can act on them (#34).
    expect(screen.getByTestId('list-skipped').textContent).toBe(
      'Rows not used: 3 aimed at this computer or its local link · 4 on private (home or office network) addresses · 1 whose profile names another address',
    );
  });
});
