/**
 * The gatehop command reaches the running core only through the core's socket in its data dir
 * (#59): a stranger listening on the admin port (another local user while Gatehop is down) is
 * never sent the token, whether or not a core runs; a core started with its own token is reported
 * as running, not as absent. The socket's folder is this user's alone, and a folder someone else
 * could swap is refused.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminSocketPath, callRunningCore } from '../../core/app/admin-call.js';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { makePrivateDir, silentLogger } from '../../core/common/index.js';
import { isRoot } from '../helpers/netns.js';

/** An HTTP server on a loopback port that notes every request it gets, as a stranger's would. */
async function stranger(): Promise<{ server: Server; port: number; seen: IncomingMessage['headers'][] }> {
  const seen: IncomingMessage['headers'][] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"socketPath":"/tmp/not-gatehop.sock","key":"x"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

const configFor = (dataDir: string, adminPort: number, flags: Record<string, unknown> = {}) =>
  buildConfig({}, { egress: 'direct', listen: '127.0.0.1:0', admin: `127.0.0.1:${adminPort}`, dataDir, ...flags });

describe.skipIf(process.platform === 'win32')('the gatehop command and the admin socket (#59)', () => {
  let app: RunningApp | null = null;
  let other: Server | null = null;
  afterEach(async () => {
    await app?.stop();
    app = null;
    other?.close();
    other = null;
  });

  it('a stranger on the admin port gets nothing while Gatehop is down: no request, no token; the command says Gatehop is not running', async () => {
    const s = await stranger();
    other = s.server;
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-sock-down-'));
    writeFileSync(join(dataDir, 'admin-token'), 'secret-token-of-the-user\n'); // left by an earlier run
    const answer = await callRunningCore(configFor(dataDir, s.port), 'POST', '/capture/sessions', null);
    expect(answer).toEqual({ absent: `Gatehop is not running with the data dir ${dataDir}` });
    expect(s.seen).toEqual([]);
  });

  it('with Gatehop up, the command reaches it by its socket, whatever answers on the port it was given', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-sock-up-'));
    app = await startApp(configFor(dataDir, 0), silentLogger());
    const sock = adminSocketPath(dataDir);
    expect(statSync(sock).isSocket()).toBe(true);
    expect(statSync(sock).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'run')).mode & 0o777).toBe(0o700);
    const s = await stranger();
    other = s.server;
    const answer = await callRunningCore(configFor(dataDir, s.port), 'GET', '/status', null);
    expect(answer).toMatchObject({ ok: true, status: 200, body: { egress: 'direct' } });
    expect(s.seen).toEqual([]);
    // The socket asks for the token as the port does.
    const wrong = await callRunningCore(
      configFor(dataDir, s.port, { adminToken: 'not-the-token-0123456789' }),
      'GET',
      '/status',
      null,
    );
    expect(wrong).toMatchObject({ ok: false, status: 401 });
    // Gone with the core: its socket file is no way in.
    await app.stop();
    app = null;
    expect(await callRunningCore(configFor(dataDir, s.port), 'GET', '/status', null)).toHaveProperty('absent');
    expect(s.seen).toEqual([]);
  });

  it('a core started with its own token is reported running, with what to give the command, not as absent', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-sock-token-'));
    app = await startApp(configFor(dataDir, 0, { adminToken: 'a-token-of-its-own-0123456789' }), silentLogger());
    const answer = await callRunningCore(configFor(dataDir, 0), 'GET', '/status', null);
    expect(answer).toEqual({
      absent: expect.stringMatching(
        /^Gatehop is running, but .*admin-token is not there: it was started with its own token/,
      ),
    });
  });
});

/** A folder of ours a link can point at. */
function sticky0(base: string): string {
  const d = join(base, 'target');
  mkdirSync(d, { mode: 0o700 });
  return d;
}

describe.runIf(isRoot)('a private folder for sockets (#59)', () => {
  it('refuses a folder another user owns, a link, and one under a folder others may write in or own; takes a group-writable data dir', () => {
    const base = mkdtempSync(join(tmpdir(), 'gh-private-'));
    const theirs = join(base, 'theirs');
    mkdirSync(theirs);
    chownSync(theirs, 65534, 65534);
    expect(() => makePrivateDir(theirs)).toThrow(/owned by uid 65534, not this user/);
    const open = join(base, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777); // world-writable, not sticky: anyone may rename what is in it
    expect(() => makePrivateDir(join(open, 'run'))).toThrow(/can be written by others/);
    const link = join(base, 'link');
    symlinkSync(sticky0(base), link);
    expect(() => makePrivateDir(link)).toThrow(/not a folder \(a link\?\)/);
    // A data dir made under a desktop's umask 002 (group-writable, the user's own group) is fine.
    const desktop = join(base, 'desktop');
    mkdirSync(desktop);
    chmodSync(desktop, 0o775);
    makePrivateDir(join(desktop, 'run'));
    expect(statSync(join(desktop, 'run')).mode & 0o777).toBe(0o700);
    // A folder above that another user owns, sticky or not, is not.
    const foreign = join(base, 'foreign');
    mkdirSync(foreign);
    chownSync(foreign, 65534, 65534);
    expect(() => makePrivateDir(join(foreign, 'run'))).toThrow(/can be written by others/);
    // A sticky /tmp-like folder is fine, and what is made is 0700.
    const sticky = join(base, 'sticky');
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    makePrivateDir(join(sticky, 'run'));
    expect(statSync(join(sticky, 'run')).mode & 0o777).toBe(0o700);
    expect(existsSync(join(sticky, 'run'))).toBe(true);
  });
});
