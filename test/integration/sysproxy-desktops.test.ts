/**
 * core/sysproxy against the real desktop tools: GNOME's gsettings over dconf on a private D-Bus
 * session, KDE's kwriteconfig5/kreadconfig5 on a temporary kioslaverc. What Gatehop wrote is read
 * back by separate processes, as other applications read it. Then the headless flags end to end:
 * `gatehop --system-proxy`, SIGTERM restores, SIGKILL then a plain start restores.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import {
  createExecRunner,
  DEFAULT_BYPASS,
  detectBackend,
  SnapshotKeeper,
  SystemProxy,
} from '../../core/sysproxy/index.js';
import {
  gget,
  gnomeSession,
  gset,
  kdeSession,
  kread,
  kwrite,
  type DesktopSession,
} from '../helpers/desktop-session.js';

const BIN = resolve(__dirname, '../../bin/gatehop.js');
const log = silentLogger();
const target = { host: '127.0.0.1', port: 18080, bypass: DEFAULT_BYPASS };
const P = 'org.gnome.system.proxy';
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

function systemProxyIn(
  session: DesktopSession,
  dataDir = mkdtempSync(join(tmpdir(), 'gh-spd-')),
  killSwitch?: () => boolean,
): SystemProxy {
  const backend = detectBackend(createExecRunner(session.env), target, { platform: 'linux', env: session.env });
  return new SystemProxy({
    backend,
    keeper: new SnapshotKeeper(join(dataDir, 'sysproxy-snapshot.json'), log),
    logger: log,
    ...(killSwitch ? { killSwitch } : {}),
  });
}

/** `gatehop --egress direct` in the desktop session; resolves at its ready line. */
async function gatehopIn(
  session: DesktopSession,
  dataDir: string,
  extra: string[],
): Promise<{ child: ChildProcess; exited: Promise<number | null>; stdout: () => string; stderr: () => string }> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      '--egress',
      'direct',
      '--listen',
      '127.0.0.1:0',
      '--admin',
      'off',
      '--log-file',
      'off',
      '--data-dir',
      dataDir,
      ...extra,
    ],
    {
      env: session.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  await new Promise<void>((res, rej) => {
    const check = (): void => {
      if (out.includes('gatehop ready:')) res();
    };
    child.stdout!.on('data', check);
    void exited.then((code) => rej(new Error(`gatehop exited ${code} before ready: ${err}`)));
  });
  return { child, exited, stdout: () => out, stderr: () => err };
}

const portOf = (stdout: string): string => /socks5\+http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout)![1]!;

beforeAll(() => {
  if (!existsSync(resolve(__dirname, '../../dist/core/app/index.js')))
    throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
});

