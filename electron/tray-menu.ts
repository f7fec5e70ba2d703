import { failingShapeOf, recentMoveOf, type NodeDto, type Status, type SysproxyState } from '../core/api/index.js';
import { countryNameIn, formatBytesIn, translate, type Language } from '../core/api/catalog/index.js';
import type { MenuItemOptions } from './electron-api.js';

/** What the tray shows, gathered from the core. */
export interface TrayState {
  status: Status | null;
  nodes: readonly NodeDto[];
  sysproxy: SysproxyState | null;
  /** The kill switch (the core's setting): the system proxy stays on Gatehop when it stops. */
  killSwitch: boolean;
  startAtLogin: boolean;
  /** Which notification kinds are on. */
  notifications: Record<'switched' | 'lost' | 'sysproxy-changed', boolean>;
  /** The proxy's address as other programs use it (host:port). */
  proxyAddress: string;
  /** The language of the menu, tooltip and notifications (Settings, else the OS's). */
  language: Language;
}

export interface TrayActions {
  pickNode(nodeId: string): void;
  setAuto(auto: boolean): void;
  /** Routing: rule, global or direct (the Mode submenu). */
  setRouteMode(mode: 'rule' | 'global' | 'direct'): void;
  setSystemProxy(on: boolean): void;
  setKillSwitch(on: boolean): void;
  /** "Share with this network" (#63): the second listener for the devices added in the window. */
  setShare(on: boolean): void;
  /** A terminal whose every program goes through Gatehop (`gatehop run` of the user's shell; Linux). */
  openCapturedTerminal(): void;
  copy(text: string): void;
  refreshNodes(): void;
  openWindow(view?: 'nodes'): void;
  setStartAtLogin(on: boolean): void;
  setNotification(kind: 'switched' | 'lost' | 'sysproxy-changed', on: boolean): void;
  quit(): void;
}

export type TrayIconState = 'connected' | 'switching' | 'no-node' | 'error';

export function iconStateOf(s: TrayState): TrayIconState {
  const st = s.status;
  if (!st) return 'error';
  if (st.switches.inProgress !== null) return 'switching';
  if (st.egress === 'direct' || st.active) return 'connected';
  return 'no-node';
}

/**
 * A country as the tray can show it: its flag where emoji flags render (macOS, Linux); Windows
 * draws them as two letters, so there it is the code itself, which reads better than a box.
 */
