/**
 * Real desktop settings in a sandbox: GNOME's gsettings over dconf on a private D-Bus session bus
 * (its own HOME and XDG dirs, so the machine's settings are never touched), and KDE's kioslaverc
 * in a temporary XDG_CONFIG_HOME.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface DesktopSession {
  env: NodeJS.ProcessEnv;
  dir: string;
  close(): Promise<void>;
}

/** A dbus-daemon of our own; resolves once it printed its address (it is listening then). */
export async function gnomeSession(): Promise<DesktopSession> {
  const dir = mkdtempSync(join(tmpdir(), 'gh-gnome-'));
  for (const d of ['home', 'config', 'run']) mkdirSync(join(dir, d), { mode: 0o700 });
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(dir, 'home'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_RUNTIME_DIR: join(dir, 'run'),
    GSETTINGS_BACKEND: 'dconf',
    XDG_CURRENT_DESKTOP: 'GNOME',
  };
  const daemon: ChildProcess = spawn(
    'dbus-daemon',
    ['--session', '--nofork', '--print-address=1', `--address=unix:path=${join(dir, 'run', 'bus')}`],
    {
      env: base,
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    daemon.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    daemon.once('exit', (code) => reject(new Error(`dbus-daemon exited ${code}`)));
    daemon.once('error', reject);
  });
  const env = { ...base, DBUS_SESSION_BUS_ADDRESS: address };
  return {
    env,
    dir,
    close: async () => {
      if (daemon.exitCode === null) {
        const exited = new Promise((r) => daemon.once('exit', r));
        daemon.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function kdeSession(): DesktopSession {
  const dir = mkdtempSync(join(tmpdir(), 'gh-kde-'));
  mkdirSync(join(dir, 'config'));
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CURRENT_DESKTOP: 'KDE',
    KDE_SESSION_VERSION: '5',
  };
  return { env, dir, close: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs a tool in the session as a separate process, the way another application would read it. */
export function tool(env: NodeJS.ProcessEnv, file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, encoding: 'utf8', timeout: 10_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${file} ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout.trim()),
    );
  });
}

export const gget = (env: NodeJS.ProcessEnv, schema: string, key: string): Promise<string> =>
  tool(env, 'gsettings', ['get', schema, key]);
export const gset = (env: NodeJS.ProcessEnv, schema: string, key: string, value: string): Promise<string> =>
  tool(env, 'gsettings', ['set', schema, key, value]);
export const kread = (env: NodeJS.ProcessEnv, key: string): Promise<string> =>
  tool(env, 'kreadconfig5', ['--file', 'kioslaverc', '--group', 'Proxy Settings', '--key', key]);
export const kwrite = (env: NodeJS.ProcessEnv, key: string, value: string): Promise<string> =>
  tool(env, 'kwriteconfig5', ['--file', 'kioslaverc', '--group', 'Proxy Settings', '--key', key, value]);
