/**
 * The desktop shell (issue #14) against the fake Electron module, with a real core in-process
 * (direct egress, loopback ports): tray, quit paths, single instance, window security, and the
 * IPC round trip through the real preload and the renderer's IpcCoreClient.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { eventKeys, opNames, type NodeDto } from '../../core/api/index.js';
import { channelOf, EVENT_CHANNEL } from '../../electron/ipc-channels.js';
import { CRASH_RECORDS_KEPT, Lifecycle, type FatalEvents } from '../../electron/lifecycle.js';
import { runShell, type Shell } from '../../electron/shell.js';
import { TRAY_MIN_INTERVAL_MS } from '../../electron/tray-controller.js';
import { APP_URL, WEB_PREFERENCES } from '../../electron/window-controller.js';
import { IpcCoreClient, type GatehopBridge } from '../../renderer/src/client/ipc-core-client.js';
import { honesty } from '../../renderer/test/fakes.js';
import { loadSandboxedPreload } from './sandboxed-preload.js';
import {
  createFakeElectron,
  fakeEvent,
  FakeBrowserWindow,
  FakeNotification,
  FakeTray,
  type FakeElectron,
  type FakeMenu,
} from './fake-electron.js';

const ROOT = resolve(__dirname, '../..');
const shells: Shell[] = [];

afterEach(async () => {
  for (const s of shells.splice(0)) await s.lifecycle.shutdown('test-end');
  FakeBrowserWindow.all = [];
  FakeTray.all = [];
  FakeNotification.shown = [];
});

/** A shell with no window assets, for starts that end before any window. */
const BARE = { uiDir: '', assetsDir: '', preload: '', exec: '', argv: [], platform: 'linux' } as const;
/** The core as the tests run it: no VPN, free ports, no log file. */
const TEST_CONFIG = {
  egress: 'direct',
  listen: '127.0.0.1:0',
  admin: '127.0.0.1:0',
  logFile: 'off',
  logLevel: 'silent',
} as const;

async function start(
  opts: { lock?: boolean; argv?: string[]; deadlineMs?: number; configYaml?: string } = {},
): Promise<{ shell: Shell; fake: FakeElectron; signals: Map<string, () => void> }> {
  const fake = createFakeElectron({ userData: mkdtempSync(join(tmpdir(), 'gh-shell-')), lock: opts.lock ?? true });
  if (opts.configYaml) writeFileSync(join(fake.electron.app.getPath('userData'), 'gatehop.yaml'), opts.configYaml);
  const signals = new Map<string, () => void>();
  const shell = await runShell(fake.electron, {
    uiDir: join(ROOT, 'dist/renderer'),
    assetsDir: join(ROOT, 'assets'),
    preload: join(ROOT, 'dist/electron/preload.cjs'),
    exec: '/opt/Gatehop/gatehop',
    argv: opts.argv ?? [],
    platform: 'linux',
    onSignal: (sig, fn) => signals.set(sig, fn),
    shutdownDeadlineMs: opts.deadlineMs ?? 8000,
    configInput: TEST_CONFIG,
    // Start at login writes here, never into the tester's own ~/.config/autostart.
    env: { XDG_CONFIG_HOME: join(fake.electron.app.getPath('userData'), 'xdg') },
  });
  if (shell) shells.push(shell);
  return { shell: shell!, fake, signals };
}

const menuOf = (): FakeMenu => FakeTray.all[0]!.menu!;
/** A node as the tray lists it (the core's /nodes shape). */
const trayNode = (id: string): NodeDto => ({
  id,
  host: id,
  ip: '203.0.113.9',
  port: 443,
  proto: 'tcp',
  country: 'Japan',
  countryCode: 'JP',
  prior: 1,
  rttMs: 20,
  score: 50,
  scoreTerms: null,
  successes: 0,
  failures: 0,
  lastSuccessAt: null,
  lastFailureAt: null,
  backoffUntil: null,
  urlDelayMs: null,
  state: 'candidate',
  lastListedAt: 1,
  excluded: null,
  weakTls: false,
  honesty: null,
  protocols: [],
});
const item = (id: string, menu = menuOf().template): Electron.MenuItemConstructorOptions | undefined => {
  for (const i of menu) {
    if (i.id === id) return i;
    const sub = Array.isArray(i.submenu) ? item(id, i.submenu) : undefined;
    if (sub) return sub;
  }
  return undefined;
};
const click = (id: string, checked?: boolean): void => {
  const i = item(id)!;
  i.click!({ checked: checked ?? !i.checked } as Electron.MenuItem, undefined, {} as KeyboardEvent);
};

