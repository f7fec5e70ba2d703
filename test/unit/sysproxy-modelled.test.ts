/**
 * core/sysproxy on Windows and macOS, against runners that model the registry / networksetup
 * state (the real tools are not on this machine): snapshot → apply → restore round trips on the
 * modelled state, and the error paths. GNOME and KDE run for real in test/integration.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCodes, silentLogger } from '../../core/common/index.js';
import {
  CommandError,
  DEFAULT_BYPASS,
  INTERNET_SETTINGS,
  macosBackend,
  PS_PAYLOAD,
  SnapshotKeeper,
  SystemProxy,
  windowsBackend,
  type ConnSettings,
  type ProxyBackend,
  type Runner,
} from '../../core/sysproxy/index.js';

const log = silentLogger();
const target = { host: '127.0.0.1', port: 1080, bypass: DEFAULT_BYPASS };

/** HKCU Internet Settings plus WinINet's per-connection settings, as reg.exe and the script see them. */
function windowsModel(initial: Record<string, [string, string]>, entries: Record<string, ConnSettings> = {}) {
  const values = new Map(Object.entries(initial));
  const conns = new Map(Object.entries(entries));
  const calls: string[][] = [];
  let denyWrites = false;
  let failOn: string | null = null;
  const run: Runner = async (file, args) => {
    calls.push([file, ...args]);
    if (file === 'reg') {
      const [op, key, , name] = args as string[];
      if (op === 'query' && key === INTERNET_SETTINGS) {
        const v = values.get(name!);
        if (!v)
          throw new CommandError(
            'reg',
            args,
            1,
            'ERROR: The system was unable to find the specified registry key or value.',
          );
        return { stdout: `\r\nHKEY_CURRENT_USER\\...\r\n    ${name}    ${v[0]}    ${v[1]}\r\n\r\n`, stderr: '' };
      }
      if (op === 'query')
        return { stdout: [...conns.keys()].map((n) => `    ${n}    REG_BINARY    4600`).join('\r\n'), stderr: '' };
      if (denyWrites) throw new CommandError('reg', args, 1, 'ERROR: Access is denied.');
      if (failOn === name) throw new CommandError('reg', args, 1, 'ERROR: something broke');
      if (op === 'add') values.set(name!, [args[5]!, args[7]!]);
      if (op === 'delete') values.delete(name!);
      return { stdout: 'The operation completed successfully.', stderr: '' };
    }
    if (file === 'powershell.exe') {
      const script = args[args.length - 1]!;
      const payload = JSON.parse(Buffer.from(script.split('\n')[0]!.slice(PS_PAYLOAD.length), 'base64').toString()) as {
        op: string;
        entries: Record<string, ConnSettings | null>;
      };
      if (payload.op === 'query')
        return {
          stdout: JSON.stringify(Object.fromEntries([...conns].filter(([n]) => n in payload.entries))),
          stderr: '',
        };
      if (payload.op === 'set') for (const [n, c] of Object.entries(payload.entries)) if (c) conns.set(n, c);
      return { stdout: '{}', stderr: '' };
    }
    throw new Error(`unexpected ${file}`);
  };
  return { run, values, conns, calls, deny: () => (denyWrites = true), failOn: (n: string) => (failOn = n) };
}

