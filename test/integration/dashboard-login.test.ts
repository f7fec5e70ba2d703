/**
 * The dashboard's password login (#63): a page opened on a LAN address without the token asks for
 * a password set with `gatehop dashboard-password`; a right one is answered with the API token, a
 * wrong one with 401 after the same back-off as the proxy's passwords; no password set, no login;
 * the Host rules (DNS rebinding) hold for it as for the rest of the API.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRequest } from '../helpers/admin-client.js';
import { freePort } from '../helpers/ports.js';
import { waitForLine } from '../helpers/netns.js';

const BIN = resolve(import.meta.dirname, '../../bin/gatehop.js');

describe('the dashboard password login', () => {
  let core: ChildProcess;
  let dir = '';
  let admin = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gh-dash-login-'));
    admin = await freePort();
    core = spawn(process.execPath, [
      BIN,
      '--egress',
      'direct',
      '--listen',
      `127.0.0.1:${await freePort()}`,
      '--admin',
      `127.0.0.1:${admin}`,
      '--data-dir',
      dir,
      '--log-file',
      'off',
    ]);
    await waitForLine(core, /^gatehop ready: /, 30_000);
  }, 40_000);

  afterAll(() => {
    core?.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const login = (password: string, headers: Record<string, string> = {}) =>
    apiRequest(admin, 'POST', '/login', { body: { password }, headers });

  it('offers no login until a password is set, then takes it without a restart', async () => {
    expect((await apiRequest(admin, 'GET', '/login')).json()).toEqual({ available: false });
    expect((await login('anything')).status).toBe(404);
    const short = spawnSync(process.execPath, [BIN, 'dashboard-password', '--data-dir', dir], { input: 'short\n' });
    expect(short.status).toBe(2); // under 8 characters
    const set = spawnSync(process.execPath, [BIN, 'dashboard-password', '--data-dir', dir], {
      input: 'a long enough password\n',
      encoding: 'utf8',
    });
    expect(set.status, set.stderr).toBe(0);
    expect((await apiRequest(admin, 'GET', '/login')).json()).toEqual({ available: true });
  });

  it('answers a right password with the API token, a wrong one with 401 after a back-off', async () => {
    const right = await login('a long enough password');
    expect(right.status).toBe(200);
    const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
    expect(right.json()).toEqual({ token });
    expect((await apiRequest(admin, 'GET', '/status', { token: right.json<{ token: string }>().token })).status).toBe(
      200,
    );
    expect((await login('wrong')).status).toBe(401);
    const t0 = Date.now();
    expect((await login('wrong again')).status).toBe(401);
    // The second wrong try waited its turn (250 ms after one failure): guesses are slowed.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200);
  });

  it('refuses a login addressed to another name (a rebinding page) before reading the password', async () => {
    const r = await login('a long enough password', { host: `evil.example:${admin}` });
    expect(r.status).not.toBe(200);
    expect(r.text).not.toContain(readFileSync(join(dir, 'admin-token'), 'utf8').trim());
  });
});
