import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AppApi } from './electron-api.js';

/** What a login start passes on Windows and Linux, so the app starts in the tray, windowless. */
export const HIDDEN_ARG = '--hidden';

/**
 * Start at login:
 * - Windows: a Run key through app.setLoginItemSettings with our path and `--hidden`; Windows
 *   reports it as set only when asked with the same path and arguments, so it is read back so.
 * - macOS: a login item (arguments are ignored there); a login start is told by
 *   `wasOpenedAtLogin`, not by an argument.
 * - Linux: an XDG autostart entry (~/.config/autostart/gatehop.desktop), where Electron has no
 *   API. Inside an AppImage, `process.execPath` is the temporary mount of this run: the entry
 *   points at the AppImage itself (`$APPIMAGE`), and is corrected at start when it has moved.
 */
export class Autostart {
  constructor(
    private readonly app: Pick<AppApi, 'setLoginItemSettings' | 'getLoginItemSettings'>,
    private readonly exec: string,
    private readonly platform: NodeJS.Platform = process.platform,
    /** $APPIMAGE and $XDG_CONFIG_HOME come from here. */
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly configHome: string = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'),
  ) {}

  get desktopFile(): string {
    return join(this.configHome, 'autostart', 'gatehop.desktop');
  }

  /** What the login start runs: the AppImage when inside one, else the executable. */
  get launcher(): string {
    return this.platform === 'linux' && this.env.APPIMAGE ? this.env.APPIMAGE : this.exec;
  }

  get enabled(): boolean {
    if (this.platform === 'linux') return existsSync(this.desktopFile);
    if (this.platform === 'win32')
      return this.app.getLoginItemSettings({ path: this.exec, args: [HIDDEN_ARG] }).openAtLogin;
    return this.app.getLoginItemSettings().openAtLogin;
  }

  /** Whether this run was a login start (and so begins in the tray, with no window). */
  startedAtLogin(argv: readonly string[]): boolean {
    if (this.platform === 'darwin')
      return this.app.getLoginItemSettings().wasOpenedAtLogin === true || argv.includes(HIDDEN_ARG);
    return argv.includes(HIDDEN_ARG);
  }

  set(on: boolean): void {
    if (this.platform === 'win32') {
      this.app.setLoginItemSettings({ openAtLogin: on, path: this.exec, args: [HIDDEN_ARG] });
      return;
    }
    if (this.platform === 'darwin') {
      this.app.setLoginItemSettings({ openAtLogin: on });
      return;
    }
    if (!on) {
      rmSync(this.desktopFile, { force: true });
      return;
    }
    mkdirSync(dirname(this.desktopFile), { recursive: true });
    writeFileSync(this.desktopFile, this.#entry());
  }

  /** An entry left by an AppImage that has moved (or by an older version) points here again. */
  repair(): boolean {
    if (this.platform !== 'linux' || !existsSync(this.desktopFile)) return false;
    if (readFileSync(this.desktopFile, 'utf8') === this.#entry()) return false;
    writeFileSync(this.desktopFile, this.#entry());
    return true;
  }

  #entry(): string {
    // Exec quoting per the Desktop Entry spec: a path with spaces goes in double quotes.
    const target = this.launcher;
    const exec = /[\s"]/.test(target) ? `"${target.replace(/(["`$\\])/g, '\\$1')}"` : target;
    return [
      '[Desktop Entry]',
      'Type=Application',
      'Name=Gatehop',
      'Comment=VPN Gate as one local proxy',
      `Exec=${exec} ${HIDDEN_ARG}`,
      'Icon=gatehop',
      'Terminal=false',
      'X-GNOME-Autostart-enabled=true',
      '',
    ].join('\n');
  }
}
