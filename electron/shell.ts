import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { NodeDto, Settings, Status, SysproxyState } from '../core/api/index.js';
import { buildConfig, resolveConfig, startApp, type ConfigInput, type RunningApp } from '../core/app/index.js';
import { createLogger, errorToJson, LogTap } from '../core/common/index.js';
import { appProtocolHandler, APP_SCHEME_PRIVILEGES } from './app-protocol.js';
import { Autostart } from './autostart.js';
import type { ElectronApi, IpcMainInvokeEvent } from './electron-api.js';
import { forwardEvents, registerIpc } from './ipc.js';
import { Lifecycle } from './lifecycle.js';
import { NotificationController } from './notification-controller.js';
import { TrayController } from './tray-controller.js';
import { APP_ORIGIN, APP_SCHEME, WindowController } from './window-controller.js';

export interface ShellOptions {
  /** dist/renderer, assets/ and the bundled preload. */
  uiDir: string;
  assetsDir: string;
  preload: string;
  /** What "Start at login" runs. */
  exec: string;
  argv: readonly string[];
  platform?: NodeJS.Platform;
  onSignal?: (sig: NodeJS.Signals, fn: () => void) => void;
  shutdownDeadlineMs?: number;
  /** Config layers beyond the defaults (tests pin ports; the desktop app uses none). */
  configInput?: ConfigInput;
}

export interface Shell {
  core: RunningApp;
  tray: TrayController;
  windows: WindowController;
  notifications: NotificationController;
  lifecycle: Lifecycle;
  /** Main event-loop delay, as the core's metrics also report it. */
  loopDelay: ReturnType<typeof monitorEventLoopDelay>;
}

/**
 * The desktop app: the core in this process (the same startApp the CLI uses, data in userData),
 * a tray, one window over typed IPC, notifications, start at login, and one clean way out.
 * Returns null when another instance already runs (it is focused instead) or the core could not
 * start and the user chose to quit.
 */
export async function runShell(e: ElectronApi, o: ShellOptions): Promise<Shell | null> {
  const platform = o.platform ?? process.platform;
  if (!e.app.requestSingleInstanceLock()) {
    e.app.quit();
    return null;
  }
  e.protocol.registerSchemesAsPrivileged(APP_SCHEME_PRIVILEGES);
  await e.app.whenReady();
  if (platform === 'win32') e.app.setAppUserModelId('net.gatehop.app');
  e.app.dock?.hide(); // a tray app, not a Dock app
  // Nothing the page asks for (camera, notifications, geolocation …) is granted.
  e.session.defaultSession.setPermissionRequestHandler((_wc, _perm, cb) => cb(false));
  e.session.defaultSession.setPermissionCheckHandler(() => false);
  e.protocol.handle(APP_SCHEME, appProtocolHandler(o.uiDir));

  const dataDir = e.app.getPath('userData');
  const logTap = new LogTap();
  const core = await startCore(e, dataDir, logTap, o.configInput ?? {});
  if (!core) {
    e.app.exit(1);
    return null;
  }
  const admin = core.admin!;
  const ops = admin.operations;
  // Which kinds are on lives in the core's settings (the window's Settings and the tray both change it).
  const notifyPrefs = (): Settings['notifications'] => {
    try {
      return (ops.getSettings({}) as { settings: Settings }).settings.notifications;
    } catch {
      return { switched: true, lost: true, sysproxyChanged: true };
    }
  };
  const KIND_KEY = { switched: 'switched', lost: 'lost', 'sysproxy-changed': 'sysproxyChanged' } as const;
  const notifications = new NotificationController(e, (kind) => kind === 'tray-hint' || notifyPrefs()[KIND_KEY[kind]]);
  const windows = new WindowController(e, {
    preload: o.preload,
    boundsFile: join(dataDir, 'window.json'),
    onFirstHide: () => notifications.notify('tray-hint', 'Gatehop keeps running', 'Gatehop is still on in the tray; choose Quit there to stop it.'),
  });
  const autostart = new Autostart(e.app, o.exec, platform);
  let lifecycle: Lifecycle;
  const tray = new TrayController(
    e,
    o.assetsDir,
    {
      pickNode: (nodeId) => void Promise.resolve().then(() => ops.switchNode({ nodeId })).catch((err) => notifyError(notifications, err)),
      setAuto: (auto) => void Promise.resolve().then(() => ops.setMode({ auto })).then(refreshTray, (err) => notifyError(notifications, err)),
      setSystemProxy: (on) => void Promise.resolve().then(() => ops.setSystemProxy({ enabled: on })).then((sp) => tray.update({ sysproxy: sp }), (err) => notifyError(notifications, err)),
      copy: (text) => e.clipboard.writeText(text),
      refreshNodes: () => void Promise.resolve().then(() => ops.refreshNodes({})).catch((err) => notifyError(notifications, err)),
      openWindow: (view) => lifecycle.watchWindow(windows.open(view)),
      setStartAtLogin: (on) => {
        autostart.set(on);
        tray.update({ startAtLogin: autostart.enabled });
      },
      setNotification: (kind, on) => {
        try {
          const next = { ...notifyPrefs(), [KIND_KEY[kind]]: on };
          ops.putSettings({ notifications: next });
          tray.update({ notifications: trayNotifications(next) });
        } catch (err) {
          notifyError(notifications, err);
        }
      },
      quit: () => void lifecycle.shutdown('tray-quit'),
    },
    { status: null, nodes: [], sysproxy: null, startAtLogin: autostart.enabled, notifications: trayNotifications(notifyPrefs()), proxyAddress: core.listening.proxy.host + ':' + core.listening.proxy.port },
    platform,
  );
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  lifecycle = new Lifecycle(
    e.app,
    async () => {
      tray.destroy();
      windows.destroy();
      loopDelay.disable();
      await core.stop(); // restores the system proxy first, then closes sessions, tunnels, store
    },
    { deadlineMs: o.shutdownDeadlineMs, onSignal: o.onSignal, powerMonitor: e.powerMonitor },
  );
  lifecycle.install();

  // The window's calls: the same operations the admin API runs, only from our own page.
  const isOwnFrame = (ev: IpcMainInvokeEvent): boolean => {
    const w = windows.window;
    return !!w && ev.sender === (w.webContents as unknown) && (ev.senderFrame?.url ?? '').startsWith(`${APP_ORIGIN}/`);
  };
  registerIpc(e.ipcMain, ops, isOwnFrame);
  forwardEvents((fn) => admin.onEvent(fn), () => windows.window?.webContents ?? null);

  async function refreshTray(): Promise<void> {
    const [status, nodes, sysproxy] = await Promise.all([ops.getStatus({}), ops.getNodes({}), Promise.resolve(ops.getSystemProxy({})).catch(() => null)]);
    tray.update({ status: status as Status, nodes: (nodes as { nodes: NodeDto[] }).nodes, sysproxy: sysproxy as SysproxyState | null });
  }
  let lastActive: string | null = null;
  admin.onEvent((event, data) => {
    if (event === 'status') {
      const st = data as Status;
      const active = st.active?.nodeId ?? null;
      if (lastActive && !active && st.switches.inProgress === null) notifications.notify('lost', 'Gatehop lost its node', 'The active node stopped answering and no other node works yet; Gatehop keeps trying.');
      lastActive = active;
      // The window may have changed the notification kinds: the tray's checkboxes follow.
      tray.update({ status: st, notifications: trayNotifications(notifyPrefs()) });
    } else if (event === 'nodes') tray.update({ nodes: (data as { nodes: NodeDto[] }).nodes });
    else if (event === 'switch') {
      const ev = data as { type: string; outcome?: string; to?: string; reason?: string; kind?: string };
      if (ev.type === 'done' && ev.outcome === 'switched') notifications.notify('switched', `Switched to ${ev.to}`, `${ev.kind === 'user' ? 'You asked' : 'Automatic'}: ${ev.reason}`);
    } else if (event === 'sysproxy') {
      const ev = data as { type: string; message: string };
      if (ev.type === 'overridden') notifications.notify('sysproxy-changed', 'System proxy changed by another program', ev.message);
      void Promise.resolve(ops.getSystemProxy({})).then((sp) => tray.update({ sysproxy: sp }), () => undefined);
    }
  });
  // Resume from sleep: the network may be new; the core retries at once where it was waiting.
  e.powerMonitor.on('resume', () => core.network?.nudge());

  tray.create();
  await refreshTray().catch(() => undefined);
  if (!o.argv.includes('--hidden')) lifecycle.watchWindow(windows.open());
  e.app.on('second-instance', () => lifecycle.watchWindow(windows.open()));
  return { core, tray, windows, notifications, lifecycle, loopDelay };
}

