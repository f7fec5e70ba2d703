/**
 * A faithful fake of the parts of Electron the shell uses. It `satisfies ElectronApi`, which is
 * derived from electron.d.ts: a member the shell uses that the fake lacks, or one whose signature
 * differs from Electron's, fails the type check. State is inspectable (windows, trays, menus,
 * notifications, handlers) and events can be fired as Electron would fire them.
 */
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import type * as E from 'electron';
import type { ElectronApi } from '../../electron/electron-api.js';

/**
 * Electron refuses a Tray, a BrowserWindow or the screen module before the app is ready ("Cannot
 * create BrowserWindow before app is ready"): so does the fake, for the fake whose app became ready.
 */
let ready = false;
function assertReady(what: string): void {
  if (!ready) throw new Error(`Cannot create ${what} before app is ready`);
}

/** What crosses an Electron IPC boundary is structured-cloned: a function or class instance fails there, and here. */
export function ipcClone<T>(value: T): T {
  return structuredClone(value);
}

/** A NativeImage as the fake makes it: empty when the file is not there, as Electron's is. */
export interface FakeImage {
  path: string;
  isEmpty(): boolean;
}

type Listener = (...args: never[]) => unknown;

/**
 * Electron's on() returns the full class (BrowserWindow, App …), which no fake can be; ours
 * returns `never`, which is assignable to any return type, and the shell never chains on().
 * The parameters are still checked against every one of Electron's overloads.
 */
class Emitter {
  readonly #e = new EventEmitter();
  on(event: string, fn: Listener): never {
    this.#e.on(event, fn as (...a: unknown[]) => void);
    return undefined as never;
  }
  once(event: string, fn: Listener): never {
    this.#e.once(event, fn as (...a: unknown[]) => void);
    return undefined as never;
  }
  emit(event: string, ...args: unknown[]): boolean {
    return this.#e.emit(event, ...args);
  }
  listenerCount(event: string): number {
    return this.#e.listenerCount(event);
  }
}

/** An Electron-like event with preventDefault. */
export function fakeEvent(): { defaultPrevented: boolean; preventDefault(): void } {
  return {
    defaultPrevented: false,
    preventDefault() {
      this.defaultPrevented = true;
    },
  };
}

