import { describe, expect, it } from 'vitest';
import {
  DEFAULT_BYPASS,
  exportLines,
  gnomeDesired,
  gnomeReadCommands,
  gnomeWriteCommands,
  gvParseString,
  gvString,
  gvStringArray,
  INTERNET_SETTINGS,
  kdeDesired,
  kdeParseProxy,
  kdeReadCommands,
  kdeWriteCommands,
  KDE_ABSENT,
  macDesired,
  macParseAutoProxy,
  macParseBypass,
  macParseProxy,
  macParseServices,
  macWriteCommands,
  winBypass,
  winConnScript,
  winDesired,
  winLanWriteCommands,
  winParseEntries,
  winParseRegValue,
  PS_PAYLOAD,
  detectBackend,
  type ProxyTarget,
} from '../../core/sysproxy/index.js';
import { isGatehopError, ErrorCodes } from '../../core/common/index.js';

const target: ProxyTarget = { host: '127.0.0.1', port: 1080, bypass: DEFAULT_BYPASS };
const v6: ProxyTarget = { host: '::1', port: 1080, bypass: ['localhost', '*.corp.example', '<local>'] };

describe('GNOME command builder', () => {
  it('reads each proxy key with its own gsettings get', () => {
    expect(gnomeReadCommands().map((c) => c.argv)).toEqual([
      ['get', 'org.gnome.system.proxy', 'mode'],
      ['get', 'org.gnome.system.proxy', 'autoconfig-url'],
      ['get', 'org.gnome.system.proxy', 'ignore-hosts'],
      ['get', 'org.gnome.system.proxy', 'use-same-proxy'],
      ['get', 'org.gnome.system.proxy.http', 'host'],
      ['get', 'org.gnome.system.proxy.http', 'port'],
      ['get', 'org.gnome.system.proxy.https', 'host'],
      ['get', 'org.gnome.system.proxy.https', 'port'],
      ['get', 'org.gnome.system.proxy.socks', 'host'],
      ['get', 'org.gnome.system.proxy.socks', 'port'],
    ]);
  });

  it('sets hosts and ports first and mode last when turning the proxy on, IPv6 and wildcards included', () => {
    const current = {
      'org.gnome.system.proxy mode': "'none'",
      'org.gnome.system.proxy.http host': "''",
      'org.gnome.system.proxy.http port': '8080',
    };
    const cmds = gnomeWriteCommands(gnomeDesired(v6, current), current);
    expect(cmds[cmds.length - 1]).toEqual(['set', 'org.gnome.system.proxy', 'mode', "'manual'"]);
    expect(cmds).toContainEqual(['set', 'org.gnome.system.proxy.http', 'host', "'::1'"]);
    expect(cmds).toContainEqual(['set', 'org.gnome.system.proxy.socks', 'port', '1080']);
    expect(cmds).toContainEqual(['set', 'org.gnome.system.proxy', 'ignore-hosts', "['localhost', '*.corp.example']"]);
  });

  it('restores a PAC with its query string, mode first, writing back the raw values it read', () => {
    const pac = {
      'org.gnome.system.proxy mode': "'auto'",
      'org.gnome.system.proxy autoconfig-url': "'http://wpad.corp.example/proxy.pac?site=b&v=2'",
    };
    const ours = gnomeDesired(target, pac);
    const back = gnomeWriteCommands(pac, ours);
    expect(back[0]).toEqual(['set', 'org.gnome.system.proxy', 'mode', "'auto'"]);
    expect(back).not.toContainEqual(expect.arrayContaining(['autoconfig-url'])); // never changed: not written
  });

  it('quotes GVariant strings and arrays, and parses them back', () => {
    expect(gvString("it's a \\ path")).toBe("'it\\'s a \\\\ path'");
    expect(gvParseString(gvString("it's a \\ path"))).toBe("it's a \\ path");
    expect(gvStringArray([])).toBe('@as []');
    expect(gvParseString('42')).toBeNull();
  });
});

