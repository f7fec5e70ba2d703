/**
 * How the desktop shell behaves on each OS it ships for (issue #21), against the fake Electron
 * with a real core in-process: a tray menu that stays put, start at login that reads back right,
 * logoff and crashes that put the system proxy back, a renderer crash that is not a blank window,
 * start-up dialogs that offer only what fixes the failure, and the tray and dialogs in Chinese.
 */
import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdminServer } from '../../core/api/index.js';
import { describeProfileChoices, translate } from '../../core/api/catalog/index.js';
import { ErrorCodes, GatehopError } from '../../core/common/index.js';
import { Autostart, HIDDEN_ARG } from '../../electron/autostart.js';
import { runShell, type Shell, type ShellOptions } from '../../electron/shell.js';
import { classifyStartError } from '../../electron/start-core.js';
import { TRAY_MIN_INTERVAL_MS } from '../../electron/tray-controller.js';
import { APP_URL, CRASHED_URL } from '../../electron/window-controller.js';
import {
  createFakeElectron,
  fakeEvent,
  FakeBrowserWindow,
  FakeNotification,
  FakeTray,
  type FakeElectron,
  type FakeElectronOptions,
  type FakeMenu,
} from './fake-electron.js';

const ROOT = resolve(__dirname, '../..');
const EXEC = 'C:\\Program Files\\Gatehop\\Gatehop.exe';
const shells: Shell[] = [];
const servers: Server[] = [];

afterEach(async () => {
  for (const s of shells.splice(0)) await s.lifecycle.shutdown('test-end');
  for (const s of servers.splice(0)) s.close();
  FakeBrowserWindow.all = [];
  FakeTray.all = [];
  FakeNotification.shown = [];
});

interface StartOptions extends Partial<FakeElectronOptions> {
  argv?: string[];
  env?: NodeJS.ProcessEnv;
  fatalEvents?: ShellOptions['fatalEvents'];
  configInput?: ShellOptions['configInput'];
  /** Answers for the dialogs, in order (default: the last button, Quit / Close). */
  answers?: number[];
  /** Set up the fake before the shell runs (a saved login item, say). */
  before?: (fake: FakeElectron) => void;
}

const QUIET = {
  egress: 'direct' as const,
  listen: '127.0.0.1:0',
  admin: '127.0.0.1:0',
  logFile: 'off',
  logLevel: 'silent' as const,
};

function fakeFor(o: StartOptions): FakeElectron {
  const userData = o.userData ?? mkdtempSync(join(tmpdir(), 'gh-desk-'));
  const fake = createFakeElectron({ ...o, userData, execPath: o.execPath ?? EXEC });
  fake.dialogAnswer.push(...(o.answers ?? []));
  o.before?.(fake);
  return fake;
}

function shellOptions(fake: FakeElectron, o: StartOptions): ShellOptions {
  const userData = fake.electron.app.getPath('userData');
  return {
    uiDir: join(ROOT, 'dist/renderer'),
    assetsDir: join(ROOT, 'assets'),
    preload: join(ROOT, 'dist/electron/preload.cjs'),
    exec: o.execPath ?? EXEC,
    argv: o.argv ?? [],
    platform: o.platform ?? 'linux',
    onSignal: () => {},
    fatalEvents: o.fatalEvents ?? new EventEmitter(),
    shutdownDeadlineMs: 8000,
    configInput: { ...QUIET, ...o.configInput },
    // Never the tester's own ~/.config/autostart.
    env: { HOME: userData, XDG_CONFIG_HOME: join(userData, 'xdg'), ...o.env },
  };
}

async function start(o: StartOptions = {}): Promise<{ shell: Shell; fake: FakeElectron }> {
  const fake = fakeFor(o);
  const shell = await runShell(fake.electron, shellOptions(fake, o));
  if (shell) shells.push(shell);
  return { shell: shell!, fake };
}

