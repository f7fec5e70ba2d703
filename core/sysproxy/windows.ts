import { ErrorCodes } from '../common/index.js';
import { CommandError } from './runner.js';
import { hostPort, type FlatSettings, type ProxyBackend, type ProxyTarget, type Runner, pacUrlOf } from './types.js';

/**
 * Windows, per user (no admin rights): WinINet's settings under HKCU. The LAN settings are the
 * registry values below, written with reg.exe; each dial-up/VPN entry keeps its own settings in a
 * binary blob that only WinINet reads and writes, so those go through InternetSetOption's
 * per-connection options (a short PowerShell script). Afterwards INTERNET_OPTION_SETTINGS_CHANGED
 * and INTERNET_OPTION_REFRESH tell running browsers to reload at once (see README.md for why).
 *
 * Keys: `lan\t<Value>` = "REG_DWORD 0x1" / "REG_SZ text" / null (absent), and `conn\t<entry>` =
 * JSON {flags, server, bypass, autoconfig} for each dial-up/VPN entry.
 */
export const INTERNET_SETTINGS = 'HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Internet Settings';
const CONNECTIONS = `${INTERNET_SETTINGS}\\Connections`;
export const LAN_VALUES = ['ProxyEnable', 'ProxyServer', 'ProxyOverride', 'AutoConfigURL', 'AutoDetect'] as const;
/** Values of the Connections key that are WinINet's own, not dial-up entries. */
const NOT_ENTRIES = new Set(['DefaultConnectionSettings', 'SavedLegacySettings']);
/** PER_CONN_FLAGS bits. */
export const PROXY_TYPE = { DIRECT: 1, PROXY: 2, AUTO_PROXY_URL: 4, AUTO_DETECT: 8 } as const;
/** Marks the PowerShell payload so a modelled runner (tests) can find it. */
export const PS_PAYLOAD = '#gatehop-payload:';

export interface ConnSettings {
  flags: number;
  server: string;
  bypass: string;
  autoconfig: string;
}

// ---- the pure command builder ----

export function winReadLan(): Array<{ key: string; argv: string[] }> {
  return LAN_VALUES.map((v) => ({ key: `lan\t${v}`, argv: ['query', INTERNET_SETTINGS, '/v', v] }));
}

/** `reg query` prints "    Name    REG_TYPE    data"; null when the value is absent (reg exits 1). */
export function winParseRegValue(stdout: string, name: string): string | null {
  for (const line of stdout.split(/\r?\n/)) {
    const m = /^\s+(.+?)\s{4}(REG_[A-Z_]+)(?:\s{4}(.*))?$/.exec(line);
    if (m && m[1] === name) return `${m[2]} ${m[3] ?? ''}`.trimEnd();
  }
  return null;
}

/** Dial-up/VPN entry names: the Connections key's value names that are not WinINet's own. */
export function winParseEntries(stdout: string): string[] {
  const out: string[] = [];
  for (const line of stdout.split(/\r?\n/)) {
    const m = /^\s+(.+?)\s{4}REG_BINARY/.exec(line);
    if (m && !NOT_ENTRIES.has(m[1]!)) out.push(m[1]!);
  }
  return out;
}

export function winLanWriteCommands(to: FlatSettings, from: FlatSettings): string[][] {
  const out: string[][] = [];
  for (const v of LAN_VALUES) {
    const k = `lan\t${v}`;
    const next = to[k] ?? null;
    if (next === (from[k] ?? null)) continue;
    if (next === null) {
      out.push(['delete', INTERNET_SETTINGS, '/v', v, '/f']);
      continue;
    }
    const sp = next.indexOf(' ');
    const type = sp < 0 ? next : next.slice(0, sp);
    const data = sp < 0 ? '' : next.slice(sp + 1);
    out.push(['add', INTERNET_SETTINGS, '/v', v, '/t', type, '/d', data, '/f']);
  }
  return out;
}