export function countryMark(code: string, platform: NodeJS.Platform): string {
  if (!/^[A-Za-z]{2}$/.test(code)) return '';
  if (platform === 'win32') return code.toUpperCase();
  return String.fromCodePoint(...[...code.toUpperCase()].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
}

/** What the honesty checks found, as a node's menu line ends: " · ✓", " · ⚠ tampers (DNS)", or nothing. */
export function honestyMark(s: TrayState, n: Pick<NodeDto, 'honesty'>): string {
  const v = n.honesty?.verdict;
  if (v === 'honest') return ` · ${t(s, 'menu.checked')}`;
  if (v === 'dns-tampering' || v === 'http-tampering' || v === 'tls-interception')
    return ` · ${t(s, 'menu.flagged', { verdict: translate(s.language, `honesty.verdict.${v}`) })}`;
  return '';
}

/** How a node is reached first, short: its OpenVPN transport (TCP, UDP) or SSTP. */
export function wayOf(n: Pick<NodeDto, 'proto' | 'protocols'>): string {
  return n.protocols[0]?.protocol === 'sstp' ? 'SSTP' : n.proto.toUpperCase();
}

const t = (s: TrayState, key: string, vars?: Record<string, string | number>): string =>
  translate(s.language, `shell.${key}`, vars);
const sessions = (s: TrayState, n: number): string => t(s, 'sessions', { count: n });
const ms = (s: TrayState, v: number | null | undefined): string =>
  v === null || v === undefined ? '–' : t(s, 'ms', { value: Math.round(v) });

/**
 * "JP public-vpn-123 · 42 ms · 3 sessions" (tooltips are plain text on every platform), then today's
 * bytes once there are any (#64).
 */
export function tooltipOf(s: TrayState, now = Date.now()): string {
  const today = s.status?.trafficToday;
  const total = today ? today.up + today.down : 0;
  const line = stateTooltip(s, now);
  if (!today || total === 0) return line;
  const bytes = (n: number) => formatBytesIn(s.language, n);
  return `${line}\n${t(s, 'tooltip.today', { total: bytes(total), tunnel: bytes(today.tunnel) })}`;
}

function stateTooltip(s: TrayState, now: number): string {
  const st = s.status;
  if (!st) return t(s, 'tooltip.none');
  if (st.egress === 'direct') return t(s, 'tooltip.direct', { sessions: sessions(s, st.sessions.active) });
  if (!st.active) return t(s, st.network.state === 'waiting' ? 'tooltip.waiting' : 'tooltip.finding');
  const n = s.nodes.find((x) => x.id === st.active!.nodeId);
  const line = t(s, 'tooltip.connected', {
    node: `${n?.countryCode ?? ''} ${n?.host ?? st.active.nodeId}`,
    rtt: ms(s, st.active.rttMs),
    more: moreTunnels(s),
    sessions: sessions(s, st.sessions.active),
  });
  const shape = failingShapeOf(st.health);
  if (shape) return `${line}\n${t(s, `tooltip.failing.${shape}`, { node: n?.host ?? st.active.nodeId ?? '' })}`;
  // For a while after Gatehop left a failing node: when, where to, and why (#60).
  const moved = recentMoveOf(st.switches, now);
  if (!moved) return line;
  const time = new Date(moved.at).toLocaleTimeString(s.language, { hour: '2-digit', minute: '2-digit' });
  return `${line}\n${t(s, `tooltip.moved.${moved.leftFor}`, { from: moved.from, to: moved.to, time })}`;
}

/** " (+2 tunnels)" while balancing over several tunnels (groups.balance), else "". */
function moreTunnels(s: TrayState): string {
  const extra = (s.status?.members.length ?? 0) - 1;
  return extra > 0 ? t(s, 'moreTunnels', { count: extra }) : '';
}

function statusLine(s: TrayState, platform: NodeJS.Platform): string {
  const st = s.status;
  if (!st) return t(s, 'status.none');
  if (st.switches.inProgress !== null) return t(s, 'status.switching', { state: st.switches.state });
  if (st.egress === 'direct') return t(s, 'status.direct');
  if (!st.active) return t(s, st.network.state === 'waiting' ? 'status.waiting' : 'status.finding');
  const n = s.nodes.find((x) => x.id === st.active!.nodeId);
  const way = st.active.protocol === 'sstp' ? 'SSTP' : st.active.proto ? st.active.proto.toUpperCase() : null;
  return t(s, 'status.connected', {
    node: `${n ? `${countryMark(n.countryCode, platform)} ${countryNameIn(s.language, n.countryCode, n.country)} · ${n.host}` : (st.active.nodeId ?? '')}${way ? ` · ${way}` : ''}`,
    rtt: ms(s, st.active.rttMs),
    more: moreTunnels(s),
  });
}

/** The best nodes by score, the active one included (and checked). */
export function topNodes(nodes: readonly NodeDto[], activeId: string | null, count = 15): NodeDto[] {
  const scored = [...nodes]
    .filter((n) => n.score !== null)
    .sort((a, b) => b.score! - a.score! || a.id.localeCompare(b.id));
  const top = scored.slice(0, count);
  const active = nodes.find((n) => n.id === activeId);
  if (active && !top.includes(active)) {
    if (top.length >= count) top.pop();
    top.push(active);
  }
  return top;
}

/**
 * The tray menu as a template (pure: the same input gives the same menu, so it is tested and
 * rendered for the README without Electron). Every action is a menu item: on Linux, AppIndicator
 * drops clicks on the icon itself.
 */
export function buildTrayMenu(
  s: TrayState,
  a: TrayActions,
  platform: NodeJS.Platform = process.platform,
): MenuItemOptions[] {
  const st = s.status;
  const activeId = st?.active?.nodeId ?? null;
  const vpn = st?.egress === 'vpngate';
  const nodes = topNodes(s.nodes, activeId);
  const [host, port] = [
    s.proxyAddress.slice(0, s.proxyAddress.lastIndexOf(':')),
    s.proxyAddress.slice(s.proxyAddress.lastIndexOf(':') + 1),
  ];
  const hp = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
  const nodeItems: MenuItemOptions[] = nodes.length
    ? nodes.map((n) => ({
        id: `node:${n.id}`,
        type: 'radio' as const,
        label: `${countryMark(n.countryCode, platform)} ${countryNameIn(s.language, n.countryCode, n.country)} · ${n.host} · ${ms(s, n.rttMs)} · ${wayOf(n)}${honestyMark(s, n)}`,
        checked: n.id === activeId,
        click: () => a.pickNode(n.id),
      }))
    : [{ label: t(s, 'menu.noNodes'), enabled: false }];
  return [
    { id: 'status', label: statusLine(s, platform), enabled: false },
    { type: 'separator' },
    {
      id: 'nodes',
      label: t(s, 'menu.nodes'),
      enabled: vpn,
      submenu: [
        ...nodeItems,
        { type: 'separator' },
        { id: 'more', label: t(s, 'menu.more'), click: () => a.openWindow('nodes') },
      ],
    },
    {
      id: 'auto',
      label: t(s, 'menu.auto'),
      type: 'checkbox',
      checked: st?.mode === 'auto',
      enabled: vpn,
      click: (item) => a.setAuto(item.checked),
    },
    ...(st?.routing
      ? [
          {
            id: 'routing',
            label: t(s, 'menu.routing'),
            submenu: [
              // A rule that cannot work (a rule set that never loaded, a line left out): said here
              // too, not only in the window (#59); the window's Routing section says which and why.
              ...(st.routing.errors.length > 0
                ? [
                    {
                      id: 'routing-problems',
                      label: t(s, 'menu.routingProblems', { count: st.routing.errors.length }),
                      click: () => a.openWindow(),
                    },
                    { type: 'separator' as const },
                  ]
                : []),
              ...(['rule', 'global', 'direct'] as const).map((m): MenuItemOptions => ({
                id: `route:${m}`,
                label: t(s, `menu.routeMode.${m}`),
                type: 'radio',
                checked: st.routing!.mode === m,
                click: () => a.setRouteMode(m),
              })),
            ],
          },
        ]
      : []),
    {
      id: 'sysproxy',
      label: t(s, s.sysproxy?.supported === false ? 'menu.sysproxyUnsupported' : 'menu.sysproxy'),
      type: 'checkbox',
      checked: s.sysproxy?.enabled ?? false,
      enabled: s.sysproxy?.supported ?? false,
      click: (item) => a.setSystemProxy(item.checked),
    },
    {
      id: 'kill-switch',
      label: t(s, 'menu.killSwitch'),
      type: 'checkbox',
      checked: s.killSwitch,
      enabled: s.sysproxy?.supported ?? false,
      click: (item) => a.setKillSwitch(item.checked),
    },
    ...(s.status?.share
      ? [
          {
            id: 'share',
            label: s.status.share.listening
              ? t(s, 'menu.shareNetworkOn', { devices: s.status.share.devices, port: s.status.share.port })
              : t(s, 'menu.shareNetwork'),
            type: 'checkbox' as const,
            checked: s.status.share.enabled,
            click: (item: { checked: boolean }) => a.setShare(item.checked),
          },
        ]
      : []),
    { type: 'separator' },
    { id: 'copy', label: t(s, 'menu.copy'), click: () => a.copy(hp) },
    {
      id: 'copy-env',
      label: t(s, 'menu.copyEnv'),
      click: () => a.copy(`export https_proxy=http://${hp} http_proxy=http://${hp} all_proxy=socks5h://${hp}`),
    },
    // For programs that ignore the proxy setting (#46): a captured terminal, or the window's form.
    ...(s.status?.capture?.available
      ? [
          { id: 'run-terminal', label: t(s, 'menu.runTerminal'), click: () => a.openCapturedTerminal() },
          { id: 'run-program', label: t(s, 'menu.runProgram'), click: () => a.openWindow() },
        ]
      : []),
    { id: 'refresh', label: t(s, 'menu.refresh'), enabled: vpn, click: () => a.refreshNodes() },
    { type: 'separator' },
    { id: 'open', label: t(s, 'menu.open'), click: () => a.openWindow() },
    {
      id: 'login',
      label: t(s, 'menu.login'),
      type: 'checkbox',
      checked: s.startAtLogin,
      click: (item) => a.setStartAtLogin(item.checked),
    },
    {
      id: 'notifications',
      label: t(s, 'menu.notifications'),
      submenu: (
        [
          ['switched', 'switched'],
          ['lost', 'lost'],
          ['sysproxy-changed', 'sysproxyChanged'],
        ] as const
      ).map(([kind, key]) => ({
        id: `notify:${kind}`,
        label: t(s, `menu.notify.${key}`),
        type: 'checkbox' as const,
        checked: s.notifications[kind],
        click: (item: { checked: boolean }) => a.setNotification(kind, item.checked),
      })),
    },
    { type: 'separator' },
    { id: 'quit', label: t(s, 'menu.quit'), click: () => a.quit() },
  ];
}
