/**
 * The desktop shell and the system proxy, on real GNOME settings (gsettings over dconf on a
 * private D-Bus session): quitting puts the user's PAC back, and crash recovery has run before
 * the tray appears. This file's worker points its environment at the sandboxed session.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runShell } from '../../electron/shell.js';
import { gget, gnomeSession, gset, type DesktopSession } from '../helpers/desktop-session.js';
import { createFakeElectron, FakeTray } from './fake-electron.js';

const ROOT = resolve(__dirname, '../..');
const P = 'org.gnome.system.proxy';
let session: DesktopSession;
const saved = { ...process.env };

beforeAll(async () => {
  session = await gnomeSession();
  Object.assign(process.env, session.env);
});
afterAll(async () => {
  for (const k of Object.keys(session.env)) delete process.env[k];
  Object.assign(process.env, saved);
  await session.close();
});

async function shell(userData: string, systemProxy: boolean) {
  const fake = createFakeElectron({ userData });
  const s = await runShell(fake.electron, {
    uiDir: join(ROOT, 'dist/renderer'),
    assetsDir: join(ROOT, 'assets'),
    preload: join(ROOT, 'dist/electron/preload.cjs'),
    exec: 'gatehop',
    argv: ['--hidden'],
    platform: 'linux',
    onSignal: () => {},
    configInput: {
      egress: 'direct',
      listen: '127.0.0.1:0',
      admin: '127.0.0.1:0',
      logFile: 'off',
      logLevel: 'silent',
      systemProxy: { enabled: systemProxy },
    },
  });
  return { s: s!, fake };
}

describe('the desktop shell and the system proxy', () => {
  it('quitting from the tray restores the PAC the user had', async () => {
    await gset(session.env, P, 'mode', "'auto'");
    await gset(session.env, P, 'autoconfig-url', "'http://wpad.corp.example/p.pac'");
    const { s, fake } = await shell(mkdtempSync(join(tmpdir(), 'gh-shell-sp-')), true);
    expect(await gget(session.env, P, 'mode')).toBe("'manual'");
    const quit = FakeTray.all.at(-1)!.menu!.template.find((i) => i.id === 'quit')!.click!;
    quit({} as Electron.MenuItem, undefined, {} as KeyboardEvent);
    await vi.waitFor(() => expect(fake.electron.app.exits).toEqual([0]), { timeout: 10_000 });
    expect(s.lifecycle.reasons[0]).toBe('tray-quit');
    expect(await gget(session.env, P, 'mode')).toBe("'auto'");
    expect(await gget(session.env, P, 'autoconfig-url')).toBe("'http://wpad.corp.example/p.pac'");
  });

  it('the kill switch turned on in the tray holds the proxy at a tray quit; turned off, the next start restores exactly (#46)', async () => {
    const userData = mkdtempSync(join(tmpdir(), 'gh-shell-sp-'));
    await gset(session.env, P, 'mode', "'auto'");
    await gset(session.env, P, 'autoconfig-url', "'http://wpad.corp.example/held.pac'");
    const { s, fake } = await shell(userData, true);
    // From the tray's checkbox: saved as a setting, live, no restart.
    const item = (id: string) => FakeTray.all.at(-1)!.menu!.template.find((i) => i.id === id)!;
    item('kill-switch').click!({ checked: true } as Electron.MenuItem, undefined, {} as KeyboardEvent);
    await vi.waitFor(() => expect(item('kill-switch').checked).toBe(true));
    expect(s.core.admin!.operations.getSettings({})).toMatchObject({ settings: { killSwitch: true } });
    const quit = FakeTray.all.at(-1)!.menu!.template.find((i) => i.id === 'quit')!.click!;
    quit({} as Electron.MenuItem, undefined, {} as KeyboardEvent);
    await vi.waitFor(() => expect(fake.electron.app.exits).toEqual([0]), { timeout: 10_000 });
    expect(s.lifecycle.reasons[0]).toBe('tray-quit');
    expect(await gget(session.env, P, 'mode')).toBe("'manual'");
    // The next start holds it too (the saved setting); turned off there, the quit restores exactly.
    const second = await shell(userData, false);
    expect(await gget(session.env, P, 'mode')).toBe("'manual'");
    await second.s.core.admin!.operations.putSettings({ killSwitch: false });
    await second.s.lifecycle.shutdown('test-end');
    expect(await gget(session.env, P, 'mode')).toBe("'auto'");
    expect(await gget(session.env, P, 'autoconfig-url')).toBe("'http://wpad.corp.example/held.pac'");
  });

  it('a Gatehop that crashed left the proxy on: the next start restores it before the tray exists', async () => {
    const userData = mkdtempSync(join(tmpdir(), 'gh-shell-sp-'));
    await gset(session.env, P, 'mode', "'none'");
    const first = await shell(userData, true);
    const snapshot = JSON.parse(readFileSync(join(userData, 'sysproxy-snapshot.json'), 'utf8')) as {
      pid: number;
      pidStart: string | null;
      applied: Record<string, string>;
    };
    await first.s.core.stop();
    // As a crash leaves it: the OS still has exactly what Gatehop set, the snapshot names a process that is gone.
    for (const [key, value] of Object.entries(snapshot.applied)) {
      const [schema, name] = key.split(' ') as [string, string];
      await gset(session.env, schema, name, value);
    }
    expect(await gget(session.env, P, 'mode')).toBe("'manual'");
    writeFileSync(
      join(userData, 'sysproxy-snapshot.json'),
      JSON.stringify({ ...snapshot, pid: 2 ** 22 + 4321, pidStart: null }),
    );
    // The tray's constructor reads the OS setting at the moment the tray appears.
    const seenAtTray: string[] = [];
    const Orig = FakeTray;
    const spy = vi.spyOn(Orig.all, 'push').mockImplementation(function (this: FakeTray[], ...items: FakeTray[]) {
      seenAtTray.push(execFileSync('gsettings', ['get', P, 'mode'], { env: session.env, encoding: 'utf8' }).trim());
      return Array.prototype.push.apply(this, items);
    });
    const second = await shell(userData, false);
    spy.mockRestore();
    expect(seenAtTray).toEqual(["'none'"]);
    await second.s.lifecycle.shutdown('test-end');
  });
});
