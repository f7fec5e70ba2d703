import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { DesktopAccess, EventMap, NodeDto, Settings, Status } from '../core/api/index.js';
import { describeProfileChoices, resolveLanguage, translate, type Language } from '../core/api/catalog/index.js';
import { loadSavedSettings, type ConfigInput, type RunningApp } from '../core/app/index.js';
import { detach, errorToJson, ignoreRejection, LogTap } from '../core/common/index.js';
import { appProtocolHandler, APP_SCHEME_PRIVILEGES, crashedHtml } from './app-protocol.js';
import { Autostart } from './autostart.js';
import type { ElectronApi, IpcMainInvokeEvent, WindowApi } from './electron-api.js';
import { forwardEvents, registerIpc } from './ipc.js';
import { Lifecycle, type FatalEvents } from './lifecycle.js';
import { NotificationController, type NotificationKind } from './notification-controller.js';
import { startCore } from './start-core.js';
import { TrayController } from './tray-controller.js';
import { APP_ORIGIN, APP_SCHEME, WEB_PREFERENCES, WindowController } from './window-controller.js';

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
  /** Where fatal errors are reported (default: `process`). */
  fatalEvents?: FatalEvents;
  shutdownDeadlineMs?: number;
  /** Config layers beyond the defaults (tests pin ports; the desktop app uses none). */
  configInput?: ConfigInput;
  /** The environment ($APPIMAGE, $XDG_CONFIG_HOME); default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface Shell {
  core: RunningApp;
  tray: TrayController;
  windows: WindowController;
  notifications: NotificationController;
  lifecycle: Lifecycle;
  autostart: Autostart;
  /** Windows: the hidden window that hears logoff when no Gatehop window is open. */
  sessionWindow: WindowApi | null;
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
  // A second launch (or reopening Gatehop.app on macOS) before the window controller exists is
  // remembered, not lost: the window opens once the core is up.
  let openWindow: (() => void) | null = null;
  let openWanted = false;
  const wantWindow = (): void => (openWindow ? openWindow() : void (openWanted = true));
  e.app.on('second-instance', wantWindow);
  if (platform === 'darwin') e.app.on('activate', wantWindow);
  e.protocol.registerSchemesAsPrivileged(APP_SCHEME_PRIVILEGES);
  await e.app.whenReady();
  if (platform === 'win32') e.app.setAppUserModelId('net.gatehop.app');
  // No File/Edit/View bar (with Reload and DevTools) on Windows and Linux; macOS keeps its app menu for Cmd-Q.
  if (platform !== 'darwin') e.Menu.setApplicationMenu(null);
  e.app.dock?.hide(); // a tray app, not a Dock app
  // Nothing the page asks for (camera, notifications, geolocation …) is granted.
  e.session.defaultSession.setPermissionRequestHandler((_wc, _perm, cb) => cb(false));
  e.session.defaultSession.setPermissionCheckHandler(() => false);

  const dataDir = e.app.getPath('userData');
  // The language of the tray, notifications and dialogs: the saved choice, else the system's.
  let savedLanguage: Settings['language'] | undefined = loadSavedSettings(dataDir).language;
  const language = (): Language => resolveLanguage(savedLanguage, e.app.getPreferredSystemLanguages());
  const t = (key: string, vars?: Record<string, string | number>): string =>
    translate(language(), `shell.${key}`, vars);
  e.protocol.handle(
    APP_SCHEME,
    appProtocolHandler(o.uiDir, () => crashedHtml(language(), t('crashed.title'), t('crashed.body'))),
  );

  const logTap = new LogTap();
  const autostart = new Autostart(e.app, o.exec, platform, o.env);
  // What only the desktop app can do, offered to the window's Settings through the core (the
  // tray and lifecycle exist later; these run only once the window asks).
  let trayRef: TrayController | null = null;
  let lifecycleRef: Lifecycle | null = null;
  const desktop: DesktopAccess = {
    startAtLogin: {
      get: () => autostart.enabled,
      set: (on: boolean) => {
        autostart.set(on);
        trayRef?.update({ startAtLogin: autostart.enabled });
      },
    },
    restart: () => {
      e.app.relaunch();
      // shutdown() never rejects: a failed stop becomes exit code 1.
      if (lifecycleRef) ignoreRejection(lifecycleRef.shutdown('restart from the window'));
    },
  };
  const core = await startCore(e, dataDir, logTap, o.configInput ?? {}, language, desktop);
  if (!core) {
    e.app.exit(1);
    return null;
  }
  const admin = core.admin!;
  const ops = admin.operations;
  const settings = (): Settings | null => {
    try {
      return (ops.getSettings({}) as { settings: Settings }).settings;
    } catch {
      return null;
    }
  };
  // Which kinds are on lives in the core's settings (the window's Settings and the tray both change it).
  const notifyPrefs = (): Settings['notifications'] =>
    settings()?.notifications ?? { switched: true, lost: true, sysproxyChanged: true };
  const KIND_KEY = { switched: 'switched', lost: 'lost', 'sysproxy-changed': 'sysproxyChanged' } as const;
  // A network profile going on or off is a change of how traffic goes, as a switch of node is: the same choice.
  const prefOf = (kind: Exclude<NotificationKind, 'tray-hint'>) => KIND_KEY[kind === 'profile' ? 'switched' : kind];
  const notifications = new NotificationController(e, (kind) => kind === 'tray-hint' || notifyPrefs()[prefOf(kind)]);
  const windows = new WindowController(e, {
    preload: o.preload,
    boundsFile: join(dataDir, 'window.json'),
    onFirstHide: () => notifications.notify('tray-hint', t('notify.hintTitle'), t('notify.hintBody')),
    onCreated: (win) => lifecycleRef?.watchWindow(win),
    background: () => (e.nativeTheme.shouldUseDarkColors ? '#14171c' : '#f6f7f9'),
    onCrashedTwice: (reason) => detach(core.logger, 'offer-restart', offerRestart(reason)),
    log: core.logger,
  });
  // An entry written by an AppImage that has since moved (or an older version) points here again.
  autostart.repair();
  const tray = new TrayController(
    e,
    o.assetsDir,
    {
      pickNode: (nodeId) =>
        void Promise.resolve()
          .then(() => pickNode(nodeId))
          .catch((err) => notifyError(err)),
      setAuto: (auto) =>
        void Promise.resolve()
          .then(() => ops.setMode({ auto }))
          .then(refreshTray, (err) => notifyError(err)),
      setRouteMode: (mode) =>
        void Promise.resolve()
          .then(() => ops.setRouteMode({ mode }))
          .then(refreshTray, (err) => notifyError(err)),
      setSystemProxy: (on) =>
        void Promise.resolve()
          .then(() => ops.setSystemProxy({ enabled: on }))
          .then(
            (sp) => tray.update({ sysproxy: sp }),
            (err) => notifyError(err),
          ),
      setKillSwitch: (on) => {
        try {
          const saved: unknown = ops.putSettings({ killSwitch: on });
          const show = (): void => tray.update({ killSwitch: on });
          if (saved instanceof Promise) saved.then(show, (err: unknown) => notifyError(err));
          else show();
        } catch (err) {
          notifyError(err);
        }
      },
      setShare: (on) =>
        void Promise.resolve()
          .then(() => ops.setShare({ enabled: on }))
          .then(refreshTray, (err) => notifyError(err)),
      openCapturedTerminal: () =>
        void Promise.resolve()
          .then(() => ops.runCaptured({ command: '', terminal: true }))
          .catch((err) => notifyError(err)),
      copy: (text) => {
        try {
          // Electron's main-process clipboard writes at once; a promise (some stand-ins) is still owned.
          const written: unknown = e.clipboard.writeText(text);
          if (written instanceof Promise) written.catch((err: unknown) => notifyError(err));
        } catch (err) {
          notifyError(err);
        }
      },
      refreshNodes: () =>
        void Promise.resolve()
          .then(() => ops.refreshNodes({}))
          .catch((err) => notifyError(err)),
      openWindow: (view) => void windows.open(view),
      setStartAtLogin: (on) => desktop.startAtLogin.set(on),
      setNotification: (kind, on) => {
        try {
          const next = { ...notifyPrefs(), [KIND_KEY[kind]]: on };
          const saved: unknown = ops.putSettings({ notifications: next });
          const show = (): void => tray.update({ notifications: trayNotifications(next) });
          if (saved instanceof Promise) saved.then(show, (err: unknown) => notifyError(err));
          else show();
        } catch (err) {
          notifyError(err);
        }
      },
      quit: () => {
        if (lifecycleRef) ignoreRejection(lifecycleRef.shutdown('tray-quit'));
      },
    },
    {
      status: null,
      nodes: [],
      sysproxy: null,
      killSwitch: settings()?.killSwitch ?? false,
      startAtLogin: autostart.enabled,
      notifications: trayNotifications(notifyPrefs()),
      proxyAddress: core.listening.proxy.host + ':' + core.listening.proxy.port,
      language: language(),
    },
    platform,
  );
  // Windows tells of logoff only to windows: with Gatehop started at login there may be none, and
  // the system proxy would keep pointing at a dead port. A hidden window that never shows hears it.
  const sessionWindow =
    platform === 'win32'
      ? new e.BrowserWindow({
          show: false,
          width: 1,
          height: 1,
          skipTaskbar: true,
          focusable: false,
          title: 'Gatehop',
          webPreferences: { ...WEB_PREFERENCES },
        })
      : null;
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  trayRef = tray;
  const lifecycle = new Lifecycle(
    e.app,
    async () => {
      tray.destroy();
      windows.destroy();
      sessionWindow?.destroy();
      loopDelay.disable();
      await core.stop(); // restores the system proxy first, then closes sessions, tunnels, store
    },
    {
      deadlineMs: o.shutdownDeadlineMs,
      onSignal: o.onSignal,
      powerMonitor: e.powerMonitor,
      fatalEvents: o.fatalEvents,
      crashDir: join(dataDir, 'crashes'),
      // Restored, or left pointed at Gatehop when the kill switch is on (release decides).
      restoreFirst: () => core.systemProxy.release(),
    },
  );
  lifecycleRef = lifecycle;
  lifecycle.install();
  if (sessionWindow) lifecycle.watchWindow(sessionWindow);

  function notifyError(err: unknown): void {
    notifications.notify('lost', t('notify.failedTitle'), errorToJson(err).message);
  }

  /**
   * A pick from the tray. A node found to tamper is picked only after the user has seen what was
   * found (the core refuses it otherwise), and then kept: the user chose it knowingly.
   */
  async function pickNode(nodeId: string): Promise<void> {
    const n = tray.state.nodes.find((x) => x.id === nodeId);
    const v = n?.honesty?.verdict;
    const flagged =
      (v === 'dns-tampering' || v === 'http-tampering' || v === 'tls-interception') && !n?.honesty?.accepted;
    if (flagged) {
      const { response } = await e.dialog.showMessageBox({
        type: 'warning',
        title: t('dialog.flaggedTitle', { node: n?.host ?? nodeId }),
        message: t('dialog.flaggedTitle', { node: n?.host ?? nodeId }),
        detail: t('dialog.flaggedBody', { why: translate(language(), `honesty.why.${v}`) }),
        buttons: [t('dialog.useAnyway'), t('dialog.cancel')],
        defaultId: 1,
        cancelId: 1,
      });
      if (response !== 0) return;
    }
    await ops.switchNode({ nodeId, ...(flagged ? { confirm: true } : {}) });
  }

  async function offerRestart(reason: string): Promise<void> {
    const { response } = await e.dialog.showMessageBox({
      type: 'error',
      title: t('dialog.crashTitle'),
      message: t('dialog.crashTitle'),
      detail: t('dialog.crashBody', { reason }),
      buttons: [t('dialog.restart'), t('dialog.close')],
      defaultId: 0,
      cancelId: 1,
    });
    if (response === 0) {
      e.app.relaunch();
      await lifecycle.shutdown('restart after renderer crashes');
    } else windows.window?.hide();
  }

  // The window's calls: the same operations the admin API runs, only from our own page.
  const isOwnFrame = (ev: IpcMainInvokeEvent): boolean => {
    const w = windows.window;
    return !!w && ev.sender === (w.webContents as unknown) && (ev.senderFrame?.url ?? '').startsWith(`${APP_ORIGIN}/`);
  };
  registerIpc(e.ipcMain, ops, isOwnFrame);
  forwardEvents(
    (fn) => admin.onEvent(fn),
    () => windows.window?.webContents ?? null,
  );

  async function refreshTray(): Promise<void> {
    const [status, nodes, sysproxy] = await Promise.all([
      ops.getStatus({}),
      ops.getNodes({}),
      Promise.resolve(ops.getSystemProxy({})).catch(() => null),
    ]);
    tray.update({
      status,
      nodes: (nodes as { nodes: NodeDto[] }).nodes,
      sysproxy,
    });
  }
  let lastActive: string | null = null;
  admin.onEvent((event, data) => {
    if (event === 'status') {
      const st = data as Status;
      const active = st.active?.nodeId ?? null;
      if (lastActive && !active && st.switches.inProgress === null)
        notifications.notify('lost', t('notify.lostTitle'), t('notify.lostBody'));
      lastActive = active;
      // The window may have changed the notification kinds or the language: the tray follows.
      savedLanguage = settings()?.language ?? savedLanguage;
      tray.update({
        status: st,
        notifications: trayNotifications(notifyPrefs()),
        killSwitch: settings()?.killSwitch ?? false,
        language: language(),
      });
    } else if (event === 'nodes') tray.update({ nodes: (data as { nodes: NodeDto[] }).nodes });
    else if (event === 'switch') {
      const ev = data as {
        type: string;
        outcome?: string;
        to?: string;
        reason?: string;
        kind?: string;
        preferred?: string | null;
        blocked?: string | null;
      };
      if (ev.type === 'done' && ev.outcome === 'switched')
        notifications.notify(
          'switched',
          t('notify.switchedTitle', { node: ev.to ?? '' }),
          t(ev.kind === 'user' ? 'notify.switchedUser' : 'notify.switchedAuto', { reason: ev.reason ?? '' }),
        );
      // The network blocks a protocol: from now on Gatehop goes over another one here (the user sees
      // why their node lines say SE-VPN or SSTP). Back to the configured order says nothing.
      if (ev.type === 'protocol' && ev.preferred)
        notifications.notify(
          'lost',
          t('notify.protocolTitle', { blocked: protocolName(ev.blocked ?? 'openvpn') }),
          t('notify.protocolBody', { protocol: protocolName(ev.preferred) }),
        );
    } else if (event === 'honesty') {
      // A node found to tamper is said once, in the user's language (the core already left it).
      const ev = data as { nodeId: string; honesty: { verdict: string; checking: boolean } };
      const v = ev.honesty.verdict;
      if (v === 'dns-tampering' || v === 'http-tampering' || v === 'tls-interception')
        notifications.notify(
          'lost',
          t('notify.flaggedTitle', { node: tray.state.nodes.find((x) => x.id === ev.nodeId)?.host ?? ev.nodeId }),
          t('notify.flaggedBody', { verdict: translate(language(), `honesty.verdict.${v}`) }),
        );
    } else if (event === 'profile') {
      // A network's profile went on or off (#64): said with what it changes, in the user's language.
      const ev = data as EventMap['profile'];
      if (ev.type === 'applied')
        notifications.notify(
          'profile',
          t('notify.profileAppliedTitle', { name: ev.name }),
          t('notify.profileAppliedBody', { network: ev.network, what: describeProfileChoices(language(), ev.choices) }),
        );
      else if (ev.type === 'restored')
        notifications.notify(
          'profile',
          t('notify.profileRestoredTitle', { name: ev.name }),
          t('notify.profileRestoredBody'),
        );
      else notifications.notify('profile', t('notify.profileFailedTitle', { name: ev.name }), ev.message);
    } else if (event === 'sysproxy') {
      const ev = data as { type: string; message: string };
      if (ev.type === 'overridden') notifications.notify('sysproxy-changed', t('notify.sysproxyTitle'), ev.message);
      void Promise.resolve(ops.getSystemProxy({})).then(
        (sp) => tray.update({ sysproxy: sp }),
        () => undefined,
      );
    }
  });
  // Resume from sleep: the network may be new; the core retries at once where it was waiting.
  e.powerMonitor.on('resume', () => core.network?.nudge());

  tray.create();
  await refreshTray().catch(() => undefined);
  openWindow = () => void windows.open();
  if (!autostart.startedAtLogin(o.argv) || openWanted) windows.open();
  return { core, tray, windows, notifications, lifecycle, autostart, sessionWindow, loopDelay };
}

/** A protocol as the window names it. */
function protocolName(p: string): string {
  return p === 'sstp' ? 'SSTP' : p === 'sevpn' ? 'SE-VPN' : p === 'openvpn' ? 'OpenVPN' : p;
}

function trayNotifications(n: Settings['notifications']): {
  switched: boolean;
  lost: boolean;
  'sysproxy-changed': boolean;
} {
  return { switched: n.switched, lost: n.lost, 'sysproxy-changed': n.sysproxyChanged };
}