export class FakeWebContents extends Emitter {
  destroyed = false;
  readonly sent: Array<{ channel: string; args: unknown[] }> = [];
  windowOpenHandler: ((d: E.HandlerDetails) => E.WindowOpenHandlerResponse) | null = null;
  url = '';
  reloads = 0;
  readonly session = {} as E.Session;
  send(channel: string, ...args: unknown[]): void {
    if (this.destroyed) throw new Error('Object has been destroyed');
    this.sent.push({ channel, args: ipcClone(args) });
  }
  reload(): void {
    this.reloads++;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  setWindowOpenHandler(h: (d: E.HandlerDetails) => E.WindowOpenHandlerResponse): void {
    this.windowOpenHandler = h;
  }
  getURL(): string {
    return this.url;
  }
}

export class FakeBrowserWindow extends Emitter {
  static all: FakeBrowserWindow[] = [];
  readonly webContents = new FakeWebContents();
  visible = false;
  destroyed = false;
  minimized = false;
  focused = 0;
  loaded: string[] = [];
  constructor(readonly options: E.BrowserWindowConstructorOptions) {
    super();
    assertReady('BrowserWindow');
    FakeBrowserWindow.all.push(this);
  }
  async loadURL(url: string): Promise<void> {
    this.loaded.push(url);
    this.webContents.url = url;
    queueMicrotask(() => this.emit('ready-to-show'));
  }
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  focus(): void {
    this.focused++;
  }
  getBounds(): E.Rectangle {
    return { x: 10, y: 20, width: 900, height: 650 };
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  isVisible(): boolean {
    return this.visible;
  }
  restore(): void {
    this.minimized = false;
  }
  destroy(): void {
    this.destroyed = true;
    this.webContents.destroyed = true;
  }
  /** What a user's close button does. */
  userClose(): ReturnType<typeof fakeEvent> {
    const ev = fakeEvent();
    this.emit('close', ev);
    if (!ev.defaultPrevented) this.destroy();
    return ev;
  }
}

/** What Menu.buildFromTemplate returns here: the template, for the tests to read and click. */
export interface FakeMenu {
  template: E.MenuItemConstructorOptions[];
}

export class FakeTray extends Emitter {
  static all: FakeTray[] = [];
  image: unknown;
  tooltip = '';
  menu: FakeMenu | null = null;
  destroyed = false;
  /** How often the menu, tooltip and image were handed to the OS (each replaces what the user sees). */
  menus = 0;
  tooltips = 0;
  images = 0;
  /** Images that were empty (a path that does not exist): an invisible tray icon on a real desktop. */
  emptyImages: string[] = [];
  constructor(image: E.NativeImage | string) {
    super();
    assertReady('Tray');
    FakeTray.all.push(this);
    this.setImage(image);
  }
  setImage(image: E.NativeImage | string): void {
    const img = image as unknown as FakeImage;
    if (typeof image === 'string' ? !existsSync(image) : img.isEmpty())
      this.emptyImages.push(typeof image === 'string' ? image : img.path);
    this.image = image;
    this.images++;
  }
  setToolTip(t: string): void {
    this.tooltip = t;
    this.tooltips++;
  }
  setContextMenu(menu: E.Menu | null): void {
    this.menu = menu as unknown as FakeMenu | null;
    this.menus++;
  }
  destroy(): void {
    this.destroyed = true;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
}

export class FakeNotification extends Emitter {
  static shown: E.NotificationConstructorOptions[] = [];
  static isSupported(): boolean {
    return true;
  }
  constructor(readonly opts: E.NotificationConstructorOptions) {
    super();
  }
  show(): void {
    FakeNotification.shown.push(this.opts);
  }
}

export interface FakeElectronOptions {
  userData: string;
  lock?: boolean;
  /** Whose login items: Windows matches path and arguments, macOS has one item per app. */
  platform?: NodeJS.Platform;
  /** The executable Electron runs as (login items default to it). */
  execPath?: string;
  languages?: string[];
  /** The displays' work areas (default: one 1920×1080 screen). */
  displays?: E.Rectangle[];
  /** false: whenReady waits until `becomeReady()`. */
  readyAtOnce?: boolean;
}

export function createFakeElectron(opts: FakeElectronOptions) {
  ready = false;
  const platform = opts.platform ?? 'linux';
  const execPath = opts.execPath ?? '/opt/Gatehop/gatehop';
  let becomeReady: () => void = () => {};
  const readyPromise = new Promise<void>((r) => {
    becomeReady = () => {
      ready = true;
      r();
    };
  });
  if (opts.readyAtOnce !== false) becomeReady();
  // Windows keeps one Run entry per (path, args); macOS one login item for the app.
  const loginItems = new Map<string, boolean>();
  const loginKey = (path?: string, args?: string[]): string =>
    platform === 'win32' ? `${path ?? execPath}|${(args ?? []).join(' ')}` : 'app';
  const app = Object.assign(new Emitter(), {
    exits: [] as number[],
    quits: 0,
    relaunches: 0,
    wasOpenedAtLogin: false,
    applicationMenu: undefined as E.Menu | null | undefined,
    isPackaged: false,
    requestSingleInstanceLock: (): boolean => opts.lock ?? true,
    quit(): void {
      this.quits++;
    },
    exit(code?: number): void {
      this.exits.push(code ?? 0);
    },
    relaunch(_o?: E.RelaunchOptions): void {
      this.relaunches++;
    },
    getPath: (_name: Parameters<E.App['getPath']>[0]): string => opts.userData,
    whenReady: (): Promise<void> => readyPromise,
    isReady: (): boolean => ready,
    setLoginItemSettings(s: E.Settings): void {
      const key = loginKey(s.path, s.args);
      if (s.openAtLogin) loginItems.set(key, true);
      else loginItems.delete(key);
    },
    getLoginItemSettings(o?: E.LoginItemSettingsOptions): E.LoginItemSettings {
      const openAtLogin = loginItems.get(loginKey(o?.path, o?.args)) ?? false;
      return {
        openAtLogin,
        wasOpenedAtLogin: platform === 'darwin' && this.wasOpenedAtLogin,
        status: 'not-registered',
        executableWillLaunchAtLogin: [...loginItems.keys()].some((k) => k.startsWith(`${o?.path ?? execPath}|`)),
        launchItems: [],
      };
    },
    getAppPath: (): string => process.cwd(),
    setAppUserModelId: (_id: string): void => {},
    getPreferredSystemLanguages: (): string[] => opts.languages ?? ['en-US'],
  });
  const handlers = new Map<string, (event: E.IpcMainInvokeEvent, ...args: unknown[]) => unknown>();
  const protocolHandlers = new Map<string, (req: Request) => Response | Promise<Response>>();
  const permission = {
    request: null as null | ((...a: never[]) => void),
    check: null as null | ((...a: never[]) => boolean),
  };
  const clipboardText: string[] = [];
  const openedPaths: string[] = [];
  const dialogAnswer: number[] = [];
  const dialogs: E.MessageBoxOptions[] = [];
  const fake = {
    app,
    BrowserWindow: FakeBrowserWindow,
    Tray: FakeTray,
    Menu: {
      buildFromTemplate: (template: E.MenuItemConstructorOptions[]): E.Menu =>
        ({ template }) as FakeMenu as unknown as E.Menu,
      setApplicationMenu: (menu: E.Menu | null): void => void (app.applicationMenu = menu),
    },
    ipcMain: {
      handle(channel: string, fn: (event: E.IpcMainInvokeEvent, ...args: unknown[]) => unknown): void {
        if (handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
        handlers.set(channel, fn);
      },
      removeHandler(channel: string): void {
        handlers.delete(channel);
      },
    },
    nativeImage: {
      createFromPath: (path: string): E.NativeImage =>
        ({ path, isEmpty: () => !existsSync(path) }) satisfies FakeImage as unknown as E.NativeImage,
    },
    Notification: FakeNotification,
    powerMonitor: new Emitter(),
    shell: {
      openExternal: async (_url: string): Promise<void> => {},
      openPath: async (path: string): Promise<string> => {
        openedPaths.push(path);
        return '';
      },
    },
    clipboard: {
      writeText: async (text: string): Promise<void> => {
        clipboardText.push(text);
      },
    },
    nativeTheme: Object.assign(new Emitter(), {
      shouldUseDarkColors: false,
      shouldUseDarkColorsForSystemIntegratedUI: false,
    }),
    screen: {
      getAllDisplays: (): E.Display[] => {
        assertReady('the screen module');
        return (opts.displays ?? [{ x: 0, y: 0, width: 1920, height: 1040 }]).map(
          (workArea, i) => ({ id: i + 1, workArea, bounds: workArea }) as unknown as E.Display,
        );
      },
    },
    protocol: {
      registerSchemesAsPrivileged: (_s: E.CustomScheme[]): void => {},
      handle: (scheme: string, fn: (req: Request) => Response | Promise<Response>): void =>
        void protocolHandlers.set(scheme, fn),
    },
    net: { fetch: (input: string | Request): Promise<Response> => fetch(input) },
    session: {
      defaultSession: {
        setPermissionRequestHandler: (fn: ((...a: never[]) => void) | null): void => void (permission.request = fn),
        setPermissionCheckHandler: (fn: ((...a: never[]) => boolean) | null): void => void (permission.check = fn),
      },
    },
    dialog: {
      /** Answers "Quit" unless a test sets dialogAnswer. */
      showMessageBox: async (
        a: E.BaseWindow | E.MessageBoxOptions,
        b?: E.MessageBoxOptions,
      ): Promise<E.MessageBoxReturnValue> => {
        // Electron's two forms: (window, options) and (options).
        dialogs.push(b ?? (a as E.MessageBoxOptions));
        return { response: dialogAnswer.shift() ?? 1, checkboxChecked: false };
      },
    },
  } satisfies ElectronApi;
  /**
   * ipcRenderer.invoke as Electron runs it: the payload and the handler's result each cross the
   * process boundary by structured clone (a function, a class instance with methods, a Proxy fails).
   */
  async function invoke(channel: string, event: Partial<E.IpcMainInvokeEvent>, payload: unknown): Promise<unknown> {
    const fn = handlers.get(channel);
    if (!fn)
      throw new Error(`Error invoking remote method '${channel}': Error: No handler registered for '${channel}'`);
    return ipcClone(await fn(event as E.IpcMainInvokeEvent, ipcClone(payload)));
  }
  return {
    electron: fake,
    handlers,
    invoke,
    protocolHandlers,
    permission,
    clipboardText,
    dialogAnswer,
    dialogs,
    becomeReady,
    loginItems,
    openedPaths,
  };
}

export type FakeElectron = ReturnType<typeof createFakeElectron>;