describe('KDE command builder', () => {
  it('reads every key with a sentinel default, so an absent key is told from an empty one', () => {
    expect(kdeReadCommands()[0]!.argv).toEqual([
      '--file',
      'kioslaverc',
      '--group',
      'Proxy Settings',
      '--key',
      'ProxyType',
      '--default',
      KDE_ABSENT,
    ]);
    expect(kdeReadCommands().map((c) => c.key)).toEqual([
      'ProxyType',
      'httpProxy',
      'httpsProxy',
      'socksProxy',
      'NoProxyFor',
      'Proxy Config Script',
      'ReversedException',
    ]);
  });

  it('writes KIO host-space-port values (IPv6 in brackets), ProxyType last', () => {
    const current = {
      ProxyType: null,
      httpProxy: null,
      httpsProxy: null,
      socksProxy: null,
      NoProxyFor: null,
      'Proxy Config Script': null,
      ReversedException: null,
    };
    const cmds = kdeWriteCommands(kdeDesired(v6, current), current);
    expect(cmds).toContainEqual([
      '--file',
      'kioslaverc',
      '--group',
      'Proxy Settings',
      '--key',
      'httpProxy',
      'http://[::1] 1080',
    ]);
    expect(cmds).toContainEqual([
      '--file',
      'kioslaverc',
      '--group',
      'Proxy Settings',
      '--key',
      'socksProxy',
      'socks://[::1] 1080',
    ]);
    expect(cmds).toContainEqual([
      '--file',
      'kioslaverc',
      '--group',
      'Proxy Settings',
      '--key',
      'NoProxyFor',
      'localhost,*.corp.example',
    ]);
    expect(cmds[cmds.length - 1]).toEqual([
      '--file',
      'kioslaverc',
      '--group',
      'Proxy Settings',
      '--key',
      'ProxyType',
      '1',
    ]);
  });

  it('deletes on restore the keys that were absent, and puts a PAC URL back whole', () => {
    const before = { ProxyType: '2', 'Proxy Config Script': 'http://pac.example/x.pac?a=1&b=2', httpProxy: null };
    const ours = kdeDesired(target, before);
    const back = kdeWriteCommands(before, ours);
    expect(back[0]).toEqual(['--file', 'kioslaverc', '--group', 'Proxy Settings', '--key', 'ProxyType', '2']);
    expect(back).toContainEqual([
      '--file',
      'kioslaverc',
      '--group',
      'Proxy Settings',
      '--key',
      'httpProxy',
      '--delete',
    ]);
  });

  it('parses the proxy forms KIO writes', () => {
    expect(kdeParseProxy('http://127.0.0.1 1080')).toEqual({ host: '127.0.0.1', port: 1080 });
    expect(kdeParseProxy('http://proxy.corp:3128')).toEqual({ host: 'proxy.corp', port: 3128 });
    expect(kdeParseProxy('socks://[::1] 1080')).toEqual({ host: '::1', port: 1080 });
  });
});

