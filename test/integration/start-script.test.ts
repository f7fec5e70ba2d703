/**
 * `npm start` without Electron's binary or a display (these machines): the headless core with the
 * dashboard, one line saying why, and signals passed through for a clean exit.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');

describe('npm start where the tray app cannot run', () => {
  it('starts the headless core on VPN Gate with the dashboard, says why, and exits cleanly on SIGTERM', async () => {
    const env = { ...process.env, DISPLAY: '', WAYLAND_DISPLAY: '' };
    const args = [
      '--data-dir',
      mkdtempSync(join(tmpdir(), 'gh-start-')),
      '--api',
      'http://127.0.0.1:9/api/iphone/',
      '--listen',
      '127.0.0.1:0',
      '--admin',
      '127.0.0.1:0',
      '--log-file',
      'off',
      '--log-level',
      'warn',
    ];
    const child = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs'), ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await new Promise<void>((res, rej) => {
      const check = () => out.includes('dashboard: ') && res();
      child.stdout.on('data', check);
      void exited.then((code) => rej(new Error(`exited ${code}: ${err}`)));
    });
    expect(err.split('\n')[0]).toMatch(
      /^gatehop: starting the headless core with the dashboard, since (Electron's binary is not installed|there is no display).*npm start/,
    );
    expect(out).toMatch(/egress=vpngate/);
    expect(out).toMatch(/dashboard: http:\/\/127\.0\.0\.1:\d+\/ui\/#token=/);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