function trayNotifications(n: Settings['notifications']): { switched: boolean; lost: boolean; 'sysproxy-changed': boolean } {
  return { switched: n.switched, lost: n.lost, 'sysproxy-changed': n.sysproxyChanged };
}

function notifyError(n: NotificationController, err: unknown): void {
  n.notify('lost', 'Gatehop could not do that', errorToJson(err).message);
}

/**
 * startApp with the desktop defaults (VPN Gate, the admin API on loopback for the dashboard, the
 * data directory in userData). A core that cannot start shows what failed and offers the fix:
 * another port, or a reset of the saved settings.
 */
async function startCore(e: ElectronApi, dataDir: string, logTap: LogTap, extra: ConfigInput): Promise<RunningApp | null> {
  const fromFile: ConfigInput = {};
  let fromFlags: ConfigInput = { dataDir, egress: 'vpngate', ...extra };
  for (;;) {
    try {
      const config = resolveConfig(fromFile, fromFlags);
      const logger = createLogger({ level: config.logLevel, file: config.logFile, tap: logTap, pretty: false });
      // Crash recovery of the system proxy runs first thing inside startApp, before the tray exists.
      return await startApp(config.admin ? config : buildConfig(fromFile, { ...fromFlags, admin: '127.0.0.1:0' }), logger, { logTap, layers: { fromFile, fromFlags } });
    } catch (err) {
      const message = errorToJson(err).message;
      const portInUse = /EADDRINUSE|cannot listen/.test(message);
      const { response } = await e.dialog.showMessageBox({
        type: 'error',
        title: 'Gatehop could not start',
        message: 'Gatehop could not start',
        detail: message,
        buttons: portInUse ? ['Use another port', 'Quit'] : ['Reset settings', 'Quit'],
        defaultId: 0,
        cancelId: 1,
      });
      if (response !== 0) return null;
      if (portInUse) fromFlags = { ...fromFlags, listen: '127.0.0.1:0', admin: '127.0.0.1:0' };
      else {
        const { rmSync } = await import('node:fs');
        rmSync(join(dataDir, 'settings.json'), { force: true });
      }
    }
  }
}