describe('macOS command builder', () => {
  it('lists enabled services only, keeping names with spaces', () => {
    const out =
      'An asterisk (*) denotes that a network service is disabled.\nWi-Fi\n*Bluetooth PAN\nUSB 10/100/1000 LAN\n';
    expect(macParseServices(out)).toEqual(['Wi-Fi', 'USB 10/100/1000 LAN']);
  });

  it('parses networksetup output, a PAC URL with a query string included', () => {
    expect(macParseProxy('Enabled: Yes\nServer: proxy.corp\nPort: 3128\nAuthenticated Proxy Enabled: 0\n')).toBe(
      'on proxy.corp 3128',
    );
    expect(macParseProxy('Enabled: No\nServer: \nPort: 0\nAuthenticated Proxy Enabled: 0\n')).toBe('off  0');
    expect(macParseAutoProxy('URL: http://pac.corp/p.pac?x=1&y=2\nEnabled: Yes\n')).toBe(
      'on http://pac.corp/p.pac?x=1&y=2',
    );
    expect(macParseAutoProxy('URL: (null)\nEnabled: No\n')).toBe('off ');
    expect(macParseBypass("There aren't any bypass domains set on Wi-Fi.\n")).toBe('');
    expect(macParseBypass('*.local\n169.254/16\n')).toBe('*.local\n169.254/16');
  });

  it('sets server then state per service, bypass domains as separate arguments, PAC off', () => {
    const svc = 'USB 10/100/1000 LAN';
    const current = {
      [`${svc}\tweb`]: 'off  0',
      [`${svc}\tsecureweb`]: 'off  0',
      [`${svc}\tsocks`]: 'off  0',
      [`${svc}\tbypass`]: '',
      [`${svc}\tautoproxy`]: 'on http://pac/x?y=1',
    };
    const cmds = macWriteCommands(macDesired(v6, current), current);
    expect(cmds).toEqual([
      ['-setwebproxy', svc, '::1', '1080'],
      ['-setwebproxystate', svc, 'on'],
      ['-setsecurewebproxy', svc, '::1', '1080'],
      ['-setsecurewebproxystate', svc, 'on'],
      ['-setsocksfirewallproxy', svc, '::1', '1080'],
      ['-setsocksfirewallproxystate', svc, 'on'],
      ['-setproxybypassdomains', svc, 'localhost', '*.corp.example', '*.local'],
      ['-setautoproxyurl', svc, 'http://pac/x?y=1'],
      ['-setautoproxystate', svc, 'off'],
    ]);
    // And back: the PAC on again, bypass emptied with networksetup's "Empty".
    const back = macWriteCommands(current, macDesired(v6, current));
    expect(back).toContainEqual(['-setproxybypassdomains', svc, 'Empty']);
    expect(back).toContainEqual(['-setautoproxystate', svc, 'on']);
  });
});

describe('Windows command builder', () => {
  it('parses reg query output and the dial-up entries of the Connections key', () => {
    const out = `\r\n${INTERNET_SETTINGS.replace('HKCU', 'HKEY_CURRENT_USER')}\r\n    ProxyServer    REG_SZ    http=proxy.corp:3128;https=proxy.corp:3128\r\n\r\n`;
    expect(winParseRegValue(out, 'ProxyServer')).toBe('REG_SZ http=proxy.corp:3128;https=proxy.corp:3128');
    expect(winParseRegValue('    ProxyEnable    REG_DWORD    0x1\r\n', 'ProxyEnable')).toBe('REG_DWORD 0x1');
    expect(winParseRegValue('    ProxyOverride    REG_SZ    \r\n', 'ProxyOverride')).toBe('REG_SZ');
    const conns =
      '\r\nHKEY_CURRENT_USER\\...\\Connections\r\n    DefaultConnectionSettings    REG_BINARY    4600\r\n    SavedLegacySettings    REG_BINARY    4600\r\n    Office VPN    REG_BINARY    4600\r\n';
    expect(winParseEntries(conns)).toEqual(['Office VPN']);
  });

  it('adds and deletes registry values with reg.exe, a PAC URL with a query string as one argument', () => {
    const before = {
      'lan\tProxyEnable': 'REG_DWORD 0x0',
      'lan\tProxyServer': null,
      'lan\tProxyOverride': null,
      'lan\tAutoConfigURL': 'REG_SZ http://pac.corp/p.pac?a=1&b=2',
      'lan\tAutoDetect': null,
    };
    const ours = winDesired(target, before);
    const on = winLanWriteCommands(ours, before);
    expect(on).toContainEqual(['add', INTERNET_SETTINGS, '/v', 'ProxyEnable', '/t', 'REG_DWORD', '/d', '0x1', '/f']);
    expect(on).toContainEqual([
      'add',
      INTERNET_SETTINGS,
      '/v',
      'ProxyServer',
      '/t',
      'REG_SZ',
      '/d',
      'http=127.0.0.1:1080;https=127.0.0.1:1080;socks=127.0.0.1:1080',
      '/f',
    ]);
    expect(on).toContainEqual(['delete', INTERNET_SETTINGS, '/v', 'AutoConfigURL', '/f']);
    const off = winLanWriteCommands(before, ours);
    expect(off).toContainEqual([
      'add',
      INTERNET_SETTINGS,
      '/v',
      'AutoConfigURL',
      '/t',
      'REG_SZ',
      '/d',
      'http://pac.corp/p.pac?a=1&b=2',
      '/f',
    ]);
    expect(off).toContainEqual(['delete', INTERNET_SETTINGS, '/v', 'ProxyServer', '/f']);
  });

  it("writes the bypass list in WinINet's syntax (no CIDR) and IPv6 hosts in brackets", () => {
    expect(winBypass(['localhost', '127.0.0.0/8', '::1', '*.corp.example', '<local>'])).toBe(
      'localhost;127.*;[::1];*.corp.example;<local>',
    );
    expect(winBypass(['172.16.0.0/12']).split(';')).toHaveLength(16);
    expect(winDesired(v6, {})['lan\tProxyServer']).toBe('REG_SZ http=[::1]:1080;https=[::1]:1080;socks=[::1]:1080');
  });

  it('hands dial-up entry names to PowerShell as data, never as code', () => {
    const script = winConnScript('set', {
      "Bob's VPN'; Remove-Item C:\\ #": { flags: 3, server: 's', bypass: 'b', autoconfig: '' },
    });
    expect(script).not.toContain("Bob's VPN");
    const b64 = script.split('\n')[0]!.slice(PS_PAYLOAD.length);
    expect(JSON.parse(Buffer.from(b64, 'base64').toString())).toMatchObject({
      op: 'set',
      entries: { "Bob's VPN'; Remove-Item C:\\ #": { flags: 3 } },
    });
  });
});