describe('the tray', () => {
  it('shows the state in its menu and tooltip, and its items reach the core', async () => {
    const { shell, fake } = await start({ argv: ['--hidden'] });
    expect(FakeTray.all).toHaveLength(1);
    // The first menu is built at once; the core's state lands in the (rate-limited) next one.
    await vi.waitFor(() => expect(item('status')!.label).toBe('Direct (no VPN)'), { timeout: 2000 });
    expect(FakeTray.all[0]!.tooltip).toMatch(/^Gatehop: direct · 0 sessions$/);
    expect(item('auto')!.enabled).toBe(false); // direct egress: no node switching
    click('copy');
    click('copy-env');
    const addr = `127.0.0.1:${shell.core.listening.proxy.port}`;
    expect(fake.clipboardText).toEqual([
      addr,
      `export https_proxy=http://${addr} http_proxy=http://${addr} all_proxy=socks5h://${addr}`,
    ]);
    click('open');
    expect(FakeBrowserWindow.all).toHaveLength(1);
  });

  it('a node found to tamper is picked from the tray only after a dialog says what was found; Cancel does nothing (#43)', async () => {
    const { shell, fake } = await start({ argv: ['--hidden'] });
    const flagged = {
      ...trayNode('tampering-1'),
      honesty: honesty({ verdict: 'dns-tampering', checkedAt: 1 }),
    };
    shell.tray.update({ nodes: [flagged] });
    await vi.waitFor(() => expect(item('node:tampering-1')?.label).toMatch(/⚠ tampers \(DNS\)$/), { timeout: 2000 });
    click('node:tampering-1');
    await vi.waitFor(() => expect(fake.dialogs).toHaveLength(1));
    expect(fake.dialogs[0]).toMatchObject({
      type: 'warning',
      title: 'tampering-1 was found to tamper with traffic',
      detail: expect.stringMatching(/wrong addresses[\s\S]*Use it anyway\?/),
      buttons: ['Use it anyway', 'Cancel'],
      cancelId: 1,
    });
    // Cancel (the fake's default answer): nothing reaches the core, nothing fails.
    await new Promise((r) => setTimeout(r, 50));
    expect(FakeNotification.shown).toEqual([]);
    // "Use it anyway": the pick goes to the core with the user's confirmation (this direct core refuses any pick).
    fake.dialogAnswer.push(0);
    click('node:tampering-1');
    await vi.waitFor(() =>
      expect(FakeNotification.shown.map((n) => n.body)).toContainEqual(expect.stringMatching(/vpngate egress/)),
    );
  });

  it('rebuilds the menu at most twice a second, and always ends on the latest state', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const { shell } = await start({ argv: ['--hidden'] });
      const before = shell.tray.builds;
      for (let i = 0; i < 50; i++) shell.tray.update({ startAtLogin: i % 2 === 0 });
      shell.tray.update({ startAtLogin: true });
      await vi.advanceTimersByTimeAsync(TRAY_MIN_INTERVAL_MS * 2);
      expect(shell.tray.builds - before).toBeLessThanOrEqual(2);
      expect(item('login')!.checked).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('notification kinds are switched in the settings (tray and window alike), and stay off after a restart', async () => {
    const { shell, fake } = await start({ argv: ['--hidden'] });
    click('notify:switched', false);
    expect(shell.notifications.notify('switched', 'x', 'y')).toBe(false);
    expect(shell.notifications.notify('lost', 'x', 'y')).toBe(true);
    expect(shell.notifications.notify('lost', 'x', 'y')).toBe(false); // rate-limited
    const ops = shell.core.admin!.operations;
    expect((await ops.getSettings({})).settings.notifications).toEqual({
      switched: false,
      lost: true,
      sysproxyChanged: true,
    });
    // The window's Settings change the same thing (over IPC it is the same operation).
    await ops.putSettings({ notifications: { switched: true, lost: false, sysproxyChanged: true } });
    expect(shell.notifications.notify('switched', 'x', 'y')).toBe(true);
    const { readFileSync } = await import('node:fs');
    expect(
      JSON.parse(readFileSync(join(fake.electron.app.getPath('userData'), 'settings.json'), 'utf8')),
    ).toMatchObject({ settings: { notifications: { switched: true, lost: false } } });
  });

  it('"Start at login" writes and removes an XDG autostart entry on Linux', async () => {
    const { shell } = await start({ argv: ['--hidden'] });
    click('login', true);
    await new Promise((r) => setTimeout(r, TRAY_MIN_INTERVAL_MS + 50));
    expect(shell.tray.state.startAtLogin).toBe(true);
    click('login', false);
    expect(shell.tray.state.startAtLogin).toBe(false);
  });
});

describe('every way out', () => {
  it.each(['tray', 'before-quit', 'SIGTERM', 'SIGINT', 'session-end', 'os-shutdown'])(
    '%s stops the core once and exits 0',
    async (path) => {
      const { shell, fake, signals } = await start();
      const stop = vi.spyOn(shell.core, 'stop');
      const win = FakeBrowserWindow.all[0]!;
      const fire = (): void => {
        if (path === 'tray') click('quit');
        else if (path === 'before-quit') fake.electron.app.emit('before-quit', fakeEvent());
        else if (path === 'session-end') win.emit('session-end', fakeEvent());
        else if (path === 'os-shutdown') fake.electron.powerMonitor.emit('shutdown', fakeEvent());
        else signals.get(path)!();
      };
      fire();
      fire(); // a second way out while stopping changes nothing
      await vi.waitFor(() => expect(fake.electron.app.exits).toEqual([0]));
      expect(stop).toHaveBeenCalledTimes(1);
      // Our own app.exit must not be stopped again by before-quit.
      const again = fakeEvent();
      fake.electron.app.emit('before-quit', again);
      expect(again.defaultPrevented).toBe(false);
      expect(FakeTray.all[0]!.destroyed).toBe(true);
    },
  );

  it('quits by the deadline when stopping hangs', async () => {
    const fake = createFakeElectron({ userData: tmpdir() });
    const lc = new Lifecycle(fake.electron.app, () => new Promise(() => {}), { deadlineMs: 50, onSignal: () => {} });
    lc.install();
    await lc.shutdown('tray-quit'); // resolves only because the deadline cut the stop that never ends
    expect(fake.electron.app.exits).toEqual([1]);
  });

  it('waits for a system-proxy restore slower than the stop deadline, with the proxy still up, before stopping and exiting (#32)', async () => {
    const fake = createFakeElectron({ userData: tmpdir() });
    const order: string[] = [];
    // A restore that outlasts the stop's deadline, as one slow gsettings or PowerShell call at logoff does.
    const restore = () => new Promise<void>((r) => setTimeout(() => (order.push('restored'), r()), 300));
    const lc = new Lifecycle(fake.electron.app, async () => void order.push('stopped'), {
      deadlineMs: 50,
      restoreFirst: restore,
      onSignal: () => {},
    });
    lc.install();
    await lc.shutdown('session-end');
    // The proxy (stopped with the core) outlived the restore: the OS never pointed at a dead port.
    expect(order).toEqual(['restored', 'stopped']);
    expect(fake.electron.app.exits).toEqual([0]);
  });

  it('a restore that never finishes still ends by its own deadline, with exit code 1', async () => {
    const fake = createFakeElectron({ userData: tmpdir() });
    let stopped = false;
    const lc = new Lifecycle(fake.electron.app, async () => void (stopped = true), {
      deadlineMs: 50,
      restoreDeadlineMs: 100,
      restoreFirst: () => new Promise(() => {}),
      onSignal: () => {},
    });
    lc.install();
    await lc.shutdown('tray-quit');
    expect(stopped).toBe(true);
    expect(fake.electron.app.exits).toEqual([1]);
  });
});

describe('Windows: logoff and crash records (#47)', () => {
  it('query-session-end holds the session end (preventDefault) until the proxy is restored and the process exits', async () => {
    const fake = createFakeElectron({ userData: tmpdir() });
    let restored!: () => void;
    const lc = new Lifecycle(fake.electron.app, async () => {}, {
      restoreFirst: () => new Promise<void>((r) => (restored = r)),
      onSignal: () => {},
    });
    lc.install();
    const win = new EventEmitter();
    lc.watchWindow(win as unknown as Parameters<Lifecycle['watchWindow']>[0]);
    const query = fakeEvent();
    win.emit('query-session-end', query);
    // Held: Windows waits (Electron's documented use of preventDefault on query-session-end).
    expect(query.defaultPrevented).toBe(true);
    expect(fake.electron.app.exits).toEqual([]);
    restored();
    await vi.waitFor(() => expect(fake.electron.app.exits).toEqual([0]));
    // Once out, a later query is not held.
    const later = fakeEvent();
    win.emit('query-session-end', later);
    expect(later.defaultPrevented).toBe(false);
  });

  it('keeps the newest CRASH_RECORDS_KEPT crash records: a crash loop at login cannot fill the folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-crash-'));
    for (let i = 0; i < CRASH_RECORDS_KEPT + 5; i++)
      writeFileSync(join(dir, `crash-2026-01-${String(i + 1).padStart(2, '0')}T00-00-00-000Z.log`), 'old\n');
    writeFileSync(join(dir, 'notes.txt'), 'not a crash record\n');
    const fake = createFakeElectron({ userData: tmpdir() });
    const fatal = new EventEmitter();
    const lc = new Lifecycle(fake.electron.app, async () => {}, {
      crashDir: dir,
      onSignal: () => {},
      fatalEvents: fatal as unknown as FatalEvents,
    });
    lc.install();
    await lc.fatal(new Error('boom'), 'uncaughtException');
    const records = readdirSync(dir).filter((f) => f.startsWith('crash-'));
    expect(records).toHaveLength(CRASH_RECORDS_KEPT);
    expect(records).toContain(basename(lc.crashes[0]!));
    expect(records).not.toContain('crash-2026-01-01T00-00-00-000Z.log');
    expect(readdirSync(dir)).toContain('notes.txt');
    expect(fake.electron.app.exits).toEqual([1]);
  });
});

