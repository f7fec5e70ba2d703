import { describe, expect, it, vi } from 'vitest';
import {
  buildTrayMenu,
  countryMark,
  iconStateOf,
  tooltipOf,
  topNodes,
  type TrayActions,
  type TrayState,
} from '../../electron/tray-menu.js';
import { trayIconPath } from '../../electron/icons.js';
import { honesty, node, status } from '../../renderer/test/fakes.js';

const actions = (): TrayActions => ({
  pickNode: vi.fn(),
  setAuto: vi.fn(),
  setRouteMode: vi.fn(),
  setSystemProxy: vi.fn(),
  setKillSwitch: vi.fn(),
  setShare: vi.fn(),
  openCapturedTerminal: vi.fn(),
  copy: vi.fn(),
  refreshNodes: vi.fn(),
  openWindow: vi.fn(),
  setStartAtLogin: vi.fn(),
  setNotification: vi.fn(),
  quit: vi.fn(),
});
const state = (over: Partial<TrayState> = {}): TrayState => ({
  status: status({
    active: {
      egressId: 't1',
      nodeId: 'node-3',
      host: 'node-3',
      ip: '203.0.113.3',
      country: 'Japan',
      proto: 'udp',
      protocol: 'openvpn',
      since: 0,
      state: 'ready',
      rttMs: 41.6,
      sessions: 2,
      honesty: 'honest',
    },
  }),
  nodes: Array.from({ length: 30 }, (_, i) => node(i, { score: 100 - i, state: i === 3 ? 'active' : 'candidate' })),
  sysproxy: { supported: true, backend: 'GNOME', current: 'none', enabled: false, error: null },
  killSwitch: false,
  startAtLogin: false,
  notifications: { switched: true, lost: true, 'sysproxy-changed': true },
  proxyAddress: '127.0.0.1:1080',
  language: 'en',
  ...over,
});