describe('choosing a backend', () => {
  const run = async () => ({ stdout: '', stderr: '' });
  it('picks by platform and XDG_CURRENT_DESKTOP, Plasma 6 tools on Plasma 6', () => {
    expect(detectBackend(run, target, { platform: 'win32', env: {} }).id).toBe('windows');
    expect(detectBackend(run, target, { platform: 'darwin', env: {} }).id).toBe('macos');
    expect(detectBackend(run, target, { platform: 'linux', env: { XDG_CURRENT_DESKTOP: 'ubuntu:GNOME' } }).id).toBe(
      'gnome',
    );
    expect(detectBackend(run, target, { platform: 'linux', env: { XDG_CURRENT_DESKTOP: 'X-Cinnamon' } }).id).toBe(
      'gnome',
    );
    expect(
      detectBackend(run, target, { platform: 'linux', env: { XDG_CURRENT_DESKTOP: 'KDE', KDE_SESSION_VERSION: '6' } })
        .label,
    ).toMatch(/kwriteconfig6/);
    expect(
      detectBackend(run, target, {
        platform: 'linux',
        env: { XDG_CURRENT_DESKTOP: 'KDE' },
        has: (p) => p === 'kwriteconfig5',
      }).label,
    ).toMatch(/kwriteconfig5/);
  });

  it('says "not supported" on another desktop and gives the export lines to use by hand', () => {
    try {
      detectBackend(run, target, { platform: 'linux', env: { XDG_CURRENT_DESKTOP: 'sway' } });
      expect.unreachable();
    } catch (err) {
      expect(isGatehopError(err, ErrorCodes.SYSPROXY_UNSUPPORTED)).toBe(true);
      expect((err as Error).message).toContain('not supported on the sway desktop');
      expect((err as Error).message).toContain(
        'export http_proxy=http://127.0.0.1:1080 https_proxy=http://127.0.0.1:1080 all_proxy=socks5h://127.0.0.1:1080',
      );
    }
    expect(exportLines(v6)[0]).toContain('all_proxy=socks5h://[::1]:1080');
  });
});