describe('one instance', () => {
  it('a second launch quits at once; the first focuses its window when told', async () => {
    const second = createFakeElectron({ userData: tmpdir(), lock: false });
    const none = await runShell(second.electron, BARE);
    expect(none).toBeNull();
    expect(second.electron.app.quits).toBe(1);
    expect(FakeTray.all).toHaveLength(0);
    const { fake } = await start({ argv: ['--hidden'] });
    expect(FakeBrowserWindow.all).toHaveLength(0);
    fake.electron.app.emit('second-instance', fakeEvent(), [], '');
    expect(FakeBrowserWindow.all).toHaveLength(1);
    fake.electron.app.emit('second-instance', fakeEvent(), [], '');
    expect(FakeBrowserWindow.all).toHaveLength(1);
    expect(FakeBrowserWindow.all[0]!.focused).toBe(1);
  });
});

describe("the desktop app's gatehop.yaml (#62)", () => {
  it('reads gatehop.yaml in the data folder for what the window has no setting for', async () => {
    const { shell } = await start({ configYaml: 'mode: direct\nsniffPorts: [443]\n' });
    const settings = (shell.core.admin!.operations.getSettings({}) as { settings: { mode: string } }).settings;
    expect(settings.mode).toBe('direct');
  });

  it("a gatehop.yaml that does not validate is named with its key, and the dialog offers the data folder, not a reset of the window's settings", async () => {
    const fake = createFakeElectron({ userData: mkdtempSync(join(tmpdir(), 'gh-shell-')) });
    const dir = fake.electron.app.getPath('userData');
    writeFileSync(join(dir, 'gatehop.yaml'), 'groups:\n  mode: sometimes\n');
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ version: 1, settings: { mode: 'global' } }));
    const shell = await runShell(fake.electron, { ...BARE, configInput: TEST_CONFIG });
    expect(shell).toBeNull();
    const shown = fake.dialogs.at(-1)!;
    expect(shown.detail).toMatch(/gatehop\.yaml: .*groups\.mode/);
    expect(shown.buttons![0]).toMatch(/folder/i);
  });
});

