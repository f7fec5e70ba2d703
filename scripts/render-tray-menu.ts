// Renders the tray menu, built by electron/tray-menu.ts from a sample state, as the README's
// picture (docs/screenshots/tray-menu.png). Run by hand: node --import tsx scripts/render-tray-menu.ts
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { buildTrayMenu, type TrayActions } from '../electron/tray-menu.js';
import { node, status } from '../renderer/test/fakes.js';

const noop = () => {};
const actions: TrayActions = { pickNode: noop, setAuto: noop, setRouteMode: noop, setSystemProxy: noop, setKillSwitch: noop, openCapturedTerminal: noop, copy: noop, refreshNodes: noop, openWindow: noop, setStartAtLogin: noop, setNotification: noop, quit: noop };
const countries: Array<[string, string]> = [['JP', 'Japan'], ['KR', 'Korea Republic of'], ['TH', 'Thailand'], ['VN', 'Viet Nam'], ['US', 'United States'], ['RU', 'Russian Federation']];
const nodes = Array.from({ length: 15 }, (_, i) => node(i, { host: `public-vpn-${231 + i * 7}`, country: countries[i % 6]![1], countryCode: countries[i % 6]![0], rttMs: 38 + i * 9, score: 300 - i * 11 }));
const menu = buildTrayMenu(
  {
    status: status({ mode: 'auto', capture: { available: true, reason: null, programs: [] }, active: { egressId: 't', nodeId: nodes[1]!.id, host: nodes[1]!.ip, country: 'Korea', proto: 'udp', since: 0, state: 'ready', rttMs: 47, sessions: 12 } }),
    nodes,
    sysproxy: { supported: true, backend: 'GNOME', current: 'manual', enabled: true, error: null },
    killSwitch: false,
    startAtLogin: true,
    notifications: { switched: true, lost: true, 'sysproxy-changed': true },
    proxyAddress: '127.0.0.1:1080',
    language: 'en',
  },
  actions,
  'linux',
);
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const row = (i: (typeof menu)[number], sub = false): string =>
  i.type === 'separator'
    ? '<div class="sep"></div>'
    : `<div class="item${i.enabled === false ? ' off' : ''}"><span class="mark">${i.checked ? (i.type === 'radio' ? '●' : '✓') : ''}</span>${esc(i.label ?? '')}${i.submenu && !sub ? '<span class="arrow">▸</span>' : ''}</div>`;
const sub = (menu.find((i) => i.id === 'nodes')!.submenu as typeof menu).map((i) => row(i, true)).join('');
const html = `<style>body{margin:0;font:13px system-ui,'Noto Sans',sans-serif;background:#d7dbe0;display:flex;gap:0;padding:16px}
.menu{background:#fff;border:1px solid #b9bec6;border-radius:6px;box-shadow:0 6px 18px rgba(0,0,0,.18);padding:4px 0;min-width:250px;width:max-content;height:max-content}
.item{padding:4px 18px 4px 28px;position:relative;white-space:nowrap}.item.off{color:#8a9099}.mark{position:absolute;left:10px}
.arrow{float:right;margin-left:24px}.sep{height:1px;background:#e3e6ea;margin:4px 0}.hl{background:#2f6fd6;color:#fff}</style>
<div class="menu">${menu.map((i) => row(i)).join('').replace('<div class="item"><span class="mark"></span>Nodes', '<div class="item hl"><span class="mark"></span>Nodes')}</div><div class="menu" style="margin-top:36px;margin-left:-4px">${sub}</div>`;
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const p = await b.newPage({ viewport: { width: 760, height: 560 }, deviceScaleFactor: 1 });
await p.setContent(html);
const box = await p.evaluate(() => { const r = document.body.getBoundingClientRect(); const m = [...document.querySelectorAll('.menu')].map((e) => e.getBoundingClientRect()); return { w: Math.max(...m.map((x) => x.right)) + 16, h: Math.max(...m.map((x) => x.bottom)) + 16, r: r.width }; });
await p.screenshot({ path: 'docs/screenshots/tray-menu.png', clip: { x: 0, y: 0, width: box.w, height: box.h } });
await b.close();
console.log('docs/screenshots/tray-menu.png', readFileSync('docs/screenshots/tray-menu.png').length, 'bytes');
