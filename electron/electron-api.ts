/**
 * Exactly the parts of Electron the shell uses, derived from Electron's own types (electron.d.ts),
 * so the real module and the tests' fake (test/electron/fake-electron.ts, which `satisfies` these)
 * cannot drift apart. Controllers take this object instead of importing 'electron'.
 */
import type * as E from 'electron';

export type AppApi = Pick<
  E.App,
  | 'requestSingleInstanceLock'
  | 'on'
  | 'once'
  | 'quit'
  | 'exit'
  | 'relaunch'
  | 'getPath'
  | 'whenReady'
  | 'isReady'
  | 'setLoginItemSettings'
  | 'getLoginItemSettings'
  | 'isPackaged'
  | 'getAppPath'
  | 'setAppUserModelId'
  | 'getPreferredSystemLanguages'
> & { dock?: Pick<E.Dock, 'hide' | 'show'> };

export type WebContentsApi = Pick<
  E.WebContents,
  'send' | 'isDestroyed' | 'on' | 'setWindowOpenHandler' | 'getURL' | 'session' | 'reload'
>;
export type WindowApi = Pick<
  E.BrowserWindow,
  | 'loadURL'
  | 'show'
  | 'hide'
  | 'focus'
  | 'on'
  | 'once'
  | 'getBounds'
  | 'isDestroyed'
  | 'isMinimized'
  | 'restore'
  | 'destroy'
  | 'isVisible'
> & {
  webContents: WebContentsApi;
};
export type WindowCtor = new (opts: E.BrowserWindowConstructorOptions) => WindowApi;

export type TrayApi = Pick<E.Tray, 'setImage' | 'setToolTip' | 'setContextMenu' | 'on' | 'destroy' | 'isDestroyed'>;
export type TrayCtor = new (image: E.NativeImage | string) => TrayApi;

export type MenuApi = {
  buildFromTemplate(template: E.MenuItemConstructorOptions[]): E.Menu;
  setApplicationMenu(menu: E.Menu | null): void;
};
export type IpcMainApi = Pick<E.IpcMain, 'handle' | 'removeHandler'>;
export type NativeImageApi = Pick<typeof E.nativeImage, 'createFromPath'>;
export type NotificationApi = {
  isSupported(): boolean;
  new (opts: E.NotificationConstructorOptions): Pick<E.Notification, 'show' | 'on'>;
};
export type PowerMonitorApi = Pick<E.PowerMonitor, 'on'>;
export type ShellApi = Pick<E.Shell, 'openExternal' | 'openPath'>;
export type ClipboardApi = Pick<E.Clipboard, 'writeText'>;
export type NativeThemeApi = Pick<
  E.NativeTheme,
  'shouldUseDarkColors' | 'shouldUseDarkColorsForSystemIntegratedUI' | 'on'
>;
export type ScreenApi = Pick<E.Screen, 'getAllDisplays'>;
export type ProtocolApi = Pick<E.Protocol, 'handle' | 'registerSchemesAsPrivileged'>;
export type NetApi = Pick<E.Net, 'fetch'>;
export type DialogApi = Pick<typeof E.dialog, 'showMessageBox'>;
export type SessionApi = {
  defaultSession: Pick<E.Session, 'setPermissionRequestHandler' | 'setPermissionCheckHandler'>;
};

export interface ElectronApi {
  app: AppApi;
  BrowserWindow: WindowCtor;
  Tray: TrayCtor;
  Menu: MenuApi;
  ipcMain: IpcMainApi;
  nativeImage: NativeImageApi;
  Notification: NotificationApi;
  powerMonitor: PowerMonitorApi;
  shell: ShellApi;
  clipboard: ClipboardApi;
  nativeTheme: NativeThemeApi;
  protocol: ProtocolApi;
  net: NetApi;
  session: SessionApi;
  dialog: DialogApi;
  screen: ScreenApi;
}

export type MenuItemOptions = E.MenuItemConstructorOptions;
export type IpcMainInvokeEvent = E.IpcMainInvokeEvent;
