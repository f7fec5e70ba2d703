// @vitest-environment happy-dom
/**
 * The window shows which protocol carries each tunnel and what each node's protocols did (issue
 * #22): the Nodes view's protocol column and filter, the active tunnel's protocol and the note
 * when the network was found to block OpenVPN, and the protocol order in Settings.
 */
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Actions } from '../src/store/feed.js';
import { createAppStore } from '../src/store/index.js';
import type { NodeDto, Settings as SettingsDto } from '../src/store/types.js';
import { Nodes, sortAndFilter } from '../src/views/Nodes.js';
import { Overview } from '../src/views/Overview.js';
import { Settings } from '../src/views/Settings.js';
import { node, settings as fakeSettings, status } from './fakes.js';
import { mount } from './mount.js';

afterEach(cleanup);

const SETTINGS: SettingsDto = fakeSettings({ startAtLogin: null });

const tried = (
  protocol: 'openvpn' | 'sstp' | 'sevpn',
  lastOk: boolean | null,
  lastError: string | null = null,
): NodeDto['protocols'][number] => ({
  protocol,
  tried: lastOk === null ? 0 : 1,
  worked: lastOk ? 1 : 0,
  lastOk,
  lastError,
  at: lastOk === null ? null : 1,
});

describe('protocols in the window', () => {
  it('the Nodes view lists each node’s protocols in the order they are tried, with what they did, and filters SSTP nodes', () => {
    const store = createAppStore();
    const blocked = node(1, {
      proto: 'udp',
      protocols: [tried('sstp', true), tried('openvpn', false, 'connect timed out')],
    });
    const fresh = node(2, { proto: 'tcp' });
    const ownProfile = node(3, { proto: 'udp', protocols: [tried('openvpn', null)] });
    store.getState().setNodes({ nodes: [blocked, fresh, ownProfile], fetchedAt: 1, source: 'x', via: 'direct' });
    mount(<Nodes />, store);
    const cell = screen.getByLabelText('SSTP worked');
    expect(cell.closest('td')!.textContent).toBe('SSTP ✓ · OpenVPN UDP ✗');
    expect(screen.getByLabelText('OpenVPN UDP failed: connect timed out')).toBeTruthy();
    expect(screen.getByLabelText('OpenVPN TCP: not tried yet').closest('td')!.textContent).toBe('OpenVPN TCP · SSTP');
    // The filter: SSTP means nodes that offer it; TCP/UDP mean OpenVPN over that transport.
    expect(
      sortAndFilter([blocked, fresh, ownProfile], { sort: 'score', desc: true, country: '', proto: 'sstp', text: '' })
        .map((n) => n.id)
        .sort(),
    ).toEqual([blocked.id, fresh.id].sort());
    expect(
      sortAndFilter([blocked, fresh, ownProfile], { sort: 'score', desc: true, country: '', proto: 'udp', text: '' })
        .map((n) => n.id)
        .sort(),
    ).toEqual([blocked.id, ownProfile.id].sort());
    fireEvent.change(screen.getByRole('combobox', { name: 'Protocol' }), { target: { value: 'sstp' } });
    expect(screen.queryByLabelText('OpenVPN UDP: not tried yet')).toBeNull(); // the profile-only node is gone
  });

  it("a node's own protocol order: chosen on its row, saved as that node's entry alone, and 'as in Settings' removes it (#35)", async () => {
    const store = createAppStore();
    const a = node(1, { proto: 'tcp', protocols: [tried('openvpn', null), tried('sevpn', null), tried('sstp', null)] });
    const b = node(2, { proto: 'tcp', protocols: [tried('sstp', null)] });
    store.getState().setNodes({ nodes: [a, b], fetchedAt: 1, source: 'x', via: 'direct' });
    // node-2's order came from the config file and is not one the window offers: shown as it is.
    store.getState().setSettings({ ...SETTINGS, nodeProtocols: { [b.id]: ['sstp', 'sevpn'] } });
    const calls: Array<[string, unknown]> = [];
    const setNodeProtocols: Actions['setNodeProtocols'] = async (id, order) => {
      calls.push([id, order]);
      return { ok: true, value: { settings: SETTINGS, restartRequired: [] } };
    };
    mount(<Nodes />, store, { setNodeProtocols });
    const ofA = screen.getByRole('combobox', { name: `Protocols for ${a.host}` }) as HTMLSelectElement;
    const ofB = screen.getByRole('combobox', { name: `Protocols for ${b.host}` }) as HTMLSelectElement;
    expect(ofA.value).toBe('');
    expect(ofA.options[0]!.textContent).toBe('Protocols as in Settings');
    expect(ofB.value).toBe('sstp,sevpn');
    expect(ofB.selectedOptions[0]!.textContent).toBe('SSTP → SE-VPN');
    fireEvent.change(ofA, { target: { value: 'sevpn' } });
    fireEvent.change(ofB, { target: { value: '' } });
    expect(calls).toEqual([
      [a.id, ['sevpn']],
      [b.id, null],
    ]);
    // The filter knows SE-VPN.
    expect(
      sortAndFilter([a, b], { sort: 'score', desc: true, country: '', proto: 'sevpn', text: '' }).map((n) => n.id),
    ).toEqual([a.id]);
  });

  it('a node that refused modern TLS says so on its row, with why, and the others do not (#34)', () => {
    const store = createAppStore();
    store.getState().setNodes({
      nodes: [node(1, { weakTls: true }), node(2)],
      fetchedAt: 1,
      source: 'x',
      via: 'direct',
    });
    mount(<Nodes />, store);
    const mark = screen.getByTestId('weak-tls-node-1');
    expect(mark.textContent).toBe(' · weak encryption');
    expect(mark.getAttribute('title')).toMatch(/refused modern TLS.*TLS 1\.0/);
    expect(screen.queryByTestId('weak-tls-node-2')).toBeNull();
  });

  it('a node left out because only a list in clear names its own CA says so on its row, with why (#59; in Persian too)', () => {
    for (const [lang, text, why] of [
      ['en', ' · its certificate authority came on a list fetched without HTTPS', /anyone between you and that list/],
      ['fa', ' · مرجع گواهی آن از فهرستی آمده که بدون HTTPS دریافت شده', /بدون رمزنگاری/],
    ] as const) {
      const store = createAppStore();
      store.getState().setNodes({
        nodes: [node(1, { excluded: 'ca-in-clear' }), node(2, { excluded: 'needs-udp' })],
        fetchedAt: 1,
        source: 'x',
        via: 'mirror',
      });
      mount(<Nodes />, store, {}, lang);
      const mark = screen.getByTestId('ca-in-clear-node-1');
      expect(mark.textContent).toBe(text);
      expect(mark.getAttribute('title')).toMatch(why);
      expect(screen.queryByTestId('ca-in-clear-node-2')).toBeNull();
      cleanup();
    }
  });

  it('the overview says what carries the active tunnel, and that this network blocks OpenVPN once learnt (in Chinese too)', () => {
    const store = createAppStore();
    store.getState().setStatus(
      status({
        active: { ...status().active!, proto: 'tcp', protocol: 'sstp' },
        protocols: {
          order: ['openvpn', 'sstp'],
          preferred: 'sstp',
          blocked: 'openvpn',
          reason: 'OpenVPN failed on 3 different nodes while SSTP worked',
          learn: true,
        },
      }),
    );
    mount(<Overview />, store);
    expect(screen.getByTestId('active-protocol').textContent).toBe('SSTP');
    expect(screen.getByTestId('protocol-learned').textContent).toMatch(
      /block OpenVPN: Gatehop connects over SSTP first/,
    );
    cleanup();
    mount(<Overview />, store, {}, 'zh-CN');
    expect(screen.getByTestId('protocol-learned').textContent).toMatch(/SSTP/);
    cleanup();
    // SE-VPN learnt (#35): named as people say it, in the tunnel's row too.
    store.getState().setStatus(
      status({
        active: { ...status().active!, proto: 'tcp', protocol: 'sevpn' },
        protocols: {
          order: ['openvpn', 'sstp', 'sevpn'],
          preferred: 'sevpn',
          blocked: 'openvpn',
          reason: 'x',
          learn: true,
        },
      }),
    );
    mount(<Overview />, store);
    expect(screen.getByTestId('active-protocol').textContent).toBe('SE-VPN');
    expect(screen.getByTestId('protocol-learned').textContent).toMatch(
      /block OpenVPN: Gatehop connects over SE-VPN first/,
    );
    cleanup();
    // Not learnt, or SSTP first because the user chose that: no note.
    store.getState().setStatus(
      status({
        protocols: { order: ['sstp', 'openvpn'], preferred: 'sstp', blocked: null, reason: 'x', learn: true },
      }),
    );
    mount(<Overview />, store);
    expect(screen.queryByTestId('protocol-learned')).toBeNull();
    expect(screen.getByTestId('active-protocol').textContent).toBe('OpenVPN UDP');
  });

  it('Overview says when nodes are reached through the other proxy because none answered directly here', () => {
    const store = createAppStore();
    const reach = { connectBy: 'ip' as const, upstream: 'socks5://10.0.0.2:1080', upstreamUdp: null };
    store.getState().setStatus(status({ reach: { ...reach, nodePath: 'upstream' } }));
    mount(<Overview />, store);
    expect(screen.getByTestId('node-path-upstream').textContent).toMatch(
      /No node answered directly on this network: .*through your other proxy \(socks5:\/\/10\.0\.0\.2:1080\)/,
    );
    cleanup();
    // Direct works here (or no fallback is set): nothing to say.
    store.getState().setStatus(status({ reach: { ...reach, nodePath: 'direct' } }));
    mount(<Overview />, store);
    expect(screen.queryByTestId('node-path-upstream')).toBeNull();
    cleanup();
    store.getState().setStatus(status({ reach: { ...reach, nodePath: null } }));
    mount(<Overview />, store);
    expect(screen.queryByTestId('node-path-upstream')).toBeNull();
  });

  it('Settings offers the protocol order and saves what is chosen', async () => {
    const store = createAppStore();
    const settings: SettingsDto = SETTINGS;
    store.getState().setSettings(settings);
    const saved: Array<Partial<SettingsDto>> = [];
    mount(<Settings />, store, {
      saveSettings: async (patch: Partial<SettingsDto>) => {
        saved.push(patch);
        return { ok: true, value: { settings: { ...settings, ...patch }, restartRequired: [] } };
      },
    } as Partial<Actions>);
    const select = screen.getByRole('combobox', { name: 'Tunnel protocols' }) as HTMLSelectElement;
    expect([...select.options].map((o) => o.textContent)).toEqual([
      'OpenVPN, then SE-VPN, then SSTP',
      'OpenVPN, then SSTP',
      'SSTP, then OpenVPN',
      'OpenVPN, then SSTP, then SE-VPN',
      'SE-VPN first, then OpenVPN and SSTP',
      'OpenVPN only',
      'SSTP only',
      'SE-VPN only',
    ]);
    expect(select.value).toBe('openvpn,sstp');
    fireEvent.change(select, { target: { value: 'sstp' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    });
    expect(saved).toEqual([{ protocols: ['sstp'] }]);
  });

  it('Settings says what this network taught, until when, and forgets it on request (#44; in Chinese too)', async () => {
    const store = createAppStore();
    store.getState().setSettings(SETTINGS);
    const st = status();
    const learnt = {
      ...st,
      protocols: {
        order: ['openvpn', 'sevpn', 'sstp'] as Array<'openvpn' | 'sevpn' | 'sstp'>,
        preferred: 'sevpn' as const,
        blocked: 'openvpn' as const,
        reason: 'x',
        learn: true,
        lesson: { at: 100_000 - 2 * 3_600_000, expiresAt: Date.UTC(2026, 11, 11), path: 'direct' as const },
      },
    };
    store.getState().setStatus(learnt);
    let forgot = 0;
    const forgetNetwork: Actions['forgetNetwork'] = async () => {
      forgot++;
      store
        .getState()
        .setStatus({ ...learnt, protocols: { ...learnt.protocols, preferred: null, blocked: null, lesson: null } });
      return { ok: true, value: { forgotten: true } };
    };
    mount(<Settings />, store, { forgetNetwork });
    const box = screen.getByTestId('network-lesson');
    expect(box.textContent).toMatch(
      /OpenVPN does not get through here: Gatehop uses SE-VPN first and sends no OpenVPN on this network until .*2026.* \(learnt 2 h ago\)/,
    );
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Forget what this network taught' }));
    });
    expect(forgot).toBe(1);
    expect(screen.getByTestId('network-lesson').textContent).toMatch(/Forgotten: every protocol is tried again/);
    cleanup();
    store.getState().setStatus(learnt);
    mount(<Settings />, store, {}, 'zh-CN');
    expect(screen.getByTestId('network-lesson').textContent).toMatch(/OpenVPN 在这里无法通过：Gatehop 先用 SE-VPN/);
  });
});