/**
 * The PowerShell script that reads (op 'query') or sets (op 'set') the per-connection options of
 * the named entries and then sends SETTINGS_CHANGED and REFRESH. Input travels as JSON inside a
 * single-quoted here-string, so no entry name or URL is ever parsed as PowerShell.
 */
export function winConnScript(op: 'query' | 'set' | 'notify', entries: Record<string, ConnSettings | null>): string {
  const payload = JSON.stringify({ op, entries });
  return [
    `${PS_PAYLOAD}${Buffer.from(payload).toString('base64')}`,
    "$ErrorActionPreference = 'Stop'",
    `$p = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String('${Buffer.from(payload).toString('base64')}')) | ConvertFrom-Json`,
    'Add-Type -TypeDefinition @"',
    'using System; using System.Runtime.InteropServices;',
    'public static class GhInet {',
    '  [StructLayout(LayoutKind.Explicit)] public struct V { [FieldOffset(0)] public int N; [FieldOffset(0)] public IntPtr P; [FieldOffset(0)] public long T; }',
    '  [StructLayout(LayoutKind.Sequential)] public struct O { public int Id; public V Val; }',
    '  [StructLayout(LayoutKind.Sequential, CharSet = CharSet.Unicode)] public struct L { public int Size; public string Conn; public int Count; public int Err; public IntPtr Opts; }',
    '  [DllImport("wininet.dll", SetLastError = true, CharSet = CharSet.Unicode)] static extern bool InternetSetOption(IntPtr h, int o, IntPtr b, int n);',
    '  [DllImport("wininet.dll", SetLastError = true, CharSet = CharSet.Unicode)] static extern bool InternetQueryOption(IntPtr h, int o, IntPtr b, ref int n);',
    '  static IntPtr Build(string conn, O[] opts, out L list) {',
    '    int os = Marshal.SizeOf(typeof(O)); IntPtr arr = Marshal.AllocCoTaskMem(os * opts.Length);',
    '    for (int i = 0; i < opts.Length; i++) Marshal.StructureToPtr(opts[i], arr + i * os, false);',
    '    list = new L { Size = Marshal.SizeOf(typeof(L)), Conn = conn, Count = opts.Length, Opts = arr };',
    '    IntPtr lp = Marshal.AllocCoTaskMem(list.Size); Marshal.StructureToPtr(list, lp, false); return lp; }',
    '  static O S(int id, string s) { return new O { Id = id, Val = new V { P = Marshal.StringToHGlobalUni(s ?? "") } }; }',
    '  public static void Set(string conn, int flags, string server, string bypass, string pac) {',
    '    O[] o = { new O { Id = 1, Val = new V { N = flags } }, S(2, server), S(3, bypass), S(4, pac) }; L l;',
    '    IntPtr lp = Build(conn, o, out l);',
    '    if (!InternetSetOption(IntPtr.Zero, 75, lp, l.Size)) throw new System.ComponentModel.Win32Exception(Marshal.GetLastWin32Error()); }',
    '  public static object[] Query(string conn) {',
    '    O[] o = { new O { Id = 1 }, new O { Id = 2 }, new O { Id = 3 }, new O { Id = 4 } }; L l;',
    '    IntPtr lp = Build(conn, o, out l); int n = l.Size;',
    '    if (!InternetQueryOption(IntPtr.Zero, 75, lp, ref n)) throw new System.ComponentModel.Win32Exception(Marshal.GetLastWin32Error());',
    '    int os = Marshal.SizeOf(typeof(O)); object[] r = new object[4];',
    '    for (int i = 0; i < 4; i++) { O x = (O)Marshal.PtrToStructure(l.Opts + i * os, typeof(O));',
    '      r[i] = i == 0 ? (object)x.Val.N : (x.Val.P == IntPtr.Zero ? "" : Marshal.PtrToStringUni(x.Val.P)); }',
    '    return r; }',
    '  public static void Notify() { InternetSetOption(IntPtr.Zero, 39, IntPtr.Zero, 0); InternetSetOption(IntPtr.Zero, 37, IntPtr.Zero, 0); }',
    '}',
    '"@',
    '$out = @{}',
    'foreach ($e in $p.entries.PSObject.Properties) {',
    "  if ($p.op -eq 'query') { $r = [GhInet]::Query($e.Name); $out[$e.Name] = @{ flags = $r[0]; server = $r[1]; bypass = $r[2]; autoconfig = $r[3] } }",
    "  elseif ($p.op -eq 'set' -and $e.Value) { [GhInet]::Set($e.Name, $e.Value.flags, $e.Value.server, $e.Value.bypass, $e.Value.autoconfig) }",
    '}',
    '[GhInet]::Notify()',
    '$out | ConvertTo-Json -Compress',
  ].join('\n');
}

