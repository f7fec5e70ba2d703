/**
 * The fake Electron catches what real Electron would refuse (issue #21): a Tray or window before
 * the app is ready, a value IPC cannot clone, an icon file that is not there, a login item read
 * back with other arguments than it was written with, and a preload that needs Node.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFakeElectron, FakeTray } from './fake-electron.js';
import { loadSandboxedPreload } from './sandboxed-preload.js';

const dir = mkdtempSync(join(tmpdir(), 'gh-fake-'));

describe('the fake Electron', () => {
  it('refuses a Tray, a BrowserWindow and the screen before whenReady, as Electron does', async () => {
    const fake = createFakeElectron({ userData: dir, readyAtOnce: false });
    const { Tray, BrowserWindow, screen, nativeImage } = fake.electron;
    expect(() => new Tray(nativeImage.createFromPath(join(dir, 'x.png')))).toThrow(/before app is ready/);
    expect(() => new BrowserWindow({})).toThrow(/before app is ready/);
    expect(() => screen.getAllDisplays()).toThrow(/before app is ready/);
    expect(fake.electron.app.isReady()).toBe(false);
    fake.becomeReady();
    await fake.electron.app.whenReady();
    expect(() => new BrowserWindow({})).not.toThrow();
  });

  it('structured-clones what crosses IPC: a function in a payload or a result fails the call', async () => {
    const fake = createFakeElectron({ userData: dir });
    fake.electron.ipcMain.handle('ok', (_e, p) => ({ echo: p, at: new Date(0) }));
    fake.electron.ipcMain.handle('bad', () => ({ value: 1, later: () => 2 }));
    expect(await fake.invoke('ok', {}, { a: [1, 2] })).toEqual({ echo: { a: [1, 2] }, at: new Date(0) });
    await expect(fake.invoke('bad', {}, {})).rejects.toThrow(/could not be cloned/);
    await expect(fake.invoke('ok', {}, { cb: () => 1 })).rejects.toThrow(/could not be cloned/);
    await expect(fake.invoke('none', {}, {})).rejects.toThrow(/No handler registered for 'none'/);
    expect(() => fake.electron.ipcMain.handle('ok', () => 1)).toThrow(/second handler/);
  });

  it('an icon path that does not exist gives an empty image, which the tray records', () => {
    const fake = createFakeElectron({ userData: dir });
    const there = join(dir, 'there.png');
    writeFileSync(there, 'png');
    const missing = fake.electron.nativeImage.createFromPath(join(dir, 'missing.png'));
    expect(missing.isEmpty()).toBe(true);
    expect(fake.electron.nativeImage.createFromPath(there).isEmpty()).toBe(false);
    const tray = new fake.electron.Tray(missing) as unknown as FakeTray;
    expect(tray.emptyImages).toEqual([join(dir, 'missing.png')]);
  });

  it('keeps Windows login items per path and arguments, and one per app on macOS', () => {
    const win = createFakeElectron({ userData: dir, platform: 'win32', execPath: 'C:\\G\\g.exe' });
    win.electron.app.setLoginItemSettings({ openAtLogin: true, path: 'C:\\G\\g.exe', args: ['--hidden'] });
    expect(win.electron.app.getLoginItemSettings({ path: 'C:\\G\\g.exe', args: ['--hidden'] }).openAtLogin).toBe(true);
    expect(win.electron.app.getLoginItemSettings().openAtLogin).toBe(false); // other arguments: another entry
    const mac = createFakeElectron({ userData: dir, platform: 'darwin' });
    mac.electron.app.setLoginItemSettings({ openAtLogin: true, args: ['--ignored'] });
    expect(mac.electron.app.getLoginItemSettings().openAtLogin).toBe(true);
  });

  it('a preload that requires a Node module fails in the sandboxed context', () => {
    const file = join(dir, 'bad-preload.cjs');
    writeFileSync(file, "const fs = require('fs'); require('electron').contextBridge.exposeInMainWorld('x', {});");
    expect(() =>
      loadSandboxedPreload(file, { invoke: async () => null, on: () => null, removeListener: () => null }),
    ).toThrow(/module not found: fs/);
    writeFileSync(
      file,
      "require('electron').contextBridge.exposeInMainWorld('x', { n: typeof __filename + typeof global });",
    );
    expect(
      loadSandboxedPreload(file, { invoke: async () => null, on: () => null, removeListener: () => null }).exposed.x,
    ).toEqual({ n: 'undefinedundefined' });
  });
});
