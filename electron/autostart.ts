import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AppApi } from './electron-api.js';

/**
 * Start at login: the login item on Windows and macOS (app.setLoginItemSettings), an XDG
 * autostart entry on Linux (~/.config/autostart/gatehop.desktop), where Electron has no API.
 */
export class Autostart {
  constructor(
    private readonly app: Pick<AppApi, 'setLoginItemSettings' | 'getLoginItemSettings'>,
    private readonly exec: string,
    private readonly platform: NodeJS.Platform = process.platform,
    private readonly configHome: string = process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'),
  ) {}

  get desktopFile(): string {
    return join(this.configHome, 'autostart', 'gatehop.desktop');
  }

  get enabled(): boolean {
    if (this.platform === 'linux') return existsSync(this.desktopFile);
    return this.app.getLoginItemSettings().openAtLogin;
  }

  set(on: boolean): void {
    if (this.platform !== 'linux') {
      this.app.setLoginItemSettings({ openAtLogin: on, args: ['--hidden'] });
      return;
    }
    if (!on) {
      rmSync(this.desktopFile, { force: true });
      return;
    }
    mkdirSync(dirname(this.desktopFile), { recursive: true });
    // Exec quoting per the Desktop Entry spec: a path with spaces goes in double quotes.
    const exec = /[\s"]/.test(this.exec) ? `"${this.exec.replace(/(["`$\\])/g, '\\$1')}"` : this.exec;
    writeFileSync(
      this.desktopFile,
      ['[Desktop Entry]', 'Type=Application', 'Name=Gatehop', 'Comment=VPN Gate as one local proxy', `Exec=${exec} --hidden`, 'Icon=gatehop', 'Terminal=false', 'X-GNOME-Autostart-enabled=true', ''].join('\n'),
    );
  }
}