export function winPowerShellArgv(script: string): string[] {
  return ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-Command', script];
}

/** WinINet's bypass syntax: ';'-separated, `<local>` for plain names, no CIDR (a prefix wildcard instead). */
export function winBypass(bypass: readonly string[]): string {
  const cidr: Record<string, string> = {
    '127.0.0.0/8': '127.*',
    '10.0.0.0/8': '10.*',
    '192.168.0.0/16': '192.168.*',
    '169.254.0.0/16': '169.254.*',
  };
  const out: string[] = [];
  for (const b of bypass) {
    if (b === '172.16.0.0/12') for (let i = 16; i < 32; i++) out.push(`172.${i}.*`);
    else if (cidr[b]) out.push(cidr[b]);
    else if (!b.includes('/')) out.push(b === '::1' ? '[::1]' : b);
  }
  return out.join(';');
}

export function winDesired(target: ProxyTarget, current: FlatSettings): FlatSettings {
  const hp = hostPort(target.host, target.port);
  // One server for every scheme, SOCKS included: "http=…;https=…;socks=…".
  const server = `http=${hp};https=${hp};socks=${hp}`;
  const bypass = winBypass(target.bypass);
  const pac = target.pacUrl ?? null;
  const out: FlatSettings = {
    ...current,
    // With Gatehop's PAC: the script decides (the manual proxy off); without: the proxy, PAC off.
    'lan\tProxyEnable': pac ? 'REG_DWORD 0x0' : 'REG_DWORD 0x1',
    'lan\tProxyServer': `REG_SZ ${server}`,
    'lan\tProxyOverride': `REG_SZ ${bypass}`,
    'lan\tAutoConfigURL': pac ? `REG_SZ ${pac}` : null,
    'lan\tAutoDetect':
      current['lan\tAutoDetect'] === undefined || current['lan\tAutoDetect'] === null ? null : 'REG_DWORD 0x0',
  };
  for (const k of Object.keys(current)) {
    if (!k.startsWith('conn\t')) continue;
    out[k] = JSON.stringify({
      flags: PROXY_TYPE.DIRECT | (pac ? PROXY_TYPE.AUTO_PROXY_URL : PROXY_TYPE.PROXY),
      server,
      bypass,
      autoconfig: pac ?? '',
    } satisfies ConnSettings);
  }
  return out;
}

export function winOff(current: FlatSettings): FlatSettings {
  const out: FlatSettings = { ...current, 'lan\tProxyEnable': 'REG_DWORD 0x0' };
  for (const [k, v] of Object.entries(current)) {
    if (k.startsWith('conn\t') && v)
      out[k] = JSON.stringify({ ...(JSON.parse(v) as ConnSettings), flags: PROXY_TYPE.DIRECT });
  }
  return out;
}