const trayOf = (): FakeTray => FakeTray.all[0]!;
const menuOf = (): FakeMenu => trayOf().menu!;
function item(id: string, menu = menuOf().template): Electron.MenuItemConstructorOptions | undefined {
  for (const i of menu) {
    if (i.id === id) return i;
    const sub = Array.isArray(i.submenu) ? item(id, i.submenu) : undefined;
    if (sub) return sub;
  }
  return undefined;
}
function click(id: string, checked?: boolean): void {
  const i = item(id)!;
  i.click!({ checked: checked ?? !i.checked } as Electron.MenuItem, undefined, {} as KeyboardEvent);
}
/** The Gatehop windows (not Windows' hidden session window). */
const appWindows = (): FakeBrowserWindow[] =>
  FakeBrowserWindow.all.filter((w) => w.loaded.some((u) => u.startsWith(APP_URL)));
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, TRAY_MIN_INTERVAL_MS + 60));

const PLATFORMS = ['win32', 'darwin', 'linux'] as const;

describe.each(PLATFORMS)('on %s', (platform) => {
  it('a status that changes nothing the user sees does not replace the tray menu, tooltip or image', async () => {
    const { shell } = await start({ platform, argv: [HIDDEN_ARG] });
    await vi.waitFor(() => expect(item('status')!.label).toBe('Direct (no VPN)'), { timeout: 3000 });
    await settle();
    const tray = trayOf();
    const before = { menus: tray.menus, tooltips: tray.tooltips, images: tray.images, builds: shell.tray.builds };
    // What the core's status event (every second) hands the tray: a new object with the same content.
    for (let i = 0; i < 3; i++) {
      shell.tray.update({ status: await shell.core.admin!.operations.getStatus({}) });
      await settle();
    }
    expect(shell.tray.builds).toBeGreaterThan(before.builds); // the tray did look at each one
    expect({ menus: tray.menus, tooltips: tray.tooltips, images: tray.images }).toEqual({
      menus: before.menus,
      tooltips: before.tooltips,
      images: before.images,
    });
    // A change the menu shows replaces it once; the tooltip and image stay.
    shell.tray.update({ startAtLogin: !shell.tray.state.startAtLogin });
    await settle();
    expect(tray.menus).toBe(before.menus + 1);
    expect(tray.tooltips).toBe(before.tooltips);
    expect(tray.images).toBe(before.images);
    // Every image the tray was given exists (an empty image is an invisible icon).
    expect(tray.emptyImages).toEqual([]);
  });

  it(
    platform === 'darwin'
      ? 'keeps the app menu (Cmd-Q); no click handler on the icon'
      : platform === 'win32'
        ? 'has no menu bar; a left click on the tray icon opens the window'
        : 'has no menu bar; no action depends on clicking the icon (AppIndicator drops clicks)',
    async () => {
      const { fake } = await start({ platform, argv: [HIDDEN_ARG] });
      expect(fake.electron.app.applicationMenu).toBe(platform === 'darwin' ? undefined : null);
      const tray = trayOf();
      if (platform === 'win32') {
        expect(appWindows()).toHaveLength(0);
        tray.emit('click', fakeEvent());
        expect(appWindows()).toHaveLength(1);
      } else expect(tray.listenerCount('click')).toBe(0);
      // Every action is in the context menu.
      for (const id of ['open', 'quit', 'login', 'nodes', 'auto', 'sysproxy']) expect(item(id), id).toBeDefined();
    },
  );

  it('a login start opens no window; a normal start does', async () => {
    // Windows and Linux: the entry passes --hidden. macOS: the login item does not pass arguments; the OS says so.
    const login: StartOptions =
      platform === 'darwin'
        ? { platform, before: (f) => void (f.electron.app.wasOpenedAtLogin = true) }
        : { platform, argv: [HIDDEN_ARG] };
    await start(login);
    expect(FakeBrowserWindow.all.filter((w) => w.options.show !== false || w.loaded.length > 0)).toHaveLength(0);
    await shells.pop()!.lifecycle.shutdown('next');
    FakeBrowserWindow.all = [];
    await start({ platform });
    expect(appWindows()).toHaveLength(1);
  });

  it('a second launch (or reopening the app) before the core is up is not lost', async () => {
    const fake = fakeFor({ platform, readyAtOnce: false });
    const running = runShell(fake.electron, shellOptions(fake, { platform, argv: [HIDDEN_ARG] }));
    fake.electron.app.emit(platform === 'darwin' ? 'activate' : 'second-instance', fakeEvent(), [], '');
    fake.becomeReady();
    const shell = (await running)!;
    shells.push(shell);
    expect(appWindows()).toHaveLength(1);
  });

  it('a fatal error records the crash, puts the system proxy back before anything else, and exits 1', async () => {
    const fatal = new EventEmitter();
    const { shell, fake } = await start({ platform, argv: [HIDDEN_ARG], fatalEvents: fatal });
    const order: string[] = [];
    const release = shell.core.systemProxy.release.bind(shell.core.systemProxy);
    vi.spyOn(shell.core.systemProxy, 'release').mockImplementation(async () => {
      order.push('restore');
      return release();
    });
    const stop = shell.core.stop.bind(shell.core);
    vi.spyOn(shell.core, 'stop').mockImplementation(async () => {
      order.push('stop');
      return stop();
    });
    fatal.emit('unhandledRejection', new Error('boom in a timer'));
    await vi.waitFor(() => expect(fake.electron.app.exits).toEqual([1]), { timeout: 10_000 });
    expect(order.slice(0, 2)).toEqual(['restore', 'stop']);
    const dir = join(fake.electron.app.getPath('userData'), 'crashes');
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(readFileSync(join(dir, files[0]!), 'utf8')).toMatch(/unhandledRejection\nError: boom in a timer/);
  });
});

