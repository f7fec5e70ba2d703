import {
  changedKeys,
  hostPort,
  pacUrlOf,
  type FlatSettings,
  type ProxyBackend,
  type ProxyTarget,
  type Runner,
} from './types.js';

/**
 * GNOME's proxy settings (and every desktop that reads them: Unity, Cinnamon, Budgie, Pantheon …):
 * `gsettings` on org.gnome.system.proxy and its http/https/socks children. Values travel as
 * GVariant text, exactly as `gsettings get` prints them, so a restore writes back what was read.
 */
const BASE = 'org.gnome.system.proxy';
export const GNOME_KEYS: ReadonlyArray<readonly [schema: string, key: string]> = [
  [BASE, 'mode'],
  [BASE, 'autoconfig-url'],
  [BASE, 'ignore-hosts'],
  [BASE, 'use-same-proxy'],
  [`${BASE}.http`, 'host'],
  [`${BASE}.http`, 'port'],
  [`${BASE}.https`, 'host'],
  [`${BASE}.https`, 'port'],
  [`${BASE}.socks`, 'host'],
  [`${BASE}.socks`, 'port'],
];

const flatKey = (schema: string, key: string): string => `${schema} ${key}`;

/** GVariant text for a string: single quotes, with backslash and quote escaped. */
export function gvString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** GVariant text for an array of strings (an empty one needs its type: @as []). */
export function gvStringArray(items: readonly string[]): string {
  return items.length === 0 ? '@as []' : `[${items.map(gvString).join(', ')}]`;
}

/** The value of a GVariant string as gsettings prints it ('…' or "…"); null if it is not one. */
export function gvParseString(text: string): string | null {
  const t = text.trim();
  const q = t[0];
  if ((q !== "'" && q !== '"') || t[t.length - 1] !== q) return null;
  return t.slice(1, -1).replace(/\\(.)/g, '$1');
}

// ---- the pure command builder ----

export function gnomeReadCommands(): Array<{ key: string; argv: string[] }> {
  return GNOME_KEYS.map(([schema, key]) => ({ key: flatKey(schema, key), argv: ['get', schema, key] }));
}

/**
 * `gsettings set` for each changed key. Turning a proxy on sets mode last and turning it off sets
 * mode first, so no application ever sees mode 'manual' with half-written hosts.
 */
export function gnomeWriteCommands(to: FlatSettings, from: FlatSettings): string[][] {
  const keys = changedKeys(to, from).filter((k) => to[k] !== null);
  const modeKey = flatKey(BASE, 'mode');
  const modeLast = gvParseString(to[modeKey] ?? '') === 'manual';
  keys.sort((a, b) => (Number(a === modeKey) - Number(b === modeKey)) * (modeLast ? 1 : -1));
  return keys.map((k) => {
    const [schema, key] = k.split(' ') as [string, string];
    return ['set', schema, key, to[k]!];
  });
}

export function gnomeDesired(target: ProxyTarget, current: FlatSettings): FlatSettings {
  const host = gvString(target.host);
  const port = String(target.port);
  return {
    ...current,
    // With a PAC: mode auto and its URL; the hosts below stay set (what the script answers points there).
    [flatKey(BASE, 'mode')]: target.pacUrl ? "'auto'" : "'manual'",
    ...(target.pacUrl ? { [flatKey(BASE, 'autoconfig-url')]: gvString(target.pacUrl) } : {}),
    [flatKey(BASE, 'ignore-hosts')]: gvStringArray(target.bypass.filter((b) => b !== '<local>')),
    [flatKey(BASE, 'use-same-proxy')]: 'false',
    [flatKey(`${BASE}.http`, 'host')]: host,
    [flatKey(`${BASE}.http`, 'port')]: port,
    [flatKey(`${BASE}.https`, 'host')]: host,
    [flatKey(`${BASE}.https`, 'port')]: port,
    [flatKey(`${BASE}.socks`, 'host')]: host,
    [flatKey(`${BASE}.socks`, 'port')]: port,
  };
}

export function gnomePointsAt(s: FlatSettings, host: string, port: number): boolean {
  const mode = gvParseString(s[flatKey(BASE, 'mode')] ?? '');
  if (mode === 'auto') return gvParseString(s[flatKey(BASE, 'autoconfig-url')] ?? '') === pacUrlOf(host, port);
  if (mode !== 'manual') return false;
  return ['http', 'https', 'socks'].some(
    (p) =>
      gvParseString(s[flatKey(`${BASE}.${p}`, 'host')] ?? '') === host &&
      Number(s[flatKey(`${BASE}.${p}`, 'port')]) === port,
  );
}

export function gnomeDescribe(s: FlatSettings): string {
  const mode = gvParseString(s[flatKey(BASE, 'mode')] ?? '') ?? 'unknown';
  if (mode === 'auto') {
    const url = gvParseString(s[flatKey(BASE, 'autoconfig-url')] ?? '') ?? '';
    return url ? `auto (PAC ${url})` : 'auto (WPAD)';
  }
  if (mode === 'manual') {
    const parts = ['http', 'https', 'socks'].map((p) => {
      const h = gvParseString(s[flatKey(`${BASE}.${p}`, 'host')] ?? '') ?? '';
      return h ? `${p} ${hostPort(h, Number(s[flatKey(`${BASE}.${p}`, 'port')]))}` : null;
    });
    return `manual (${parts.filter(Boolean).join(', ') || 'no proxy host'})`;
  }
  return mode;
}

// ---- the thin runner layer ----

export function gnomeBackend(run: Runner): ProxyBackend {
  return {
    id: 'gnome',
    label: 'GNOME proxy settings (gsettings)',
    async read() {
      const out: FlatSettings = {};
      for (const c of gnomeReadCommands()) out[c.key] = (await run('gsettings', c.argv)).stdout.trim();
      return out;
    },
    async write(to, from) {
      for (const argv of gnomeWriteCommands(to, from)) await run('gsettings', argv);
    },
    desired: gnomeDesired,
    off: (current) => ({ ...current, [flatKey(BASE, 'mode')]: "'none'" }),
    pointsAt: gnomePointsAt,
    describe: gnomeDescribe,
  };
}
