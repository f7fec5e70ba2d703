import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig, defaultDataDir, readConfigFile } from '../../core/app/index.js';
import { RuleTable } from '../../core/rules/index.js';
import { parseEndpoint, unbracket } from '../../core/common/index.js';

describe('config', () => {
  it('fills every default', () => {
    const c = buildConfig({}, { dataDir: '/tmp/x' });
    expect(c.listen).toEqual({ host: '127.0.0.1', port: 1080 });
    expect(c.admin).toEqual({ host: '127.0.0.1', port: 9090 });
    expect(c.proxy).toMatchObject({
      maxSessions: 1024,
      handshakeTimeoutMs: 10_000,
      connectTimeoutMs: 15_000,
      idleTimeoutMs: 300_000,
    });
    expect(c.logFile).toBe('/tmp/x/logs/gatehop.log');
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('lets flags override the file, field by field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-cfg-'));
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'listen: 127.0.0.1:2000\nproxy:\n  maxSessions: 5\n  idleTimeoutMs: 1000\n');
    const c = buildConfig(readConfigFile(file), { proxy: { idleTimeoutMs: 2000 }, admin: 'off' });
    expect(c.listen.port).toBe(2000);
    expect(c.proxy.maxSessions).toBe(5);
    expect(c.proxy.idleTimeoutMs).toBe(2000);
    expect(c.admin).toBeNull();
  });

  it('rejects unknown keys and bad values naming the field', () => {
    expect(() => buildConfig({ lisen: 'x' } as never, {})).toThrow(/lisen|Unrecognized/);
    expect(() => buildConfig({}, { listen: 'nope' })).toThrow(/listen/);
    expect(() => buildConfig({}, { proxy: { maxSessions: -1 } })).toThrow(/proxy.maxSessions/);
  });

  it('a rule line it cannot read never stops the start: a logic rule and a group name load, the table names the second (#45)', () => {
    const rules = [
      'AND,((DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535)),REJECT',
      'DOMAIN-SUFFIX,jp.example,Japan',
      'MATCH,TUNNEL',
    ];
    const c = buildConfig({ rules } as never, {});
    expect(c.rules).toEqual(rules);
    const t = new RuleTable({ mode: 'rule', rules: c.rules! });
    expect(t.rules.map((r) => r.type)).toEqual(['AND', 'MATCH']);
    expect(t.errors).toMatchObject([{ line: 2, message: expect.stringMatching(/unknown target "Japan"/) }]);
  });

  it('balance: one tunnel by default; 1..4 tunnels and the four strategies, anything else refused naming the field (issue #15)', () => {
    expect(buildConfig({}, { dataDir: '/tmp/x' }).groups.balance).toEqual({ strategy: 'round-robin', tunnels: 1 });
    expect(buildConfig({ groups: { balance: { tunnels: 3, strategy: 'least-sessions' } } }, {}).groups.balance).toEqual(
      { strategy: 'least-sessions', tunnels: 3 },
    );
    expect(() => buildConfig({ groups: { balance: { tunnels: 5 } } }, {})).toThrow(/groups\.balance\.tunnels/);
    expect(() => buildConfig({ groups: { balance: { strategy: 'random' } } } as never, {})).toThrow(
      /groups\.balance\.strategy/,
    );
  });

  it('tunnel: worker threads by default with a 256 MiB heap each; threads: false keeps tunnels in-thread; a heap below 32 MiB is refused naming the field (issue #16)', () => {
    expect(buildConfig({}, { dataDir: '/tmp/x' }).tunnel).toMatchObject({ threads: true, workerHeapMb: 256 });
    expect(buildConfig({ tunnel: { threads: false } }, {}).tunnel.threads).toBe(false);
    expect(() => buildConfig({ tunnel: { workerHeapMb: 8 } }, {})).toThrow(/tunnel\.workerHeapMb/);
    expect(() => buildConfig({ tunnel: { workers: 2 } } as never, {})).toThrow(/tunnel/);
  });

  it('tunnel protocols: OpenVPN, then SE-VPN, then SSTP with learning by default (#35); an order of one or both, each once; SSTP as VPN Gate offers it (issue #22)', () => {
    const t = buildConfig({}, { dataDir: '/tmp/x' }).tunnel;
    expect(t.protocols).toEqual(['openvpn', 'sevpn', 'sstp']);
    expect(t.learnProtocol).toBe(true);
    expect(t.sstp).toEqual({ sni: true, port: 443, username: 'vpn', password: 'vpn', ca: undefined });
    expect(buildConfig({ tunnel: { protocols: ['sstp', 'openvpn'] } }, {}).tunnel.protocols).toEqual([
      'sstp',
      'openvpn',
    ]);
    // The extra CA is tunnel.nodeCa, for every protocol (#43); the SSTP-era name is still read, with a notice.
    const old = buildConfig({ tunnel: { protocols: ['sstp'], sstp: { ca: 'rig-ca.pem', sni: false } } }, {});
    expect(old.tunnel.nodeCa).toMatch(/\/rig-ca\.pem$/);
    expect(old.tunnel.sstp).toMatchObject({ ca: undefined, sni: false });
    expect(old.notices).toEqual([expect.stringMatching(/tunnel\.sstp\.ca is the old name of tunnel\.nodeCa/)]);
    const both = buildConfig({ tunnel: { nodeCa: 'new.pem', sstp: { ca: 'old.pem' } } }, {});
    expect(both.tunnel.nodeCa).toMatch(/\/new\.pem$/);
    expect(both.notices).toEqual([expect.stringMatching(/tunnel\.sstp\.ca is ignored/)]);
    expect(buildConfig({ tunnel: { nodeCa: 'ca.pem' } }, {}).notices).toEqual([]);
    expect(() => buildConfig({ tunnel: { protocols: [] } }, {})).toThrow(/tunnel\.protocols/);
    expect(() => buildConfig({ tunnel: { protocols: ['sstp', 'sstp'] } }, {})).toThrow(
      /tunnel\.protocols: each protocol at most once/,
    );
    expect(() => buildConfig({ tunnel: { protocols: ['wireguard'] } } as never, {})).toThrow(/tunnel\.protocols/);
  });

  it('refuses an open proxy on a non-loopback address unless --no-auth', () => {
    expect(() => buildConfig({}, { listen: '0.0.0.0:1080' })).toThrow(/needs --auth-file/);
    expect(buildConfig({}, { listen: '0.0.0.0:1080', noAuth: true }).noAuth).toBe(true);
  });

  it('reports a config file that is not YAML', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-cfg-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'listen: [unclosed');
    expect(() => readConfigFile(file)).toThrow(/not valid YAML/);
  });

  it('parses endpoints with IPv6 brackets and rejects ports out of range', () => {
    expect(parseEndpoint('[::1]:9')).toEqual({ host: '::1', port: 9 });
    expect(parseEndpoint(':80')).toEqual({ host: '0.0.0.0', port: 80 });
    expect(() => parseEndpoint('h:70000')).toThrow();
    // A URL's hostname (new URL('http://[::1]:80/').hostname is '[::1]'), as every caller takes it.
    expect(unbracket(new URL('http://[2001:db8::1]:80/').hostname)).toBe('2001:db8::1');
    expect(unbracket('example.org')).toBe('example.org');
    expect(unbracket('192.0.2.1')).toBe('192.0.2.1');
  });

  it('puts the data dir in the OS app-data folder', () => {
    expect(defaultDataDir({ XDG_CONFIG_HOME: '/cfg' }, 'linux')).toBe('/cfg/Gatehop');
    expect(defaultDataDir({ APPDATA: 'C:\\A' }, 'win32')).toMatch(/Gatehop$/);
  });
});
