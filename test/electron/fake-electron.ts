/**
 * A faithful fake of the parts of Electron the shell uses. It `satisfies ElectronApi`, which is
 * derived from electron.d.ts: a member the shell uses that the fake lacks, or one whose signature
 * differs from Electron's, fails the type check. State is inspectable (windows, trays, menus,
 * notifications, handlers) and events can be fired as Electron would fire them.
 */
import { EventEmitter } from 'node:events';
import type * as E from 'electron';
import type { ElectronApi } from '../../electron/electron-api.js';

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
  readonly session = {} as E.Session;
  send(channel: string, ...args: unknown[]): void {
    if (this.destroyed) throw new Error('Object has been destroyed');
    this.sent.push({ channel, args });
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
  menus = 0;
  constructor(image: E.NativeImage | string) {
    super();
    this.image = image;
    FakeTray.all.push(this);
  }
  setImage(image: E.NativeImage | string): void {
    this.image = image;
  }
  setToolTip(t: string): void {
    this.tooltip = t;
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

export function createFakeElectron(opts: { userData: string; lock?: boolean }) {
  const app = Object.assign(new Emitter(), {
    exits: [] as number[],
    quits: 0,
    loginItem: { openAtLogin: false } as E.LoginItemSettings,
    isPackaged: false,
    requestSingleInstanceLock: (): boolean => opts.lock ?? true,
    quit(): void {
      this.quits++;
    },
    exit(code?: number): void {
      this.exits.push(code ?? 0);
    },
    getPath: (_name: Parameters<E.App['getPath']>[0]): string => opts.userData,
    whenReady: (): Promise<void> => Promise.resolve(),
    setLoginItemSettings(s: E.Settings): void {
      this.loginItem = { ...this.loginItem, openAtLogin: s.openAtLogin ?? false };
    },
    getLoginItemSettings(): E.LoginItemSettings {
      return this.loginItem;
    },
    getAppPath: (): string => process.cwd(),
    setAppUserModelId: (_id: string): void => {},
  });
  const handlers = new Map<string, (event: E.IpcMainInvokeEvent, ...args: unknown[]) => unknown>();
  const protocolHandlers = new Map<string, (req: Request) => Response | Promise<Response>>();
  const permission = { request: null as null | ((...a: never[]) => void), check: null as null | ((...a: never[]) => boolean) };
  const clipboardText: string[] = [];
  const dialogAnswer: number[] = [];
  const fake = {
    app,
    BrowserWindow: FakeBrowserWindow,
    Tray: FakeTray,
    Menu: { buildFromTemplate: (template: E.MenuItemConstructorOptions[]): E.Menu => ({ template }) as FakeMenu as unknown as E.Menu },
    ipcMain: {
      handle(channel: string, fn: (event: E.IpcMainInvokeEvent, ...args: unknown[]) => unknown): void {
        if (handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
        handlers.set(channel, fn);
      },
      removeHandler(channel: string): void {
        handlers.delete(channel);
      },
    },
    nativeImage: { createFromPath: (path: string): E.NativeImage => ({ path }) as unknown as E.NativeImage },
    Notification: FakeNotification,
    powerMonitor: new Emitter(),
    shell: { openExternal: async (_url: string): Promise<void> => {} },
    clipboard: {
      writeText: async (text: string): Promise<void> => {
        clipboardText.push(text);
      },
    },
    nativeTheme: Object.assign(new Emitter(), { shouldUseDarkColors: false }),
    protocol: {
      registerSchemesAsPrivileged: (_s: E.CustomScheme[]): void => {},
      handle: (scheme: string, fn: (req: Request) => Response | Promise<Response>): void => void protocolHandlers.set(scheme, fn),
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
      showMessageBox: async (): Promise<E.MessageBoxReturnValue> => ({ response: dialogAnswer.shift() ?? 1, checkboxChecked: false }),
    },
  } satisfies ElectronApi;
  return { electron: fake, handlers, protocolHandlers, permission, clipboardText, dialogAnswer };
}

export type FakeElectron = ReturnType<typeof createFakeElectron>;