/** networksetup's services with their proxies, as the tool reports and changes them. */
function macModel(
  services: Record<
    string,
    {
      web?: [boolean, string, number];
      secureweb?: [boolean, string, number];
      socks?: [boolean, string, number];
      bypass?: string[];
      pac?: [boolean, string];
    }
  >,
) {
  const s = structuredClone(services);
  let needAdmin = false;
  const proxyText = (p?: [boolean, string, number]) =>
    `Enabled: ${p?.[0] ? 'Yes' : 'No'}\nServer: ${p?.[1] ?? ''}\nPort: ${p?.[2] ?? 0}\nAuthenticated Proxy Enabled: 0\n`;
  const kinds: Record<string, 'web' | 'secureweb' | 'socks'> = {
    webproxy: 'web',
    securewebproxy: 'secureweb',
    socksfirewallproxy: 'socks',
  };
  const run: Runner = async (file, args) => {
    if (file !== 'networksetup') throw new Error(`unexpected ${file}`);
    const [verb, svc, ...rest] = args as string[];
    if (verb === '-listallnetworkservices')
      return {
        stdout: `An asterisk (*) denotes that a network service is disabled.\n${Object.keys(s).join('\n')}\n*Thunderbolt Bridge\n`,
        stderr: '',
      };
    const st = s[svc!]!;
    const get = /^-get(webproxy|securewebproxy|socksfirewallproxy)$/.exec(verb!);
    if (get) return { stdout: proxyText(st[kinds[get[1]!]!]), stderr: '' };
    if (verb === '-getproxybypassdomains')
      return {
        stdout: st.bypass?.length ? `${st.bypass.join('\n')}\n` : `There aren't any bypass domains set on ${svc}.\n`,
        stderr: '',
      };
    if (verb === '-getautoproxyurl')
      return { stdout: `URL: ${st.pac?.[1] || '(null)'}\nEnabled: ${st.pac?.[0] ? 'Yes' : 'No'}\n`, stderr: '' };
    if (needAdmin) throw new CommandError('networksetup', args, 14, '');
    const set = /^-set(webproxy|securewebproxy|socksfirewallproxy)(state)?$/.exec(verb!);
    if (set) {
      const k = kinds[set[1]!]!;
      const cur = st[k] ?? [false, '', 0];
      st[k] = set[2] ? [rest[0] === 'on', cur[1], cur[2]] : [true, rest[0]!, Number(rest[1])];
    } else if (verb === '-setproxybypassdomains') st.bypass = rest[0] === 'Empty' ? [] : rest;
    else if (verb === '-setautoproxyurl') st.pac = [true, rest[0]!];
    else if (verb === '-setautoproxystate') st.pac = [rest[0] === 'on', st.pac?.[1] ?? ''];
    return { stdout: '', stderr: '' };
  };
  return { run, state: s, requireAdmin: () => (needAdmin = true) };
}

function proxyWith(
  backend: ProxyBackend,
  file = join(mkdtempSync(join(tmpdir(), 'gh-sp-')), 'sysproxy-snapshot.json'),
) {
  return { sp: new SystemProxy({ backend, keeper: new SnapshotKeeper(file, log), logger: log }), file };
}

describe('Windows (modelled registry and WinINet)', () => {
  const corporate = {
    ProxyEnable: ['REG_DWORD', '0x1'],
    ProxyServer: ['REG_SZ', 'proxy.corp:3128'],
    ProxyOverride: ['REG_SZ', '*.corp;<local>'],
  } as Record<string, [string, string]>;

  it('sets the LAN values and each dial-up entry, notifies WinINet, and restores a corporate proxy exactly', async () => {
    const m = windowsModel(corporate, {
      'Office VPN': { flags: 5, server: '', bypass: '', autoconfig: 'http://pac.corp/p.pac?x=1' },
    });
    const { sp } = proxyWith(windowsBackend(m.run));
    await sp.apply(target);
    expect(m.values.get('ProxyServer')).toEqual([
      'REG_SZ',
      'http=127.0.0.1:1080;https=127.0.0.1:1080;socks=127.0.0.1:1080',
    ]);
    expect(m.conns.get('Office VPN')).toMatchObject({
      flags: 3,
      server: 'http=127.0.0.1:1080;https=127.0.0.1:1080;socks=127.0.0.1:1080',
    });
    expect(m.calls.some((c) => c[0] === 'powershell.exe')).toBe(true);
    expect(await sp.status()).toMatchObject({ enabled: true });
    expect(await sp.restore()).toBe('restored');
    expect(Object.fromEntries(m.values)).toEqual(corporate);
    expect(m.conns.get('Office VPN')).toEqual({
      flags: 5,
      server: '',
      bypass: '',
      autoconfig: 'http://pac.corp/p.pac?x=1',
    });
  });

  it('restores a PAC (AutoConfigURL) that Gatehop removed while it ran, and "none" as none', async () => {
    const pac = {
      ProxyEnable: ['REG_DWORD', '0x0'],
      AutoConfigURL: ['REG_SZ', 'http://wpad.corp/wpad.dat?v=2'],
    } as Record<string, [string, string]>;
    const m = windowsModel(pac);
    const { sp } = proxyWith(windowsBackend(m.run));
    await sp.apply(target);
    expect(m.values.has('AutoConfigURL')).toBe(false);
    await sp.restore();
    expect(Object.fromEntries(m.values)).toEqual(pac);
    const none = windowsModel({});
    const p2 = proxyWith(windowsBackend(none.run)).sp;
    await p2.apply(target);
    await p2.restore();
    expect(none.values.size).toBe(0);
  });

  it('turns "access is denied" into GH_ERR_SYSPROXY_DENIED and changes nothing', async () => {
    const m = windowsModel(corporate);
    m.deny();
    const { sp, file } = proxyWith(windowsBackend(m.run));
    await expect(sp.apply(target)).rejects.toMatchObject({
      code: ErrorCodes.SYSPROXY_DENIED,
      message: expect.stringMatching(/denied.*ask the administrator/),
    });
    expect(Object.fromEntries(m.values)).toEqual(corporate);
    expect(new SnapshotKeeper(file, log).load()).toBeNull();
  });

  it('puts back what was already written when a write fails part-way', async () => {
    const m = windowsModel(corporate);
    m.failOn('ProxyOverride'); // after ProxyEnable and ProxyServer were written
    const { sp } = proxyWith(windowsBackend(m.run));
    await expect(sp.apply(target)).rejects.toMatchObject({ code: ErrorCodes.SYSPROXY_FAILED });
    expect(Object.fromEntries(m.values)).toEqual(corporate);
  });
});