describe('the window', () => {
  it('runs isolated and sandboxed, loads only our page, refuses navigation, window.open and permissions', async () => {
    const { fake } = await start();
    const win = FakeBrowserWindow.all[0]!;
    expect(win.options.webPreferences).toMatchObject({
      ...WEB_PREFERENCES,
      preload: expect.stringMatching(/preload\.cjs$/),
    });
    expect(win.loaded).toEqual([APP_URL]);
    const nav = fakeEvent();
    win.webContents.emit('will-navigate', nav, 'https://evil.example/');
    expect(nav.defaultPrevented).toBe(true);
    const inApp = fakeEvent();
    win.webContents.emit('will-navigate', inApp, `${APP_URL}#view=nodes`);
    expect(inApp.defaultPrevented).toBe(false);
    expect(win.webContents.windowOpenHandler!({ url: 'https://example.org/' } as Electron.HandlerDetails)).toEqual({
      action: 'deny',
    });
    let granted: boolean | null = null;
    (fake.permission.request as unknown as (wc: unknown, p: string, cb: (ok: boolean) => void) => void)(
      {},
      'media',
      (ok) => (granted = ok),
    );
    expect(granted).toBe(false);
    // The page comes from our scheme, with the dashboard's CSP, and nothing outside the build.
    const page = await fake.protocolHandlers.get('gatehop')!(new Request('gatehop://app/index.html'));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(
      (await fake.protocolHandlers.get('gatehop')!(new Request('gatehop://app/..%2f..%2fpackage.json'))).status,
    ).toBe(404);
  });

  it('hides on close (telling the user once that Gatehop keeps running) and remembers its bounds', async () => {
    await start();
    const win = FakeBrowserWindow.all[0]!;
    await new Promise((r) => setTimeout(r, 0));
    expect(win.visible).toBe(true);
    expect(win.userClose().defaultPrevented).toBe(true);
    expect(win.visible).toBe(false);
    win.userClose();
    expect(FakeNotification.shown.filter((n) => /keeps running/.test(n.title ?? ''))).toHaveLength(1);
  });

  it('ignores IPC from another frame and rejects invalid payloads with a coded error', async () => {
    const { fake } = await start();
    const win = FakeBrowserWindow.all[0]!;
    const setMode = fake.handlers.get(channelOf('setMode'))!;
    const own = {
      sender: win.webContents,
      senderFrame: { url: `${APP_URL}` },
    } as unknown as Electron.IpcMainInvokeEvent;
    const foreign = {
      sender: win.webContents,
      senderFrame: { url: 'https://evil.example/' },
    } as unknown as Electron.IpcMainInvokeEvent;
    expect(await setMode(foreign, { auto: true })).toEqual({
      ok: false,
      error: { code: 'GH_ERR_IPC_FORBIDDEN', message: expect.any(String) },
    });
    expect(await setMode(own, { auto: 'yes' })).toMatchObject({ ok: false, error: { code: 'GH_ERR_IPC_BAD_REQUEST' } });
    // The direct egress has no switching: the core's own code comes back.
    expect(await setMode(own, { auto: true })).toMatchObject({ ok: false, error: { code: 'GH_ERR_API_UNSUPPORTED' } });
  });
});

