import {
  changedKeys,
  hostPort,
  type FlatSettings,
  type ProxyBackend,
  type ProxyTarget,
  type Runner,
  pacUrlOf,
} from './types.js';
import { bracketed, unbracket } from '../common/index.js';

/**
 * KDE Plasma 5 and 6: `[Proxy Settings]` in kioslaverc, written with kwriteconfig5/6 and read with
 * kreadconfig5/6; then running KIO clients are told to reparse (a D-Bus signal). A key that was
 * absent is deleted again on restore (a sentinel default tells absent from empty).
 */
export const KDE_KEYS = [
  'ProxyType',
  'httpProxy',
  'httpsProxy',
  'socksProxy',
  'NoProxyFor',
  'Proxy Config Script',
  'ReversedException',
] as const;
const GROUP = 'Proxy Settings';
const FILE = 'kioslaverc';
/** Printed by kreadconfig for a key that is not in the file. */
export const KDE_ABSENT = '\u0001gatehop-absent\u0001';

/** ProxyType values (KIO's ProxyType enum). */
const TYPES: Record<string, string> = {
  '0': 'none',
  '1': 'manual',
  '2': 'auto (PAC)',
  '3': 'auto (WPAD)',
  '4': 'from environment',
};

export interface KdeTools {
  read: string; // kreadconfig5 | kreadconfig6
  write: string; // kwriteconfig5 | kwriteconfig6
}

// ---- the pure command builder ----

export function kdeReadCommands(): Array<{ key: string; argv: string[] }> {
  return KDE_KEYS.map((key) => ({
    key,
    argv: ['--file', FILE, '--group', GROUP, '--key', key, '--default', KDE_ABSENT],
  }));
}

/** kwriteconfig for each changed key (--delete for keys that were absent); ProxyType last when turning on. */
export function kdeWriteCommands(to: FlatSettings, from: FlatSettings): string[][] {
  const keys = changedKeys(to, from);
  const typeLast = to.ProxyType === '1';
  keys.sort((a, b) => (Number(a === 'ProxyType') - Number(b === 'ProxyType')) * (typeLast ? 1 : -1));
  return keys.map((key) => {
    const v = to[key];
    return v === null || v === undefined
      ? ['--file', FILE, '--group', GROUP, '--key', key, '--delete']
      : ['--file', FILE, '--group', GROUP, '--key', key, v];
  });
}

/** The signal that makes running KIO applications reread kioslaverc (what the System Settings module sends). */
export function kdeNotifyCommand(): string[] {
  return ['--session', '--type=signal', '/KIO/Scheduler', 'org.kde.KIO.Scheduler.reparseSlaveConfiguration', 'string:'];
}

/** KIO's form: scheme, host and port separated by a space ("http://127.0.0.1 1080"), IPv6 in brackets. */
export function kdeProxyValue(scheme: 'http' | 'socks', host: string, port: number): string {
  return `${scheme}://${bracketed(host)} ${port}`;
}

/** Host and port of "http://h p", "http://h:p" or "[v6]" forms; null if it is neither. */
export function kdeParseProxy(v: string | null | undefined): { host: string; port: number } | null {
  if (!v) return null;
  const m = /^(?:[a-z0-9]+:\/\/)?(\[[^\]]+\]|[^\s:/]+)(?:[\s:](\d+))?\/?$/i.exec(v.trim());
  if (!m) return null;
  return { host: unbracket(m[1]!), port: Number(m[2] ?? 0) };
}

export function kdeDesired(target: ProxyTarget, current: FlatSettings): FlatSettings {
  return {
    ...current,
    // With a PAC: KIO's PACProxy type and the script's URL.
    ProxyType: target.pacUrl ? '2' : '1',
    ...(target.pacUrl ? { 'Proxy Config Script': target.pacUrl } : {}),
    httpProxy: kdeProxyValue('http', target.host, target.port),
    httpsProxy: kdeProxyValue('http', target.host, target.port),
    socksProxy: kdeProxyValue('socks', target.host, target.port),
    NoProxyFor: target.bypass.filter((b) => b !== '<local>').join(','),
    ReversedException: 'false',
  };
}

export function kdePointsAt(s: FlatSettings, host: string, port: number): boolean {
  if (s.ProxyType === '2') return s['Proxy Config Script'] === pacUrlOf(host, port);
  if (s.ProxyType !== '1') return false;
  return (['httpProxy', 'httpsProxy', 'socksProxy'] as const).some((k) => {
    const p = kdeParseProxy(s[k]);
    return p !== null && p.host === host && p.port === port;
  });
}

export function kdeDescribe(s: FlatSettings): string {
  const type = TYPES[s.ProxyType ?? '0'] ?? `type ${s.ProxyType}`;
  if (s.ProxyType === '2') return `auto (PAC ${s['Proxy Config Script'] ?? ''})`;
  if (s.ProxyType === '1') {
    const parts = (['httpProxy', 'httpsProxy', 'socksProxy'] as const).map((k) => {
      const p = kdeParseProxy(s[k]);
      return p ? `${k.replace('Proxy', '')} ${hostPort(p.host, p.port)}` : null;
    });
    return `manual (${parts.filter(Boolean).join(', ') || 'no proxy host'})`;
  }
  return type;
}

// ---- the thin runner layer ----

export function kdeBackend(run: Runner, tools: KdeTools): ProxyBackend {
  return {
    id: 'kde',
    label: `KDE proxy settings (${tools.write})`,
    async read() {
      const out: FlatSettings = {};
      for (const c of kdeReadCommands()) {
        const v = (await run(tools.read, c.argv)).stdout.replace(/\n$/, '');
        out[c.key] = v === KDE_ABSENT ? null : v;
      }
      return out;
    },
    async write(to, from) {
      const cmds = kdeWriteCommands(to, from);
      for (const argv of cmds) await run(tools.write, argv);
      // Without a session bus (or KDE) nobody is listening: the file is written, which is what counts.
      if (cmds.length > 0) await run('dbus-send', kdeNotifyCommand()).catch(() => undefined);
    },
    desired: kdeDesired,
    off: (current) => ({ ...current, ProxyType: '0' }),
    pointsAt: kdePointsAt,
    describe: kdeDescribe,
  };
}