describe('macOS (modelled networksetup)', () => {
  const services = {
    'Wi-Fi': { pac: [true, 'http://pac.corp/proxy.pac?site=b&v=2'] as [boolean, string] },
    'USB 10/100/1000 LAN': {
      web: [true, 'proxy.corp', 3128] as [boolean, string, number],
      secureweb: [true, 'proxy.corp', 3128] as [boolean, string, number],
      bypass: ['*.corp', '169.254/16'],
    },
  };

  it('sets every enabled service and restores each one exactly: a PAC stays a PAC, a proxy that proxy', async () => {
    const m = macModel(services);
    const { sp } = proxyWith(macosBackend(m.run));
    await sp.apply(target);
    expect(m.state['Wi-Fi']).toMatchObject({
      web: [true, '127.0.0.1', 1080],
      socks: [true, '127.0.0.1', 1080],
      pac: [false, 'http://pac.corp/proxy.pac?site=b&v=2'],
    });
    expect(m.state['USB 10/100/1000 LAN']!.bypass).toContain('*.local');
    expect(await sp.restore()).toBe('restored');
    expect(m.state['Wi-Fi']!.pac).toEqual([true, 'http://pac.corp/proxy.pac?site=b&v=2']);
    expect(m.state['Wi-Fi']!.web?.[0]).toBe(false);
    expect(m.state['USB 10/100/1000 LAN']).toMatchObject({
      web: [true, 'proxy.corp', 3128],
      secureweb: [true, 'proxy.corp', 3128],
      bypass: ['*.corp', '169.254/16'],
    });
    expect(m.state['USB 10/100/1000 LAN']!.socks?.[0]).toBe(false);
  });

  it('turns exit code 14 into GH_ERR_SYSPROXY_DENIED that says an administrator is needed', async () => {
    const m = macModel(services);
    m.requireAdmin();
    const { sp } = proxyWith(macosBackend(m.run));
    await expect(sp.apply(target)).rejects.toMatchObject({
      code: ErrorCodes.SYSPROXY_DENIED,
      message: expect.stringMatching(/administrator.*exit 14/),
    });
    expect(m.state['Wi-Fi']!.pac).toEqual([true, 'http://pac.corp/proxy.pac?site=b&v=2']);
  });
});