/** The admin server's event feed as the shell subscribes to it: a test can publish into it directly. */
function tapEventFeeds() {
  const feeds: Array<(event: string, data: unknown) => void> = [];
  const original = AdminServer.prototype.onEvent;
  const spy = vi.spyOn(AdminServer.prototype, 'onEvent').mockImplementation(function (this: AdminServer, fn) {
    feeds.push(fn);
    return original.call(this, fn);
  });
  return { feeds, spy };
}

describe('Windows session end', () => {
  it('after a login start with no window, logoff still stops the core (and so restores the system proxy)', async () => {
    const { shell, fake } = await start({ platform: 'win32', argv: [HIDDEN_ARG] });
    expect(appWindows()).toHaveLength(0);
    const hidden = shell.sessionWindow as unknown as FakeBrowserWindow;
    expect(hidden).toBeInstanceOf(FakeBrowserWindow);
    expect(hidden.options).toMatchObject({ show: false, skipTaskbar: true, focusable: false });
    expect(hidden.loaded).toEqual([]); // never shows anything
    const stop = vi.spyOn(shell.core, 'stop');
    hidden.emit('query-session-end', fakeEvent());
    hidden.emit('session-end', fakeEvent());
    await vi.waitFor(() => expect(fake.electron.app.exits).toEqual([0]));
    expect(stop).toHaveBeenCalledTimes(1);
    expect(hidden.destroyed).toBe(true);
  });

  it('other platforms get no hidden window', async () => {
    const { shell } = await start({ platform: 'linux', argv: [HIDDEN_ARG] });
    expect(shell.sessionWindow).toBeNull();
    expect(FakeBrowserWindow.all).toHaveLength(0);
  });

  it('a window opened and hidden many times is watched once', async () => {
    const { shell } = await start({ platform: 'win32' });
    const win = appWindows()[0]!;
    for (let i = 0; i < 3; i++) {
      win.userClose();
      shell.windows.open();
    }
    expect(win.listenerCount('session-end')).toBe(1);
    expect(win.listenerCount('close')).toBe(1);
  });
});