describe('GNOME (gsettings over dconf, private D-Bus session)', () => {
  let s: DesktopSession;
  beforeAll(async () => {
    s = await gnomeSession();
  });
  afterAll(async () => {
    await s.close();
  });

  it('sets HTTP, HTTPS and SOCKS to Gatehop with the bypass list, and restores a PAC with its URL', async () => {
    await gset(s.env, P, 'mode', "'auto'");
    await gset(s.env, P, 'autoconfig-url', "'http://wpad.corp.example/proxy.pac?site=b&v=2'");
    const sp = systemProxyIn(s);
    await sp.apply(target);
    expect(await gget(s.env, P, 'mode')).toBe("'manual'");
    for (const child of ['http', 'https', 'socks']) {
      expect(await gget(s.env, `${P}.${child}`, 'host')).toBe("'127.0.0.1'");
      expect(await gget(s.env, `${P}.${child}`, 'port')).toBe('18080');
    }
    expect(await gget(s.env, P, 'ignore-hosts')).toContain("'192.168.0.0/16'");
    expect(await sp.restore()).toBe('restored');
    expect(await gget(s.env, P, 'mode')).toBe("'auto'");
    expect(await gget(s.env, P, 'autoconfig-url')).toBe("'http://wpad.corp.example/proxy.pac?site=b&v=2'");
  });

  it("in rule mode with systemProxy.pac, points GNOME at Gatehop's PAC and knows it as its own; restore puts the user's back (#33)", async () => {
    await gset(s.env, P, 'mode', "'none'");
    const sp = systemProxyIn(s);
    await sp.apply({ ...target, pacUrl: 'http://127.0.0.1:18080/proxy.pac' });
    expect(await gget(s.env, P, 'mode')).toBe("'auto'");
    expect(await gget(s.env, P, 'autoconfig-url')).toBe("'http://127.0.0.1:18080/proxy.pac'");
    expect((await sp.status()).enabled).toBe(true);
    expect(await sp.restore()).toBe('restored');
    expect(await gget(s.env, P, 'mode')).toBe("'none'");
  });

  it('restores a manual corporate proxy exactly, and leaves alone settings the user changed meanwhile', async () => {
    await gset(s.env, P, 'mode', "'manual'");
    await gset(s.env, `${P}.http`, 'host', "'proxy.corp.example'");
    await gset(s.env, `${P}.http`, 'port', '3128');
    await gset(s.env, P, 'ignore-hosts', "['*.corp.example', 'localhost']");
    const sp = systemProxyIn(s);
    await sp.apply(target);
    await sp.restore();
    expect(await gget(s.env, `${P}.http`, 'host')).toBe("'proxy.corp.example'");
    expect(await gget(s.env, `${P}.http`, 'port')).toBe('3128');
    expect(await gget(s.env, P, 'ignore-hosts')).toBe("['*.corp.example', 'localhost']");
    await sp.apply(target);
    await gset(s.env, P, 'mode', "'none'"); // the user turned it off in Settings
    expect(await sp.restore()).toBe('left-alone');
    expect(await gget(s.env, P, 'mode')).toBe("'none'");
  });

  it('gatehop --system-proxy sets it once listening, and SIGTERM restores it', async () => {
    await gset(s.env, P, 'mode', "'auto'");
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-spd-'));
    const g = await gatehopIn(s, dataDir, ['--system-proxy']);
    expect(await gget(s.env, P, 'mode')).toBe("'manual'");
    expect(await gget(s.env, `${P}.socks`, 'port')).toBe(portOf(g.stdout()));
    g.child.kill('SIGTERM');
    expect(await g.exited).toBe(0);
    expect(await gget(s.env, P, 'mode')).toBe("'auto'");
  });

  it('after SIGKILL, the next plain start restores the settings and says so', async () => {
    await gset(s.env, P, 'mode', "'auto'");
    await gset(s.env, P, 'autoconfig-url', "'http://pac.example/after-crash.pac'");
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-spd-'));
    const g = await gatehopIn(s, dataDir, ['--system-proxy']);
    g.child.kill('SIGKILL');
    await g.exited;
    expect(await gget(s.env, P, 'mode')).toBe("'manual'"); // stranded: pointing at a dead port
    const again = await gatehopIn(s, dataDir, ['--log-level', 'warn']);
    expect(await gget(s.env, P, 'mode')).toBe("'auto'");
    expect(await gget(s.env, P, 'autoconfig-url')).toBe("'http://pac.example/after-crash.pac'");
    expect(again.stdout()).toMatch(/ended without restoring the system proxy; restored it/);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  });

  it('kill switch: going away leaves the proxy on Gatehop, a start with it on keeps it, one with it off restores exactly (#46)', async () => {
    await gset(s.env, P, 'mode', "'auto'");
    await gset(s.env, P, 'autoconfig-url', "'http://wpad.corp.example/ks.pac'");
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-spd-'));
    let on = true;
    const sp = systemProxyIn(s, dataDir, () => on);
    const events: string[] = [];
    sp.onEvent((e) => events.push(e.type));
    await sp.apply(target);
    expect(await sp.release()).toBe('held');
    expect(await sp.release()).toBe('held'); // the shell's release, then the core's stop: said once
    expect(events).toEqual(['applied', 'held']);
    expect(await gget(s.env, P, 'mode')).toBe("'manual'");
    expect(await gget(s.env, `${P}.socks`, 'port')).toBe('18080');
    // As the next process finds it: the snapshot names one that is gone.
    const file = join(dataDir, 'sysproxy-snapshot.json');
    const gone = () =>
      writeFileSync(
        file,
        JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), pid: 2 ** 22 + 77, pidStart: null }),
      );
    gone();
    const next = systemProxyIn(s, dataDir, () => on);
    expect(await next.recover(target)).toBe('held');
    expect(await gget(s.env, P, 'mode')).toBe("'manual'");
    expect((await next.status()).enabled).toBe(true); // this process's now: the toggle shows it on
    // Turned off while running: the next way out restores what the user had, exactly.
    on = false;
    expect(await next.release()).toBe('restored');
    expect(await gget(s.env, P, 'mode')).toBe("'auto'");
    expect(await gget(s.env, P, 'autoconfig-url')).toBe("'http://wpad.corp.example/ks.pac'");
    // And the switch off at the next start (after a crash that held it): recovered exactly.
    on = true;
    const third = systemProxyIn(s, dataDir, () => on);
    await third.apply(target);
    gone();
    on = false;
    expect(await systemProxyIn(s, dataDir, () => on).recover(target)).toBe('recovered');
    expect(await gget(s.env, P, 'mode')).toBe("'auto'");
    expect(await gget(s.env, P, 'autoconfig-url')).toBe("'http://wpad.corp.example/ks.pac'");
  });

  it('kill switch: settings the user changed while Gatehop was away are theirs, not held', async () => {
    await gset(s.env, P, 'mode', "'none'");
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-spd-'));
    const sp = systemProxyIn(s, dataDir, () => true);
    await sp.apply(target);
    await sp.release();
    const file = join(dataDir, 'sysproxy-snapshot.json');
    writeFileSync(
      file,
      JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), pid: 2 ** 22 + 78, pidStart: null }),
    );
    await gset(s.env, P, 'mode', "'none'"); // the user turned it off in Settings meanwhile
    expect(await systemProxyIn(s, dataDir, () => true).recover(target)).toBe('left-alone');
    expect(await gget(s.env, P, 'mode')).toBe("'none'");
    expect(existsSync(file)).toBe(false);
  });

  it('gatehop --kill-switch: SIGKILL and SIGTERM both leave the proxy on Gatehop; a plain start restores it (#46)', async () => {
    await gset(s.env, P, 'mode', "'auto'");
    await gset(s.env, P, 'autoconfig-url', "'http://pac.example/kill-switch.pac'");
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-spd-'));
    const first = await gatehopIn(s, dataDir, ['--system-proxy', '--kill-switch']);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(await gget(s.env, P, 'mode')).toBe("'manual'");
    // The next start with the switch on keeps it, and points it at its own (new) port.
    const second = await gatehopIn(s, dataDir, ['--kill-switch', '--log-level', 'warn']);
    expect(await gget(s.env, P, 'mode')).toBe("'manual'");
    expect(await gget(s.env, `${P}.socks`, 'port')).toBe(portOf(second.stdout()));
    expect(second.stdout()).toMatch(/kill switch on: the system proxy Gatehop \(pid \d+\) left pointed at .* is kept/);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(await gget(s.env, P, 'mode')).toBe("'manual'"); // a clean quit holds it too
    expect(second.stdout()).toMatch(/kill switch on: the system proxy stays pointed at Gatehop/);
    // Off: the user's own settings, exactly.
    const third = await gatehopIn(s, dataDir, ['--log-level', 'warn']);
    expect(await gget(s.env, P, 'mode')).toBe("'auto'");
    expect(await gget(s.env, P, 'autoconfig-url')).toBe("'http://pac.example/kill-switch.pac'");
    expect(third.stdout()).toMatch(/ended without restoring the system proxy; restored it/);
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
  });

  it('gatehop sysproxy status and restore work on a machine left pointing at a dead port', async () => {
    await gset(s.env, P, 'mode', "'none'");
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-spd-'));
    const g = await gatehopIn(s, dataDir, ['--system-proxy']);
    g.child.kill('SIGKILL');
    await g.exited;
    const run = (args: string[]) =>
      new Promise<{ code: number | null; out: string }>((res) => {
        const c = spawn(process.execPath, [BIN, 'sysproxy', ...args, '--data-dir', dataDir], {
          env: s.env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        c.stdout.on('data', (b: Buffer) => (out += b.toString()));
        c.stderr.on('data', (b: Buffer) => (out += b.toString()));
        c.on('exit', (code) => res({ code, out }));
      });
    const st = await run(['status']);
    expect(st.code).toBe(0);
    expect(st.out).toMatch(/now: +manual \(http 127\.0\.0\.1:\d+/);
    expect(st.out).toMatch(/snapshot: saved .* restores to: none/);
    const r = await run(['restore']);
    expect(r).toMatchObject({ code: 0, out: expect.stringMatching(/restored/) });
    expect(await gget(s.env, P, 'mode')).toBe("'none'");
    expect((await run(['status'])).out).toMatch(/snapshot: none/);
  });
});

describe('KDE Plasma (kwriteconfig5 / kreadconfig5 on kioslaverc)', () => {
  let s: DesktopSession;
  beforeAll(() => {
    s = kdeSession();
  });
  afterAll(async () => {
    await s.close();
  });

  it('sets the proxy keys and restores a PAC exactly (absent keys deleted again)', async () => {
    await kwrite(s.env, 'ProxyType', '2');
    await kwrite(s.env, 'Proxy Config Script', 'http://pac.corp.example/p.pac?a=1&b=2');
    const sp = systemProxyIn(s);
    await sp.apply(target);
    expect(await kread(s.env, 'ProxyType')).toBe('1');
    expect(await kread(s.env, 'httpProxy')).toBe('http://127.0.0.1 18080');
    expect(await kread(s.env, 'socksProxy')).toBe('socks://127.0.0.1 18080');
    expect(await kread(s.env, 'NoProxyFor')).toContain('127.0.0.0/8');
    expect(await sp.restore()).toBe('restored');
    expect(await kread(s.env, 'ProxyType')).toBe('2');
    expect(await kread(s.env, 'Proxy Config Script')).toBe('http://pac.corp.example/p.pac?a=1&b=2');
    const file = await import('node:fs').then((fs) =>
      fs.readFileSync(join(s.env.XDG_CONFIG_HOME!, 'kioslaverc'), 'utf8'),
    );
    expect(file).not.toMatch(/httpProxy|socksProxy/);
  });

  it("with systemProxy.pac, points KDE at Gatehop's PAC (ProxyType 2) and restores the user's (#33)", async () => {
    await kwrite(s.env, 'ProxyType', '0');
    const sp = systemProxyIn(s);
    await sp.apply({ ...target, pacUrl: 'http://127.0.0.1:18080/proxy.pac' });
    expect(await kread(s.env, 'ProxyType')).toBe('2');
    expect(await kread(s.env, 'Proxy Config Script')).toBe('http://127.0.0.1:18080/proxy.pac');
    expect((await sp.status()).enabled).toBe(true);
    await sp.restore();
    expect(await kread(s.env, 'ProxyType')).toBe('0');
  });

  it('restores a manual corporate proxy exactly', async () => {
    await kwrite(s.env, 'ProxyType', '1');
    await kwrite(s.env, 'httpProxy', 'http://proxy.corp.example 3128');
    await kwrite(s.env, 'NoProxyFor', '*.corp.example');
    const sp = systemProxyIn(s);
    await sp.apply(target);
    expect(await kread(s.env, 'httpProxy')).toBe('http://127.0.0.1 18080');
    await sp.restore();
    expect(await kread(s.env, 'httpProxy')).toBe('http://proxy.corp.example 3128');
    expect(await kread(s.env, 'NoProxyFor')).toBe('*.corp.example');
  });

  it('after SIGKILL, the next plain start restores', async () => {
    await kwrite(s.env, 'ProxyType', '0');
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-spd-'));
    const g = await gatehopIn(s, dataDir, ['--system-proxy']);
    expect(await kread(s.env, 'ProxyType')).toBe('1');
    g.child.kill('SIGKILL');
    await g.exited;
    const again = await gatehopIn(s, dataDir, []);
    expect(await kread(s.env, 'ProxyType')).toBe('0');
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  });
});