describe('snapshot, restore and recovery (on the modelled Windows state)', () => {
  const corporate = { ProxyEnable: ['REG_DWORD', '0x1'], ProxyServer: ['REG_SZ', 'proxy.corp:3128'] } as Record<
    string,
    [string, string]
  >;

  it('leaves settings alone that the user changed while Gatehop had them, and says so', async () => {
    const m = windowsModel(corporate);
    const { sp } = proxyWith(windowsBackend(m.run));
    const events: string[] = [];
    sp.onEvent((e) => events.push(e.type));
    await sp.apply(target);
    m.values.set('ProxyServer', ['REG_SZ', 'other-vpn:8888']);
    expect(await sp.restore()).toBe('left-alone');
    expect(m.values.get('ProxyServer')).toEqual(['REG_SZ', 'other-vpn:8888']);
    expect(events).toEqual(['applied', 'left-alone']);
  });

  it('recovers at start from a snapshot whose process is gone; keeps its hands off one whose process runs', async () => {
    const m = windowsModel(corporate);
    const { sp, file } = proxyWith(windowsBackend(m.run));
    await sp.apply(target);
    const keeper = new SnapshotKeeper(file, log);
    const snap = keeper.load()!;
    keeper.save({ ...snap, pid: process.ppid, pidStart: null }); // a live process that is not us
    const other = new SystemProxy({ backend: windowsBackend(m.run), keeper, logger: log });
    expect(await other.recover({ host: '127.0.0.1', port: 1080 })).toBe('owner-running');
    keeper.save({ ...snap, pid: 2 ** 22 + 12345, pidStart: null }); // above pid_max: gone
    expect(await other.recover({ host: '127.0.0.1', port: 1080 })).toBe('recovered');
    expect(Object.fromEntries(m.values)).toEqual(corporate);
  });

  it('turns the proxy off when it points at Gatehop and there is no snapshot to go back to', async () => {
    const m = windowsModel({
      ProxyEnable: ['REG_DWORD', '0x1'],
      ProxyServer: ['REG_SZ', 'http=127.0.0.1:1080;https=127.0.0.1:1080'],
    });
    const { sp } = proxyWith(windowsBackend(m.run));
    expect(await sp.recover({ host: '127.0.0.1', port: 1080 })).toBe('turned-off');
    expect(m.values.get('ProxyEnable')).toEqual(['REG_DWORD', '0x0']);
    expect(await sp.recover({ host: '127.0.0.1', port: 1080 })).toBe('nothing');
  });

  it('changes nothing when the snapshot cannot be saved (a full disk, a read-only folder)', async () => {
    const m = windowsModel(corporate);
    const dir = mkdtempSync(join(tmpdir(), 'gh-sp-'));
    writeFileSync(join(dir, 'not-a-dir'), '');
    const { sp } = proxyWith(windowsBackend(m.run), join(dir, 'not-a-dir', 'sysproxy-snapshot.json'));
    await expect(sp.apply(target)).rejects.toMatchObject({
      code: ErrorCodes.SYSPROXY_FAILED,
      message: expect.stringMatching(/cannot save the system proxy snapshot.*was not changed/),
    });
    expect(Object.fromEntries(m.values)).toEqual(corporate);
  });

  it('falls back to the store copy when the snapshot file is corrupt', async () => {
    const m = windowsModel(corporate);
    const file = join(mkdtempSync(join(tmpdir(), 'gh-sp-')), 'sysproxy-snapshot.json');
    let mirrored: unknown = null;
    const mirror = { save: (s: unknown) => (mirrored = s), load: () => mirrored, clear: () => (mirrored = null) };
    const sp = new SystemProxy({
      backend: windowsBackend(m.run),
      keeper: new SnapshotKeeper(file, log, mirror),
      logger: log,
    });
    await sp.apply(target);
    writeFileSync(file, '{"version":1,"backe'); // torn
    expect(await sp.restore()).toBe('restored');
    expect(Object.fromEntries(m.values)).toEqual(corporate);
    expect(mirrored).toBeNull();
  });
});

describe('the guard', () => {
  it('notices another program rewriting the settings, reports it, and sets them back when asked to', async () => {
    vi.useFakeTimers();
    try {
      const m = windowsModel({});
      const file = join(mkdtempSync(join(tmpdir(), 'gh-sp-')), 'sysproxy-snapshot.json');
      const sp = new SystemProxy({
        backend: windowsBackend(m.run),
        keeper: new SnapshotKeeper(file, log),
        logger: log,
        guard: { intervalMs: 1000, reapply: true },
      });
      const events: Array<{ type: string; reapplied?: boolean }> = [];
      sp.onEvent((e) => events.push(e));
      await sp.apply(target);
      await vi.advanceTimersByTimeAsync(2500);
      expect(events.map((e) => e.type)).toEqual(['applied']); // nothing changed: nothing said
      m.values.set('ProxyServer', ['REG_SZ', 'other-vpn:8888']);
      await vi.advanceTimersByTimeAsync(1000);
      expect(events[1]).toMatchObject({ type: 'overridden', reapplied: true });
      expect(m.values.get('ProxyServer')![1]).toContain('127.0.0.1:1080');
      await sp.restore();
      await vi.advanceTimersByTimeAsync(5000);
      expect(events.map((e) => e.type)).toEqual(['applied', 'overridden', 'restored']); // stopped with the restore
      sp.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
