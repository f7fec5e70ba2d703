import type { NodeDto, Status, SysproxyState } from '../core/api/index.js';
import type { MenuItemOptions } from './electron-api.js';

/** What the tray shows, gathered from the core. */
export interface TrayState {
  status: Status | null;
  nodes: readonly NodeDto[];
  sysproxy: SysproxyState | null;
  startAtLogin: boolean;
  /** Which notification kinds are on. */
  notifications: Record<'switched' | 'lost' | 'sysproxy-changed', boolean>;
  /** The proxy's address as other programs use it (host:port). */
  proxyAddress: string;
}

export interface TrayActions {
  pickNode(nodeId: string): void;
  setAuto(auto: boolean): void;
  setSystemProxy(on: boolean): void;
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

function flag(code: string): string {
  return /^[A-Za-z]{2}$/.test(code) ? String.fromCodePoint(...[...code.toUpperCase()].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65)) : '';
}

const sessions = (n: number): string => `${n} session${n === 1 ? '' : 's'}`;
const ms = (v: number | null | undefined): string => (v === null || v === undefined ? '–' : `${Math.round(v)} ms`);

/** "JP public-vpn-123 · 42 ms · 3 sessions" (tooltips are plain text on every platform). */
export function tooltipOf(s: TrayState): string {
  const st = s.status;
  if (!st) return 'Gatehop: the core is not running';
  if (st.egress === 'direct') return `Gatehop: direct · ${sessions(st.sessions.active)}`;
  if (!st.active) return st.network.state === 'waiting' ? 'Gatehop: waiting for the network' : 'Gatehop: finding a working node…';
  const n = s.nodes.find((x) => x.id === st.active!.nodeId);
  return `Gatehop: ${n?.countryCode ?? ''} ${n?.host ?? st.active.nodeId} · ${ms(st.active.rttMs)}${moreTunnels(s)} · ${sessions(st.sessions.active)}`;
}

/** " (+2 tunnels)" while balancing over several tunnels (groups.balance), else "". */
function moreTunnels(s: TrayState): string {
  const extra = (s.status?.members.length ?? 0) - 1;
  return extra > 0 ? ` (+${extra} tunnel${extra === 1 ? '' : 's'})` : '';
}

function statusLine(s: TrayState): string {
  const st = s.status;
  if (!st) return 'Core not running';
  if (st.switches.inProgress !== null) return `Switching… (${st.switches.state})`;
  if (st.egress === 'direct') return 'Direct (no VPN)';
  if (!st.active) return st.network.state === 'waiting' ? 'Waiting for the network…' : 'Finding a working node…';
  const n = s.nodes.find((x) => x.id === st.active!.nodeId);
  return `Connected: ${n ? `${flag(n.countryCode)} ${n.country} · ${n.host}` : st.active.nodeId} · ${ms(st.active.rttMs)}${moreTunnels(s)}`;
}

/** The best nodes by score, the active one included (and checked). */
export function topNodes(nodes: readonly NodeDto[], activeId: string | null, count = 15): NodeDto[] {
  const scored = [...nodes].filter((n) => n.score !== null).sort((a, b) => b.score! - a.score! || a.id.localeCompare(b.id));
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
export function buildTrayMenu(s: TrayState, a: TrayActions): MenuItemOptions[] {
  const st = s.status;
  const activeId = st?.active?.nodeId ?? null;
  const vpn = st?.egress === 'vpngate';
  const nodes = topNodes(s.nodes, activeId);
  const [host, port] = [s.proxyAddress.slice(0, s.proxyAddress.lastIndexOf(':')), s.proxyAddress.slice(s.proxyAddress.lastIndexOf(':') + 1)];
  const hp = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
  const nodeItems: MenuItemOptions[] = nodes.length
    ? nodes.map((n) => ({
        id: `node:${n.id}`,
        type: 'radio' as const,
        label: `${flag(n.countryCode)} ${n.country} · ${n.host} · ${ms(n.rttMs)}`,
        checked: n.id === activeId,
        click: () => a.pickNode(n.id),
      }))
    : [{ label: 'No nodes yet', enabled: false }];
  return [
    { id: 'status', label: statusLine(s), enabled: false },
    { type: 'separator' },
    { id: 'nodes', label: 'Nodes', enabled: vpn, submenu: [...nodeItems, { type: 'separator' }, { id: 'more', label: 'More…', click: () => a.openWindow('nodes') }] },
    { id: 'auto', label: 'Auto-select', type: 'checkbox', checked: st?.mode === 'auto', enabled: vpn, click: (item) => a.setAuto(item.checked) },
    {
      id: 'sysproxy',
      label: s.sysproxy?.supported === false ? 'System proxy (not supported here)' : 'System proxy',
      type: 'checkbox',
      checked: s.sysproxy?.enabled ?? false,
      enabled: s.sysproxy?.supported ?? false,
      click: (item) => a.setSystemProxy(item.checked),
    },
    { type: 'separator' },
    { id: 'copy', label: 'Copy proxy address', click: () => a.copy(hp) },
    { id: 'copy-env', label: 'Copy terminal proxy command', click: () => a.copy(`export https_proxy=http://${hp} http_proxy=http://${hp} all_proxy=socks5h://${hp}`) },
    { id: 'refresh', label: 'Refresh node list', enabled: vpn, click: () => a.refreshNodes() },
    { type: 'separator' },
    { id: 'open', label: 'Open Gatehop', click: () => a.openWindow() },
    { id: 'login', label: 'Start at login', type: 'checkbox', checked: s.startAtLogin, click: (item) => a.setStartAtLogin(item.checked) },
    {
      id: 'notifications',
      label: 'Notifications',
      submenu: ([['switched', 'When the node changes'], ['lost', 'When no node works'], ['sysproxy-changed', 'When another program changes the system proxy']] as const).map(([kind, label]) => ({
        id: `notify:${kind}`,
        label,
        type: 'checkbox' as const,
        checked: s.notifications[kind],
        click: (item: { checked: boolean }) => a.setNotification(kind, item.checked),
      })),
    },
    { type: 'separator' },
    { id: 'quit', label: 'Quit Gatehop', click: () => a.quit() },
  ];
}