describe('start at login', () => {
  it('Windows: the Run entry carries --hidden and reads back as set (asked with the same path and arguments)', async () => {
    const { shell, fake } = await start({ platform: 'win32', argv: [HIDDEN_ARG] });
    click('login', true);
    expect([...fake.loginItems.keys()]).toEqual([`${EXEC}|${HIDDEN_ARG}`]);
    expect(shell.autostart.enabled).toBe(true);
    await settle();
    expect(item('login')!.checked).toBe(true);
    // Asked without the arguments, Windows says no: reading back so was the bug.
    expect(fake.electron.app.getLoginItemSettings({ path: EXEC }).openAtLogin).toBe(false);
    click('login', false);
    expect(fake.loginItems.size).toBe(0);
    expect(shell.autostart.enabled).toBe(false);
  });

  it('macOS: one login item, no arguments; a login start is told by wasOpenedAtLogin', async () => {
    const { shell, fake } = await start({ platform: 'darwin' });
    click('login', true);
    expect([...fake.loginItems.keys()]).toEqual(['app']);
    expect(shell.autostart.enabled).toBe(true);
    expect(shell.autostart.startedAtLogin([])).toBe(false);
    fake.electron.app.wasOpenedAtLogin = true;
    expect(shell.autostart.startedAtLogin([])).toBe(true);
  });

  it('Linux AppImage: the entry starts the AppImage, not its temporary mount, and follows it when it moves', async () => {
    const userData = mkdtempSync(join(tmpdir(), 'gh-desk-'));
    const mount = '/tmp/.mount_GatehoXYZ/gatehop';
    const env = { APPIMAGE: '/home/ana/Apps/Gatehop 1.0.AppImage' };
    const { shell } = await start({ platform: 'linux', userData, execPath: mount, argv: [HIDDEN_ARG], env });
    click('login', true);
    const entry = readFileSync(shell.autostart.desktopFile, 'utf8');
    expect(entry).toMatch(/^Exec="\/home\/ana\/Apps\/Gatehop 1\.0\.AppImage" --hidden$/m);
    expect(entry).not.toContain('.mount_');
    expect(entry).toMatch(/^Type=Application$/m);
    await shells.pop()!.lifecycle.shutdown('moved');
    // The user moved the AppImage: the next start rewrites the entry to where it is now.
    const moved = await start({
      platform: 'linux',
      userData,
      execPath: '/tmp/.mount_GatehoABC/gatehop',
      argv: [HIDDEN_ARG],
      env: { APPIMAGE: '/opt/Gatehop.AppImage' },
    });
    expect(readFileSync(moved.shell.autostart.desktopFile, 'utf8')).toMatch(
      /^Exec=\/opt\/Gatehop\.AppImage --hidden$/m,
    );
    expect(moved.shell.autostart.enabled).toBe(true);
  });

  it('Linux without an AppImage: the executable itself; removing it removes the entry', () => {
    const home = mkdtempSync(join(tmpdir(), 'gh-xdg-'));
    const fake = createFakeElectron({ userData: home });
    const a = new Autostart(fake.electron.app, '/opt/Gatehop/gatehop', 'linux', { XDG_CONFIG_HOME: home });
    a.set(true);
    expect(readFileSync(join(home, 'autostart', 'gatehop.desktop'), 'utf8')).toMatch(
      /^Exec=\/opt\/Gatehop\/gatehop --hidden$/m,
    );
    expect(a.repair()).toBe(false); // already right
    a.set(false);
    expect(existsSync(join(home, 'autostart', 'gatehop.desktop'))).toBe(false);
  });
});