describe('the tray menu', () => {
  it('switches "Share with this network" (#63) as the core has it, naming the devices and port while it listens', () => {
    const a = actions();
    expect(buildTrayMenu(state(), a, 'linux').find((i) => i.id === 'share')).toBeUndefined(); // a core without it
    const off = state({ status: status({ share: { enabled: false, listening: false, port: 1081, devices: 0 } }) });
    const item = buildTrayMenu(off, a, 'linux').find((i) => i.id === 'share')!;
    expect(item).toMatchObject({ type: 'checkbox', checked: false, label: 'Share with this network' });
    item.click!({ checked: true } as Electron.MenuItem, undefined, {} as KeyboardEvent);
    expect(a.setShare).toHaveBeenCalledWith(true);
    const on = state({ status: status({ share: { enabled: true, listening: true, port: 1081, devices: 2 } }) });
    expect(buildTrayMenu(on, a, 'linux').find((i) => i.id === 'share')).toMatchObject({
      checked: true,
      label: 'Share with this network (2 devices, port 1081)',
    });
  });

  it('lists the best 15 nodes as radio items with the active one checked; picking one pins and switches', () => {
    const a = actions();
    const menu = buildTrayMenu(state(), a, 'linux');
    const nodes = menu.find((i) => i.id === 'nodes')!.submenu as Electron.MenuItemConstructorOptions[];
    const radios = nodes.filter((i) => i.type === 'radio');
    expect(radios).toHaveLength(15);
    expect(radios.filter((i) => i.checked).map((i) => i.id)).toEqual(['node:node-3']);
    expect(radios[0]!.label).toBe('🇰🇷 South Korea · public-vpn-0 · 10 ms · UDP');
    radios[5]!.click!({} as Electron.MenuItem, undefined, {} as KeyboardEvent);
    expect(a.pickNode).toHaveBeenCalledWith('node-5');
    nodes.find((i) => i.id === 'more')!.click!({} as Electron.MenuItem, undefined, {} as KeyboardEvent);
    expect(a.openWindow).toHaveBeenCalledWith('nodes');
  });

  it('says on each node what the honesty checks found: ✓ checked, ⚠ tampers (in the menu’s language) (#43)', () => {
    const h = (verdict: 'honest' | 'tls-interception') => honesty({ verdict, checkedAt: 1 });
    const nodes = [
      node(0, { score: 100, honesty: h('tls-interception') }),
      node(1, { score: 99, honesty: h('honest') }),
    ];
    const labels = (language: 'en' | 'zh-CN') =>
      (
        buildTrayMenu(state({ nodes, language }), actions(), 'linux').find((i) => i.id === 'nodes')!
          .submenu as Electron.MenuItemConstructorOptions[]
      )
        .filter((i) => i.type === 'radio')
        .map((i) => i.label);
    expect(labels('en')).toEqual([
      '🇰🇷 South Korea · public-vpn-0 · 10 ms · UDP · ⚠ tampers (reads HTTPS)',
      '🇯🇵 Japan · public-vpn-1 · 11 ms · TCP · ✓',
    ]);
    expect(labels('zh-CN')[0]).toMatch(/⚠ 篡改（窃听 HTTPS）$/);
  });

  it('a Routing submenu shows the mode as radio items and switches it (#33)', () => {
    const a = actions();
    const menu = buildTrayMenu(state(), a, 'linux');
    const routing = menu.find((i) => i.id === 'routing')!;
    expect(routing.label).toBe('Routing');
    const items = routing.submenu as Electron.MenuItemConstructorOptions[];
    expect(items.map((i) => [i.label, i.checked])).toEqual([
      ['By rules', true],
      ['Everything through the VPN', false],
      ['Nothing through the VPN', false],
    ]);
    items[1]!.click!({} as Electron.MenuItem, undefined, {} as KeyboardEvent);
    expect(a.setRouteMode).toHaveBeenCalledWith('global');
    const fa = buildTrayMenu(state({ language: 'fa' }), a, 'linux').find((i) => i.id === 'routing')!;
    expect(fa.label).toBe('مسیریابی');
  });

  it('says in the Routing submenu when rules do not work, and opens the window to say why (#59)', () => {
    const a = actions();
    const base = state();
    const problem = {
      source: 'rule set ads',
      line: 1,
      text: 'RULE-SET,ads,REJECT',
      message: 'could not be loaded (HTTP 503); until it is, this rule matches nothing: …',
    };
    const withError: TrayState = {
      ...base,
      status: { ...base.status!, routing: { ...base.status!.routing!, errors: [problem] } },
    };
    const items = buildTrayMenu(withError, a, 'linux').find((i) => i.id === 'routing')!
      .submenu as Electron.MenuItemConstructorOptions[];
    expect(items[0]!.label).toBe('⚠ 1 rule does not work: open to see why');
    items[0]!.click!({} as Electron.MenuItem, undefined, {} as KeyboardEvent);
    expect(a.openWindow).toHaveBeenCalled();
    expect(items.filter((i) => i.type === 'radio')).toHaveLength(3);
    const zh = buildTrayMenu({ ...withError, language: 'zh-CN' }, a, 'linux').find((i) => i.id === 'routing')!;
    expect((zh.submenu as Electron.MenuItemConstructorOptions[])[0]!.label).toBe('⚠ 1 条规则无法生效：打开查看原因');
  });

  it('the tooltip says which shape the active node fails in, while it fails, and that Gatehop leaves it (#60)', () => {
    const failing = (symptoms: Array<'link' | 'dns' | 'connects' | 'stall' | 'retransmit'>, consecutiveBad = 2) => {
      const base = state();
      return {
        ...base,
        status: {
          ...base.status!,
          health: { windows: 9, badWindows: 2, score: 0.4, reasons: [], symptoms, consecutiveBad },
        },
      };
    };
    expect(tooltipOf(failing(['dns']))).toBe(
      'Gatehop: KR public-vpn-3 · 42 ms · 1 session\n⚠ names fail through public-vpn-3; Gatehop leaves it if this goes on',
    );
    expect(tooltipOf(failing(['connects']))).toMatch(/\n⚠ connections fail through public-vpn-3;/);
    expect(tooltipOf(failing(['dns', 'connects', 'stall']))).toMatch(/\n⚠ names fail/);
    expect(tooltipOf(failing(['retransmit']))).toMatch(/\n⚠ public-vpn-3 is struggling;/);
    // Not while the windows are good again, nor from an older core that sends no symptoms.
    expect(tooltipOf(failing(['dns'], 0))).toBe('Gatehop: KR public-vpn-3 · 42 ms · 1 session');
    expect(tooltipOf({ ...failing(['dns']), language: 'fa' })).toMatch(/نام‌ها از راه public-vpn-3 پیدا نمی‌شوند/);
  });

  it("the tooltip's last line is today's bytes and how much went through nodes, once there are any (#64)", () => {
    const base = state();
    const today = (up: number, down: number, tunnel: number): TrayState => ({
      ...base,
      status: { ...base.status!, trafficToday: { day: '2026-12-07', up, down, tunnel } },
    });
    expect(tooltipOf(today(0, 0, 0))).toBe('Gatehop: KR public-vpn-3 · 42 ms · 1 session');
    expect(tooltipOf(today(512 * 1024, 1.5 * 1024 ** 3, 1024 ** 3))).toBe(
      'Gatehop: KR public-vpn-3 · 42 ms · 1 session\nToday: 1.50 GiB, 1.00 GiB of it through nodes',
    );
    expect(tooltipOf({ ...today(0, 3 * 1024 * 1024, 0), language: 'fa' })).toMatch(/\nامروز: ۳٫۰ MiB،/);
    expect(tooltipOf({ ...today(0, 2048, 2048), language: 'zh-CN' })).toMatch(/\n今天：2.0 KiB，其中经节点 2.0 KiB$/);
  });

  it('for ten minutes after Gatehop left a failing node, the tooltip says when, where to and why (#60)', () => {
    const at = Date.UTC(2026, 11, 6, 21, 40);
    const moved = (leftFor: 'dns' | 'died' | undefined, outcome: 'switched' | 'failed' = 'switched') => {
      const base = state();
      return {
        ...base,
        status: {
          ...base.status!,
          switches: {
            ...base.status!.switches,
            last: {
              id: 4,
              at,
              kind: 'auto' as const,
              reason: 'r',
              from: 'public-vpn-9',
              to: 'public-vpn-3',
              outcome,
              durationMs: 900,
              ...(leftFor ? { leftFor } : {}),
            },
          },
        },
      };
    };
    const time = new Date(at).toLocaleTimeString('en', { hour: '2-digit', minute: '2-digit' });
    expect(tooltipOf(moved('dns'), at + 60_000)).toBe(
      `Gatehop: KR public-vpn-3 · 42 ms · 1 session\nMoved to public-vpn-3 at ${time}: names failed through public-vpn-9`,
    );
    expect(tooltipOf(moved('died'), at + 60_000)).toMatch(/the tunnel to public-vpn-9 went down$/);
    expect(tooltipOf(moved('dns'), at + 11 * 60_000)).toBe('Gatehop: KR public-vpn-3 · 42 ms · 1 session');
    expect(tooltipOf(moved(undefined), at)).toBe('Gatehop: KR public-vpn-3 · 42 ms · 1 session');
    expect(tooltipOf(moved('dns', 'failed'), at)).toBe('Gatehop: KR public-vpn-3 · 42 ms · 1 session');
    expect(tooltipOf({ ...moved('dns'), language: 'zh-TW' }, at)).toMatch(
      /已切換到 public-vpn-3：經 public-vpn-9 的網域解析失敗$/,
    );
  });

  it('keeps a low-scoring active node in the list', () => {
    const nodes = Array.from({ length: 30 }, (_, i) => node(i, { score: 100 - i }));
    expect(topNodes(nodes, 'node-29').map((n) => n.id)).toContain('node-29');
    expect(topNodes(nodes, 'node-29')).toHaveLength(15);
  });

  it('the checkboxes reflect and set auto-select and the system proxy; the status line, tooltip and icon follow the state', () => {
    const a = actions();
    const menu = buildTrayMenu(state(), a);
    const auto = menu.find((i) => i.id === 'auto')!;
    expect(auto.checked).toBe(true);
    auto.click!({ checked: false } as Electron.MenuItem, undefined, {} as KeyboardEvent);
    expect(a.setAuto).toHaveBeenCalledWith(false);
    menu.find((i) => i.id === 'sysproxy')!.click!(
      { checked: true } as Electron.MenuItem,
      undefined,
      {} as KeyboardEvent,
    );
    expect(a.setSystemProxy).toHaveBeenCalledWith(true);
    // The kill switch (#46): shown as the core has it, set from here, greyed where there is no system proxy.
    const kill = menu.find((i) => i.id === 'kill-switch')!;
    expect(kill).toMatchObject({
      type: 'checkbox',
      checked: false,
      enabled: true,
      label: 'Kill switch (offline if Gatehop stops)',
    });
    kill.click!({ checked: true } as Electron.MenuItem, undefined, {} as KeyboardEvent);
    expect(a.setKillSwitch).toHaveBeenCalledWith(true);
    expect(buildTrayMenu(state({ killSwitch: true }), a).find((i) => i.id === 'kill-switch')!.checked).toBe(true);
    expect(menu[0]!.label).toBe('Connected: 🇰🇷 South Korea · public-vpn-3 · UDP · 42 ms');
    expect(tooltipOf(state())).toBe('Gatehop: KR public-vpn-3 · 42 ms · 1 session');
    expect(iconStateOf(state())).toBe('connected');
    const switching = state({
      status: status({ switches: { total: 1, failed: 0, state: 'connecting', inProgress: 2, last: null } }),
    });
    expect(iconStateOf(switching)).toBe('switching');
    expect(buildTrayMenu(switching, a)[0]!.label).toBe('Switching… (connecting)');
    const none = state({
      status: status({
        active: null,
        network: { state: 'waiting', reason: 'no-node-list', since: 1, attempts: 2, nextAttemptAt: 5 },
      }),
    });
    expect(iconStateOf(none)).toBe('no-node');
    expect(tooltipOf(none)).toBe('Gatehop: waiting for the network');
    // Balancing over three tunnels (issue #15): the menu and tooltip say how many more carry sessions.
    const m = (i: number) => ({
      egressId: `t${i}`,
      nodeId: `node-${i}`,
      protocol: 'openvpn' as const,
      primary: i === 3,
      host: null,
      ip: null,
      country: null,
      since: 0,
      down: false,
      sessions: 0,
      bytesUp: 0,
      bytesDown: 0,
      rttMs: null,
      failures: 0,
    });
    const balanced = state({
      status: { ...state().status!, members: [m(3), m(4), m(5)], balance: { strategy: 'round-robin', tunnels: 3 } },
    });
    expect(tooltipOf(balanced)).toBe('Gatehop: KR public-vpn-3 · 42 ms (+2 tunnels) · 1 session');
    expect(buildTrayMenu(balanced, a)[0]!.label).toMatch(/· 42 ms \(\+2 tunnels\)$/);
    expect(iconStateOf(state({ status: null }))).toBe('error');
    const unsupported = buildTrayMenu(
      state({ sysproxy: { supported: false, backend: null, current: null, enabled: false, error: 'x' } }),
      a,
    );
    expect(unsupported.find((i) => i.id === 'kill-switch')!.enabled).toBe(false);
    expect(unsupported.find((i) => i.id === 'sysproxy')).toMatchObject({
      enabled: false,
      label: 'System proxy (not supported here)',
    });
  });

  it('offers a captured terminal and the window’s "Run a program" where capture works, and nothing of it elsewhere (#46)', () => {
    const a = actions();
    const capture = (available: boolean) =>
      status({ capture: { available, reason: available ? null : 'platform', programs: [] } });
    const menu = buildTrayMenu(state({ status: capture(true) }), a);
    menu.find((i) => i.id === 'run-terminal')!.click!(
      { checked: false } as Electron.MenuItem,
      undefined,
      {} as KeyboardEvent,
    );
    expect(a.openCapturedTerminal).toHaveBeenCalledTimes(1);
    menu.find((i) => i.id === 'run-program')!.click!(
      { checked: false } as Electron.MenuItem,
      undefined,
      {} as KeyboardEvent,
    );
    expect(a.openWindow).toHaveBeenCalledTimes(1);
    expect(menu.find((i) => i.id === 'run-terminal')!.label).toBe('Open a terminal through Gatehop');
    const none = buildTrayMenu(state({ status: capture(false) }), a);
    expect(none.some((i) => i.id === 'run-terminal' || i.id === 'run-program')).toBe(false);
  });

  it('says how each node is reached first (its OpenVPN transport, or SSTP once that goes first) and what carries the active tunnel', () => {
    const sstpFirst = node(0, {
      score: 200,
      protocols: [
        { protocol: 'sstp', tried: 1, worked: 1, lastOk: true, lastError: null, at: 1 },
        { protocol: 'openvpn', tried: 1, worked: 0, lastOk: false, lastError: 'timed out', at: 1 },
      ],
    });
    const menu = buildTrayMenu(
      state({
        nodes: [sstpFirst, ...state().nodes.slice(1)],
        status: status({ active: { ...state().status!.active!, protocol: 'sstp' } }),
      }),
      actions(),
      'linux',
    );
    const radios = (menu.find((i) => i.id === 'nodes')!.submenu as Electron.MenuItemConstructorOptions[]).filter(
      (i) => i.type === 'radio',
    );
    expect(radios[0]!.label).toMatch(/ · SSTP$/);
    expect(menu[0]!.label).toBe('Connected: 🇰🇷 South Korea · public-vpn-3 · SSTP · 42 ms');
  });

  it('copies an IPv6 proxy address in brackets', () => {
    const a = actions();
    buildTrayMenu(state({ proxyAddress: '::1:1080' }), a).find((i) => i.id === 'copy-env')!.click!(
      {} as Electron.MenuItem,
      undefined,
      {} as KeyboardEvent,
    );
    expect(a.copy).toHaveBeenCalledWith(
      'export https_proxy=http://[::1]:1080 http_proxy=http://[::1]:1080 all_proxy=socks5h://[::1]:1080',
    );
  });

  it('picks template images on macOS, light/dark ICO on Windows, 32 px PNG on Linux', () => {
    expect(trayIconPath('/a', 'connected', 'darwin', false)).toBe('/a/tray/tray-connectedTemplate.png');
    expect(trayIconPath('/a', 'error', 'win32', true)).toBe('/a/tray/tray-error-dark.ico');
    expect(trayIconPath('/a', 'switching', 'linux', false)).toBe('/a/tray/tray-switching-32.png');
  });

  it('shows country codes on Windows, where flag emoji render as two letters, and flags elsewhere', () => {
    const label = (platform: NodeJS.Platform): string =>
      (
        buildTrayMenu(state(), actions(), platform).find((i) => i.id === 'nodes')!
          .submenu as Electron.MenuItemConstructorOptions[]
      )[0]!.label!;
    expect(label('win32')).toBe('KR South Korea · public-vpn-0 · 10 ms · UDP');
    expect(label('darwin')).toBe('🇰🇷 South Korea · public-vpn-0 · 10 ms · UDP');
    expect(label('linux')).toBe('🇰🇷 South Korea · public-vpn-0 · 10 ms · UDP');
    expect(countryMark('??', 'linux')).toBe('');
    expect(buildTrayMenu(state(), actions(), 'win32')[0]!.label).toBe(
      'Connected: KR South Korea · public-vpn-3 · UDP · 42 ms',
    );
  });

  it('speaks the chosen language: every label of the zh-CN menu and tooltip comes from the zh-CN catalogue', () => {
    const zh = state({ language: 'zh-CN' });
    const labels = (items: Electron.MenuItemConstructorOptions[]): string[] =>
      items.flatMap((i) => [i.label ?? '', ...(Array.isArray(i.submenu) ? labels(i.submenu) : [])]).filter(Boolean);
    const all = labels(buildTrayMenu(zh, actions(), 'linux'));
    expect(all).toContain('退出 Gatehop');
    // No English word is left (node names, countries and units aside).
    const english = new Set(
      labels(buildTrayMenu(state(), actions(), 'linux')).filter((l) => !/public-vpn|ms$/.test(l)),
    );
    for (const l of all) expect(english.has(l), l).toBe(false);
    expect(tooltipOf(zh)).not.toMatch(/session/);
    expect(tooltipOf(state({ language: 'zh-CN', status: null }))).not.toBe(tooltipOf(state({ status: null })));
  });
});