describe('the IPC round trip', () => {
  it('IpcCoreClient → the real preload → ipcMain handlers answer every operation, and events arrive', async () => {
    const { fake } = await start();
    const win = FakeBrowserWindow.all[0]!;
    // The renderer side: the built preload in a sandboxed context, its ipcRenderer wired to the
    // fake main side, where payloads and results are structured-cloned as Electron does.
    const listeners = new Set<(e: unknown, ...args: unknown[]) => void>();
    const { exposed: world, required } = loadSandboxedPreload(join(ROOT, 'dist/electron/preload.cjs'), {
      invoke: (channel, payload) =>
        fake.invoke(
          channel,
          {
            sender: win.webContents as unknown as Electron.WebContents,
            senderFrame: { url: APP_URL } as Electron.WebFrameMain,
          },
          payload,
        ),
      on: (channel, fn) => channel === EVENT_CHANNEL && listeners.add(fn),
      removeListener: (_c, fn) => listeners.delete(fn),
    });
    expect([...new Set(required)]).toEqual(['electron']);
    const exposed = world.gatehop as GatehopBridge;
    expect(Object.keys(exposed!).sort()).toEqual([...opNames, 'subscribe'].sort()); // nothing else is exposed
    const client = new IpcCoreClient(exposed!);
    const seen: string[] = [];
    client.subscribe((e) => seen.push(e.type));
    // Every operation reaches the core and comes back validated (ok, or the core's coded refusal).
    const inputs: Record<string, unknown> = {
      importNodes: { csv: 'not a list' },
      importRules: { config: 'rules: [MATCH,DIRECT]' },
      closeConnection: { id: '999' },
      testNode: { nodeId: 'n1' },
      checkNode: { nodeId: 'n1' },
      switchNode: {},
      setMode: { auto: true },
      closeDraining: { egressId: 'x' },
      putSettings: { language: 'en' },
      setSystemProxy: { enabled: false },
      getLatency: {},
      setRouteMode: { mode: 'global' },
      refreshRuleSet: { name: 'none' },
      openCapture: { command: 'curl' },
      runCaptured: { command: ' ' },
      setShare: { enabled: false },
      addShareDevice: { name: 'TV' },
      removeShareDevice: { id: 'nobody' },
      getShareDeviceQr: { id: 'nobody' },
      getTraffic: { days: 7, nodesOnly: true },
      getClosedConnections: { q: 'example', limit: 10 },
      exportTraffic: { days: 1 },
      setTrafficOptions: { retentionDays: 30 },
      saveProfile: { name: 'Home', choices: { mode: 'rule' } },
      removeProfile: { network: 'nowhere' },
    };
    // Restart last: it ends this core (the desktop app relaunches itself).
    for (const name of opNames.filter((n) => n !== 'restart')) {
      const r = await client.call(name, (inputs[name] ?? {}) as never);
      if (r.ok) continue;
      expect(r.error.code, name).toMatch(
        /^GH_ERR_(API_UNSUPPORTED|API_NOT_FOUND|SYSPROXY_UNSUPPORTED|LIST_INVALID|CAPTURE_UNAVAILABLE|CONFIG_INVALID|NETWORK_PROFILE_INVALID)$/,
      );
    }
    expect((await client.call('getStatus', {})).ok).toBe(true);
    expect((await client.call('getSettings', {})).ok).toBe(true);
    // Events: what the admin API publishes reaches the window (status every second at least).
    for (const fn of listeners) fn({}, 'log', { time: 1, level: '30', msg: 'hello' });
    await vi.waitFor(
      () => expect(win.webContents.sent.some((m) => m.channel === EVENT_CHANNEL && m.args[0] === 'status')).toBe(true),
      { timeout: 5000 },
    );
    for (const m of win.webContents.sent) for (const fn of listeners) fn({}, ...m.args);
    expect(seen).toContain('log');
    expect(seen).toContain('status');
    expect(eventKeys).toContain('status');
    // The window's "Restart now": the app relaunches and this process exits cleanly.
    expect(await client.call('restart', {})).toEqual({ ok: true, value: null });
    await vi.waitFor(() => expect(fake.electron.app.exits).toEqual([0]), { timeout: 10_000 });
    expect(fake.electron.app.relaunches).toBe(1);
    client.close();
  });

  it("Start at login in the window's Settings is the tray's: one value, both ways, never saved in settings.json", async () => {
    const { shell, fake } = await start({ argv: ['--hidden'] });
    const ops = shell.core.admin!.operations;
    expect((await ops.getSettings({})).settings.startAtLogin).toBe(false);
    await ops.putSettings({ startAtLogin: true, language: 'en' });
    expect(shell.autostart.enabled).toBe(true);
    await vi.waitFor(() => expect(shell.tray.state.startAtLogin).toBe(true));
    click('login', false);
    expect((await ops.getSettings({})).settings.startAtLogin).toBe(false);
    const { readFileSync } = await import('node:fs');
    const saved = JSON.parse(readFileSync(join(fake.electron.app.getPath('userData'), 'settings.json'), 'utf8')) as {
      settings: Record<string, unknown>;
    };
    expect(saved.settings).toEqual({ language: 'en' });
  });
});
