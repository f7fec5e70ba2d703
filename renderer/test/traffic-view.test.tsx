// @vitest-environment happy-dom
/**
 * The Traffic view and the closed connections (#64): totals, the breakdowns named in words (not
 * keys: "This computer", "Not through a node"), the empty and error states, the options and Erase
 * going to the core, and the closed list's search reaching the core with the words typed.
 */
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClosedConnections as ClosedList, TrafficSummaryView } from '../../core/api/contract.js';
import { ClosedConnections } from '../src/components/ClosedConnections.js';
import type { Actions } from '../src/store/feed.js';
import { createAppStore } from '../src/store/index.js';
import { Traffic } from '../src/views/Traffic.js';
import { mount } from './mount.js';

// happy-dom has no canvas: the chart is drawn (and looked at) in real Chromium (test/browser/traffic-window.test.ts).
vi.mock('../src/components/TrafficDays.js', () => ({ TrafficDays: () => null }));

afterEach(() => cleanup());

const part = (key: string, label: string, down: number) => ({ key, label, up: 0, down, flows: 1 });
function summary(over: Partial<TrafficSummaryView> = {}): TrafficSummaryView {
  return {
    from: '2026-12-01',
    to: '2026-12-07',
    nodesOnly: false,
    total: { up: 1024, down: 3 * 1024 * 1024, flows: 12 },
    days: [{ day: '2026-12-07', tunnel: 2 * 1024 * 1024, direct: 1024 * 1024 + 1024, up: 1024, down: 3 * 1024 * 1024 }],
    byNode: [part('vpn123', 'vpn123', 2 * 1024 * 1024), part('', '', 1024 * 1024)],
    byNetwork: [part('abc', 'wlan0 192.168.1.x', 3 * 1024 * 1024)],
    byRoute: [part('TUNNEL', 'TUNNEL', 2 * 1024 * 1024), part('DIRECT', 'DIRECT', 1024 * 1024)],
    byRule: [part('MATCH', 'MATCH', 3 * 1024 * 1024)],
    byProgram: [part('', '', 3 * 1024 * 1024)],
    byDevice: [part('', '', 2 * 1024 * 1024), part("Mum's phone", "Mum's phone", 1024 * 1024)],
    options: { retentionDays: 90, closedMax: 1000, keepClosed: false },
    persistent: true,
    ...over,
  };
}

describe('the Traffic view', () => {
  it('shows the totals and each breakdown in words, and says what is kept for how long', async () => {
    const getTraffic = vi.fn(async () => ({ ok: true as const, value: summary() }));
    mount(<Traffic />, createAppStore(), { getTraffic } as Partial<Actions>);
    await screen.findByTestId('traffic-total');
    expect(screen.getByTestId('traffic-total').textContent).toMatch(/↑ 1\.0 KiB · ↓ 3\.0 MiB/);
    expect(screen.getByTestId('traffic-total').textContent).toMatch(/12 connections/);
    expect(screen.getByTestId('traffic-byNode').textContent).toMatch(/vpn123.*Not through a node/);
    expect(screen.getByTestId('traffic-byRoute').textContent).toMatch(/VPN.*Direct/);
    expect(screen.getByTestId('traffic-byDevice').textContent).toMatch(/This computer.*Mum's phone/);
    expect(screen.getByTestId('traffic-byNetwork').textContent).toContain('wlan0 192.168.1.x');
    expect(screen.getByTestId('traffic-privacy').textContent).toMatch(/never sent anywhere.*for 90 days/);
    expect(getTraffic).toHaveBeenLastCalledWith(30, false);
    fireEvent.click(screen.getByLabelText(/Only through nodes/));
    await waitFor(() => expect(getTraffic).toHaveBeenLastCalledWith(30, true));
    fireEvent.change(screen.getByTestId('traffic-range'), { target: { value: '7' } });
    await waitFor(() => expect(getTraffic).toHaveBeenLastCalledWith(7, true));
  });

  it('says nothing is counted yet, and without a database that it is memory only', async () => {
    const empty = summary({ total: { up: 0, down: 0, flows: 0 }, persistent: false });
    mount(<Traffic />, createAppStore(), { getTraffic: async () => ({ ok: true, value: empty }) } as Partial<Actions>);
    expect((await screen.findByTestId('traffic-empty')).textContent).toMatch(/counted when they end/);
    expect(screen.getByTestId('traffic-privacy').textContent).toMatch(/no database/);
  });

  it('shows why the ledger could not be read', async () => {
    mount(<Traffic />, createAppStore(), {
      getTraffic: async () => ({ ok: false, error: { code: 'GH_ERR_API_UNSUPPORTED', message: 'not here' } }),
    } as Partial<Actions>);
    expect((await screen.findByRole('alert')).textContent).toMatch(/Could not read the traffic: not here/);
  });

  it('sends the retention and Erase (only once confirmed) to the core', async () => {
    const setTrafficOptions = vi.fn(async () => ({ ok: true as const, value: summary().options }));
    const eraseTraffic = vi.fn(async () => ({ ok: true as const, value: null }));
    mount(<Traffic />, createAppStore(), {
      getTraffic: async () => ({ ok: true, value: summary() }),
      setTrafficOptions,
      eraseTraffic,
    } as Partial<Actions>);
    await screen.findByTestId('traffic-total');
    await act(async () => void fireEvent.change(screen.getByLabelText(/Keep days for/), { target: { value: '30' } }));
    expect(setTrafficOptions).toHaveBeenCalledWith({ retentionDays: 30 });
    const confirm = vi.fn().mockReturnValueOnce(false).mockReturnValueOnce(true);
    vi.stubGlobal('confirm', confirm);
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Erase all…' })));
    expect(eraseTraffic).not.toHaveBeenCalled();
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Erase all…' })));
    expect(eraseTraffic).toHaveBeenCalledTimes(1);
    vi.unstubAllGlobals();
  });
});

describe('closed connections', () => {
  it('lists how each ended and asks the core with the words searched', async () => {
    const list: ClosedList = {
      held: 1,
      max: 1000,
      kept: false,
      connections: [
        {
          id: '7',
          listener: 'local',
          kind: 'socks5',
          client: '127.0.0.1:5000',
          user: null,
          host: 'ads.example',
          port: 443,
          route: 'REJECT',
          rule: 'DOMAIN-KEYWORD',
          rulePayload: 'ads',
          nodeId: null,
          program: 'firefox',
          bytesUp: 0,
          bytesDown: 0,
          startedAt: 1000,
          endedAt: 2000,
          end: 'refused',
          errCode: null,
        },
      ],
    };
    const closedConnections = vi.fn(async () => ({ ok: true as const, value: list }));
    mount(<ClosedConnections />, createAppStore(), { closedConnections } as Partial<Actions>);
    expect((await screen.findByTestId('end-7')).textContent).toBe('refused');
    expect(screen.getByText('ads.example:443')).toBeTruthy();
    expect(screen.getByText('firefox')).toBeTruthy();
    expect(screen.getByText(/The last 1000, in memory/)).toBeTruthy();
    fireEvent.change(screen.getByRole('searchbox'), { target: { value: 'ads refused' } });
    await waitFor(() => expect(closedConnections).toHaveBeenLastCalledWith('ads refused', 1000));
  });
});