describe('the window', () => {
  it('a crashed renderer is reloaded once; a second crash shows an error page and offers Restart', async () => {
    const { fake } = await start({ platform: 'linux', answers: [0] });
    const win = appWindows()[0]!;
    win.webContents.emit('render-process-gone', fakeEvent(), { reason: 'crashed', exitCode: 139 });
    expect(win.webContents.reloads).toBe(1);
    expect(win.loaded).not.toContain(CRASHED_URL);
    win.webContents.emit('render-process-gone', fakeEvent(), { reason: 'oom', exitCode: 0 });
    expect(win.webContents.reloads).toBe(1);
    expect(win.loaded.at(-1)).toBe(CRASHED_URL);
    // The error page: our scheme, plain HTML, no script.
    const page = await fake.protocolHandlers.get('gatehop')!(new Request(CRASHED_URL));
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('The window stopped');
    expect(html).not.toMatch(/<script/i);
    await vi.waitFor(() =>
      expect(fake.dialogs.at(-1)).toMatchObject({ buttons: ['Restart Gatehop', 'Close the window'] }),
    );
    await vi.waitFor(() => expect(fake.electron.app.relaunches).toBe(1));
    await vi.waitFor(() => expect(fake.electron.app.exits).toEqual([0]));
  });

  it('a renderer that exits cleanly is not "crashed"', async () => {
    await start({ platform: 'linux' });
    const win = appWindows()[0]!;
    win.webContents.emit('render-process-gone', fakeEvent(), { reason: 'clean-exit', exitCode: 0 });
    expect(win.webContents.reloads).toBe(0);
  });

  it('opens where it was if that display is still connected, else centred on one that is', async () => {
    const userData = mkdtempSync(join(tmpdir(), 'gh-desk-'));
    writeFileSync(join(userData, 'window.json'), JSON.stringify({ x: 2100, y: 100, width: 900, height: 650 }));
    // Docked: a second screen to the right.
    await start({
      platform: 'win32',
      userData,
      displays: [
        { x: 0, y: 0, width: 1920, height: 1040 },
        { x: 1920, y: 0, width: 2560, height: 1400 },
      ],
    });
    expect(appWindows()[0]!.options).toMatchObject({ x: 2100, y: 100, width: 900, height: 650 });
    await shells.pop()!.lifecycle.shutdown('undock');
    FakeBrowserWindow.all = [];
    writeFileSync(join(userData, 'window.json'), JSON.stringify({ x: 2100, y: 100, width: 900, height: 650 }));
    // Off the dock: that screen is gone; the size is kept, the position is left to the OS (centred).
    await start({ platform: 'win32', userData });
    const opts = appWindows()[0]!.options;
    expect(opts).toMatchObject({ width: 900, height: 650 });
    expect(opts.x).toBeUndefined();
    expect(opts.y).toBeUndefined();
  });

  it('"More…" in the tray shows the Nodes view every time, also when the window already shows it', async () => {
    await start({ platform: 'linux', argv: [HIDDEN_ARG] });
    click('more');
    const win = FakeBrowserWindow.all[0]!;
    expect(win.loaded).toEqual([`${APP_URL}#view=nodes`]);
    click('more');
    click('more');
    expect(win.loaded).toHaveLength(3);
    expect(new Set(win.loaded).size).toBe(3); // each a change the renderer sees (hashchange)
    expect(win.loaded.every((u) => /#view=nodes(&|$)/.test(u))).toBe(true);
  });

  it('paints the background of the theme before the page (no dark flash on a light desktop)', async () => {
    await start({ platform: 'linux' });
    expect(appWindows()[0]!.options.backgroundColor).toBe('#f6f7f9');
  });
});

describe('the Windows tray icon', () => {
  it('follows the taskbar theme, not the apps theme, and changes when it does', async () => {
    const fake = fakeFor({ platform: 'win32' });
    fake.electron.nativeTheme.shouldUseDarkColors = false; // light apps …
    fake.electron.nativeTheme.shouldUseDarkColorsForSystemIntegratedUI = true; // … on a dark taskbar (Windows' default)
    const shell = (await runShell(fake.electron, shellOptions(fake, { platform: 'win32', argv: [HIDDEN_ARG] })))!;
    shells.push(shell);
    const tray = trayOf();
    expect((tray.image as { path: string }).path).toMatch(/-dark\.ico$/);
    fake.electron.nativeTheme.shouldUseDarkColorsForSystemIntegratedUI = false;
    fake.electron.nativeTheme.emit('updated');
    await settle();
    expect((tray.image as { path: string }).path).toMatch(/-light\.ico$/);
    expect(tray.emptyImages).toEqual([]);
  });
});

describe('start-up failures', () => {
  it('classifies: a taken port, a saved auth file that cannot be read, anything else', () => {
    const busy = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:1080'), {
      code: 'EADDRINUSE',
    });
    expect(classifyStartError(busy, {})).toBe('port-in-use');
    const auth = new GatehopError(ErrorCodes.AUTH_FILE_INVALID, 'cannot read auth file /x');
    expect(classifyStartError(auth, { authFile: '/x' })).toBe('settings');
    expect(classifyStartError(auth, { language: 'en' })).toBe('other'); // the auth file came from the config file, not from the settings
    expect(
      classifyStartError(new GatehopError(ErrorCodes.STORE_FAILED, 'disk I/O error'), {
        authFile: '/x',
        language: 'en',
      }),
    ).toBe('other');
    expect(classifyStartError(new GatehopError(ErrorCodes.CONFIG_INVALID, 'bad'), {})).toBe('other');
    expect(
      classifyStartError(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }), { language: 'en' }),
    ).toBe('other');
  });

  it('a taken port: "Use another port" starts on a free one', async () => {
    const taken = createServer();
    servers.push(taken);
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    const { shell, fake } = await start({
      platform: 'linux',
      argv: [HIDDEN_ARG],
      answers: [0],
      configInput: { listen: `127.0.0.1:${port}` },
    });
    expect(fake.dialogs[0]).toMatchObject({ buttons: ['Use another port', 'Quit'] });
    expect(shell.core.listening.proxy.port).not.toBe(port);
  });

  it('a saved auth file that is gone: "Reset settings" sets the file aside and starts with the defaults', async () => {
    const userData = mkdtempSync(join(tmpdir(), 'gh-desk-'));
    writeFileSync(
      join(userData, 'settings.json'),
      JSON.stringify({ version: 1, settings: { authFile: join(userData, 'gone.txt'), language: 'en' } }),
    );
    const { shell, fake } = await start({ platform: 'linux', userData, argv: [HIDDEN_ARG], answers: [0] });
    expect(fake.dialogs[0]).toMatchObject({
      buttons: ['Reset settings', 'Quit'],
      detail: expect.stringMatching(/saved settings[\s\S]*gone\.txt/),
    });
    expect(shell).not.toBeNull();
    expect(existsSync(join(userData, 'settings.json'))).toBe(false);
    expect(readdirSync(userData).filter((f) => f.startsWith('settings.json.reset-'))).toHaveLength(1);
  });

  it('any other failure offers the data folder (where the log is) and never touches the settings', async () => {
    const userData = mkdtempSync(join(tmpdir(), 'gh-desk-'));
    writeFileSync(join(userData, 'settings.json'), JSON.stringify({ version: 1, settings: { language: 'en' } }));
    const authFile = join(userData, 'users.txt'); // from the config, not the settings: not the settings' fault
    const { shell, fake } = await start({ platform: 'linux', userData, answers: [0], configInput: { authFile } });
    expect(shell).toBeNull();
    expect(fake.dialogs[0]).toMatchObject({ buttons: ['Open the data folder', 'Quit'] });
    expect(fake.openedPaths).toEqual([userData]);
    expect(fake.electron.app.exits).toEqual([1]);
    expect(readFileSync(join(userData, 'settings.json'), 'utf8')).toContain('"language":"en"');
  });
});