export function winPointsAt(s: FlatSettings, host: string, port: number): boolean {
  const hp = hostPort(host, port);
  const serverHas = (server: string): boolean =>
    server.split(';').some((part) => part.replace(/^[a-z]+=/i, '').replace(/^[a-z]+:\/\//i, '') === hp);
  if (s['lan\tProxyEnable'] === 'REG_DWORD 0x1' && serverHas((s['lan\tProxyServer'] ?? '').replace(/^REG_SZ ?/, '')))
    return true;
  if ((s['lan\tAutoConfigURL'] ?? '').replace(/^REG_SZ ?/, '') === pacUrlOf(host, port)) return true;
  return Object.entries(s).some(([k, v]) => {
    if (!k.startsWith('conn\t') || !v) return false;
    const c = JSON.parse(v) as ConnSettings;
    return (c.flags & PROXY_TYPE.PROXY) !== 0 && serverHas(c.server);
  });
}

export function winDescribe(s: FlatSettings): string {
  const parts: string[] = [];
  const pac = (s['lan\tAutoConfigURL'] ?? '').replace(/^REG_SZ ?/, '');
  if (s['lan\tProxyEnable'] === 'REG_DWORD 0x1')
    parts.push(`manual (${(s['lan\tProxyServer'] ?? '').replace(/^REG_SZ ?/, '')})`);
  if (pac) parts.push(`PAC ${pac}`);
  if (s['lan\tAutoDetect'] === 'REG_DWORD 0x1') parts.push('auto-detect');
  const entries = Object.keys(s).filter((k) => k.startsWith('conn\t')).length;
  return `${parts.join(', ') || 'none'}${entries ? ` (+${entries} dial-up/VPN entries)` : ''}`;
}

// ---- the thin runner layer ----

export function windowsBackend(run: Runner): ProxyBackend {
  const reg = async (args: string[], absentOk = false): Promise<string | null> => {
    try {
      return (await run('reg', args)).stdout;
    } catch (err) {
      if (absentOk && err instanceof CommandError && err.exitCode === 1) return null;
      if (err instanceof CommandError && /access is denied/i.test(err.stderr)) {
        throw new CommandError(
          'reg',
          args,
          err.exitCode,
          'access to the Internet Settings registry key is denied (a policy may lock proxy settings): ask the administrator, or set the proxy by hand',
          ErrorCodes.SYSPROXY_DENIED,
          err,
        );
      }
      throw err;
    }
  };
  const ps = async (
    op: 'query' | 'set' | 'notify',
    entries: Record<string, ConnSettings | null>,
  ): Promise<Record<string, ConnSettings>> => {
    const { stdout } = await run('powershell.exe', winPowerShellArgv(winConnScript(op, entries)), {
      timeoutMs: 30_000,
    });
    return stdout.trim() ? (JSON.parse(stdout) as Record<string, ConnSettings>) : {};
  };
  return {
    id: 'windows',
    label: 'Windows Internet settings (WinINet)',
    async read() {
      const out: FlatSettings = {};
      for (const c of winReadLan()) {
        const text = await reg(c.argv, true);
        out[c.key] = text === null ? null : winParseRegValue(text, c.argv[3]!);
      }
      const entries = winParseEntries((await reg(['query', CONNECTIONS], true)) ?? '');
      if (entries.length > 0) {
        const got = await ps('query', Object.fromEntries(entries.map((e) => [e, null])));
        for (const e of entries) out[`conn\t${e}`] = got[e] ? JSON.stringify(got[e]) : null;
      }
      return out;
    },
    async write(to, from) {
      for (const argv of winLanWriteCommands(to, from)) await reg(argv);
      const conns: Record<string, ConnSettings> = {};
      for (const k of Object.keys(to)) {
        if (k.startsWith('conn\t') && to[k] && to[k] !== from[k]) conns[k.slice(5)] = JSON.parse(to[k]) as ConnSettings;
      }
      // Always ends with SETTINGS_CHANGED + REFRESH, also when only the LAN values changed.
      await ps(Object.keys(conns).length > 0 ? 'set' : 'notify', conns);
    },
    desired: winDesired,
    off: winOff,
    pointsAt: winPointsAt,
    describe: winDescribe,
  };
}