describe('in Chinese', () => {
  it('the tray, notifications, dialogs and the crash page follow the OS language, then the language chosen in Settings', async () => {
    const { shell, fake } = await start({ platform: 'win32', languages: ['zh-CN', 'en-US'] });
    const zh = (key: string): string => translate('zh-CN', `shell.${key}`);
    expect(item('quit')!.label).toBe(zh('menu.quit'));
    expect(item('open')!.label).toBe(zh('menu.open'));
    const win = appWindows()[0]!;
    win.userClose();
    expect(FakeNotification.shown.at(-1)).toMatchObject({ title: zh('notify.hintTitle'), body: zh('notify.hintBody') });
    const page = await (await fake.protocolHandlers.get('gatehop')!(new Request(CRASHED_URL))).text();
    expect(page).toContain('lang="zh-CN"');
    expect(page).toContain(zh('crashed.title'));
    // Chosen in the window's Settings: the tray follows with the next status.
    await shell.core.admin!.operations.putSettings({ language: 'en' });
    await vi.waitFor(() => expect(item('quit')!.label).toBe('Quit Gatehop'), { timeout: 5000 });
  });

  it("when the network is found to block OpenVPN, a notification names the protocol Gatehop goes over now (in the user's language)", async () => {
    const { feeds, spy } = tapEventFeeds();
    try {
      await start({ platform: 'linux', languages: ['zh-CN'], argv: [HIDDEN_ARG] });
      for (const fn of feeds)
        fn('switch', {
          type: 'protocol',
          preferred: 'sevpn',
          blocked: 'openvpn',
          reason: 'OpenVPN failed on 3 different nodes while SE-VPN worked',
        });
      expect(FakeNotification.shown.at(-1)).toMatchObject({
        title: translate('zh-CN', 'shell.notify.protocolTitle', { blocked: 'OpenVPN' }),
        body: translate('zh-CN', 'shell.notify.protocolBody', { protocol: 'SE-VPN' }),
      });
      expect(FakeNotification.shown.at(-1)!.body).toContain('SE-VPN');
      const before = FakeNotification.shown.length;
      for (const fn of feeds) fn('switch', { type: 'protocol', preferred: null, reason: 'new network' });
      expect(FakeNotification.shown.length).toBe(before); // back to the configured order: nothing to say
    } finally {
      spy.mockRestore();
    }
  });

  it("when a network profile goes on and off, a notification says which and what it changes (in the user's language, #64)", async () => {
    const { feeds, spy } = tapEventFeeds();
    try {
      await start({ platform: 'linux', languages: ['fa-IR'], argv: [HIDDEN_ARG] });
      const choices = { mode: 'global' as const, httpsOnly: true, protocols: ['sevpn', 'openvpn', 'sstp'] };
      for (const fn of feeds) fn('profile', { type: 'applied', name: 'کافه', network: 'wlan0 10.0.0.x', choices });
      const shown = FakeNotification.shown.at(-1)!;
      expect(shown).toMatchObject({
        title: translate('fa', 'shell.notify.profileAppliedTitle', { name: 'کافه' }),
        body: translate('fa', 'shell.notify.profileAppliedBody', {
          network: 'wlan0 10.0.0.x',
          what: describeProfileChoices('fa', choices),
        }),
      });
      // What it changes, in Persian: the mode's own name, HTTPS only, SE-VPN first.
      expect(shown.body).toContain(translate('fa', 'routing.mode.global'));
      expect(shown.body).toContain('SE-VPN');
      for (const fn of feeds) fn('profile', { type: 'restored', name: 'کافه', network: 'wlan0 10.0.0.x', kept: [] });
      expect(FakeNotification.shown.at(-1)).toMatchObject({
        title: translate('fa', 'shell.notify.profileRestoredTitle', { name: 'کافه' }),
        body: translate('fa', 'shell.notify.profileRestoredBody'),
      });
    } finally {
      spy.mockRestore();
    }
  });

  it('the start-up dialog is in Chinese too', async () => {
    const userData = mkdtempSync(join(tmpdir(), 'gh-desk-'));
    mkdirSync(userData, { recursive: true });
    const { fake } = await start({
      platform: 'linux',
      userData,
      languages: ['zh-Hans-CN'],
      configInput: { authFile: join(userData, 'none.txt') },
    });
    expect(fake.dialogs[0]).toMatchObject({
      title: translate('zh-CN', 'shell.dialog.startFailed'),
      buttons: [translate('zh-CN', 'shell.dialog.openDataFolder'), translate('zh-CN', 'shell.dialog.quit')],
    });
  });
});
