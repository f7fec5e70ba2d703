import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import Database from 'better-sqlite3';
import { silentLogger } from '../../core/common/index.js';
import { MIGRATIONS, Store } from '../../core/store/index.js';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { curl } from '../helpers/curl.js';
import { Servers, startHttpServer } from '../helpers/servers.js';
import { freePort } from '../helpers/ports.js';

const BIN = resolve(__dirname, '../../bin/gatehop.js');
const servers = new Servers();
const children: ChildProcess[] = [];

beforeAll(() => {
  if (!existsSync(resolve(__dirname, '../../dist/core/app/index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  }
});

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await servers.closeAll();
});

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function gatehop(args: string[], stdin?: string, dataDir = mkdtempSync(join(tmpdir(), 'gh-cli-'))): Run {
  const child = spawn(process.execPath, [BIN, '--data-dir', dataDir, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  if (stdin !== undefined) child.stdin!.end(stdin);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Resolves with the startup line once the process prints it (readiness, not a sleep). */
function ready(run: Run): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const line = run
        .stdout()
        .split('\n')
        .find((l) => l.startsWith('gatehop ready:'));
      if (line) resolve(line);
    };
    run.child.stdout!.on('data', check);
    run.exited.then((code) => reject(new Error(`exited ${code} before ready: ${run.stderr()}`)));
    check();
  });
}

describe('gatehop CLI', () => {
  it('prints one startup line naming every listening address, serves, and exits 0 on SIGTERM', async () => {
    const web = servers.track(await startHttpServer());
    const port = await freePort();
    const run = gatehop([
      '--egress',
      'direct',
      '--listen',
      `127.0.0.1:${port}`,
      '--admin',
      '127.0.0.1:0',
      '--log-file',
      'off',
      '--log-level',
      'warn',
    ]);
    const line = await ready(run);
    expect(line).toContain(`socks5+http://127.0.0.1:${port}`);
    expect(line).toMatch(/admin=http:\/\/127\.0\.0\.1:\d+/);
    const r = await curl(['--socks5-hostname', `127.0.0.1:${port}`, `${web.url}/`]);
    expect(r.stdout.toString()).toBe('hello');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('exits non-zero with a one-line reason on a busy port', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    servers.track({ close: () => new Promise<void>((r) => blocker.close(() => r())) });
    const port = (blocker.address() as AddressInfo).port;
    const run = gatehop(['--egress', 'direct', '--listen', `127.0.0.1:${port}`, '--admin', 'off', '--log-file', 'off']);
    expect(await run.exited).toBe(1);
    expect(run.stderr().trim().split('\n')).toHaveLength(1);
    expect(run.stderr()).toMatch(/address already in use/);
  });

  it.each([
    [['--listen', 'nonsense'], /listen/],
    [['--max-sessions', '-3'], /positive whole number/],
    [['--egress', 'carrier-pigeon'], /egress/],
    [['--listen', '0.0.0.0:0', '--egress', 'direct'], /needs --auth-file/],
  ])('exits 2 with a one-line reason on bad flags %j', async (args, pattern) => {
    const run = gatehop([...args, '--log-file', 'off']);
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toMatch(pattern);
    expect(run.stderr()).toMatch(/^gatehop: /);
  });

  it('with --egress vpngate and no reachable list it still starts, and refuses sessions naming why', async () => {
    // --api replaces the official endpoints: nothing here may reach the real VPN Gate.
    const closed = await freePort();
    const port = await freePort();
    const run = gatehop([
      '--egress',
      'vpngate',
      '--api',
      `http://127.0.0.1:${closed}/api/iphone/`,
      '--listen',
      `127.0.0.1:${port}`,
      '--admin',
      'off',
      '--log-file',
      'off',
      '--log-level',
      'warn',
    ]);
    const line = await ready(run);
    // It says what it tried, so a user in a blocked network sees why there is no list.
    expect(line).toMatch(
      new RegExp(
        `egress=vpngate \\(0 nodes; no list yet: tried 1 source, http://127.0.0.1:${closed}/api/iphone/ \\(direct\\): .*ECONNREFUSED.*; waiting for the network, retrying\\)`,
      ),
    );
    const r = await curl(['-i', '-x', `http://127.0.0.1:${port}`, 'http://files.test/']);
    expect(r.stdout.toString()).toMatch(/^HTTP\/1\.1 502[\s\S]*no tunnel is up yet/);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('a TUNNEL flow with no tunnel up is refused, never sent direct: global mode, and a rule naming TUNNEL (#46)', async () => {
    // A server this machine reaches directly: going direct would work, and is exactly the leak.
    let connections = 0;
    const direct = createServer((sock) => {
      connections++;
      sock.end('HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nleaked');
    });
    await new Promise<void>((r) => direct.listen(0, '127.0.0.1', () => r()));
    const target = `http://127.0.0.1:${(direct.address() as AddressInfo).port}/`;
    const closed = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-cli-'));
    writeFileSync(
      join(dataDir, 'rules.yaml'),
      ['mode: rule', 'rules:', '  - IP-CIDR,127.0.0.1/32,TUNNEL,no-resolve', '  - MATCH,DIRECT'].join('\n'),
    );
    try {
      for (const how of [
        ['--mode', 'global'],
        ['--config', join(dataDir, 'rules.yaml')],
      ]) {
        const port = await freePort();
        const run = gatehop(
          [
            ...['--egress', 'vpngate', '--api', `http://127.0.0.1:${closed}/api/iphone/`],
            ...['--listen', `127.0.0.1:${port}`, '--admin', 'off', '--log-file', 'off', '--log-level', 'warn'],
            ...how,
          ],
          undefined,
          dataDir,
        );
        await ready(run);
        const http = await curl(['-i', '-x', `http://127.0.0.1:${port}`, target]);
        expect(http.stdout.toString()).toMatch(/^HTTP\/1\.1 502[\s\S]*no tunnel is up yet/);
        const socks = await curl(['-s', '--socks5', `127.0.0.1:${port}`, target]);
        expect(socks.code).not.toBe(0);
        expect(socks.stdout.toString()).not.toContain('leaked');
        run.child.kill('SIGTERM');
        expect(await run.exited).toBe(0);
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((r) => direct.close(() => r()));
    }
  });

  /** A data dir whose gatehop.db has history pages at its end overwritten (a failing disk). */
  function damagedDataDir(): string {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-cli-'));
    const path = join(dataDir, 'gatehop.db');
    const st = new Store({ path, logger: silentLogger() });
    st.setSelection({ group: 'vpngate', nodeId: 'pinned', mode: 'manual' });
    for (let i = 0; i < 3000; i++)
      st.saveHistory({ ...st.history(`node-${i}`), successes: i, lastSuccessAt: Date.now() });
    st.close();
    const db = new Database(path);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const size = statSync(path).size;
    const fd = openSync(path, 'r+');
    for (let p = 1; p <= 20; p++) writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, size - p * 4096);
    closeSync(fd);
    return dataDir;
  }

  function vpngateArgs(closed: number, port: number, logFile: string): string[] {
    return [
      '--egress',
      'vpngate',
      '--api',
      `http://127.0.0.1:${closed}/api/iphone/`,
      '--listen',
      `127.0.0.1:${port}`,
      '--admin',
      'off',
      '--log-file',
      logFile,
      '--log-level',
      'info',
    ];
  }

  it('starts over a damaged gatehop.db (the landed code exited at every start): the file kept aside, a fresh one in use, said in the log (#32)', async () => {
    const dataDir = damagedDataDir();
    const logFile = join(dataDir, 'logs', 'gatehop.log');
    const run = gatehop(vpngateArgs(await freePort(), await freePort(), logFile), undefined, dataDir);
    await ready(run);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.stderr()).not.toMatch(/malformed/);
    expect(readdirSync(dataDir).some((f) => f.startsWith('gatehop.db.damaged-'))).toBe(true);
    // The log rotates: current.log links to the file in use (gatehop.1.log here).
    expect(readFileSync(join(dataDir, 'logs', 'current.log'), 'utf8')).toMatch(
      /"event":"store-corrupt".*"carried":\[[^\]]*"selection"/,
    );
    // The next start finds a whole file.
    const again = gatehop(vpngateArgs(await freePort(), await freePort(), logFile), undefined, dataDir);
    await ready(again);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    expect(
      readdirSync(dataDir).filter(
        (f) => f.startsWith('gatehop.db.damaged-') && !f.includes('-wal') && !f.includes('-shm'),
      ),
    ).toHaveLength(1);
  });

  it('refuses a gatehop.db from a newer Gatehop with a one-line reason, leaving it untouched (#32)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-cli-'));
    const path = join(dataDir, 'gatehop.db');
    new Store({ path, logger: silentLogger() }).close();
    const db = new Database(path);
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const before = readFileSync(path);
    const run = gatehop(vpngateArgs(await freePort(), await freePort(), 'off'), undefined, dataDir);
    expect(await run.exited).not.toBe(0);
    expect(run.stderr()).toMatch(/newer Gatehop/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('passwd writes a user that the proxy then accepts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-pw-'));
    const authFile = join(dir, 'users');
    const pw = gatehop(['passwd', 'carol', '--auth-file', authFile], 'hunter2\n');
    expect(await pw.exited).toBe(0);
    const web = servers.track(await startHttpServer());
    const port = await freePort();
    const run = gatehop([
      '--egress',
      'direct',
      '--listen',
      `127.0.0.1:${port}`,
      '--auth-file',
      authFile,
      '--admin',
      'off',
      '--log-file',
      'off',
    ]);
    await ready(run);
    const ok = await curl(['-x', `http://127.0.0.1:${port}`, '--proxy-user', 'carol:hunter2', `${web.url}/`]);
    expect(ok.stdout.toString()).toBe('hello');
    const bad = await curl(['--socks5', `127.0.0.1:${port}`, '--proxy-user', 'carol:wrong', `${web.url}/`]);
    expect(bad.code).not.toBe(0);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  });
});

describe('the admin token stays out of the process list (#34 item 5)', () => {
  async function cmdlineOf(run: Run): Promise<string> {
    await ready(run);
    return readFileSync(`/proc/${run.child.pid}/cmdline`, 'utf8').split('\0').join(' ');
  }

  it('from --admin-token-file or GATEHOP_ADMIN_TOKEN the token is not in /proc/<pid>/cmdline, and the API takes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-token-'));
    const secret = 'file-token-' + 'x'.repeat(24);
    const file = join(dir, 'token');
    writeFileSync(file, `${secret}\n`, { mode: 0o600 });
    const admin = await freePort();
    const run = gatehop([
      '--listen',
      `127.0.0.1:${await freePort()}`,
      '--egress',
      'direct',
      '--admin',
      `127.0.0.1:${admin}`,
      '--admin-token-file',
      file,
      '--log-file',
      'off',
    ]);
    const cmdline = await cmdlineOf(run);
    expect(cmdline).toContain('--admin-token-file');
    expect(cmdline).not.toContain(secret);
    const res = await fetch(`http://127.0.0.1:${admin}/status`, { headers: { authorization: `Bearer ${secret}` } });
    expect(res.status).toBe(200);
    run.child.kill('SIGTERM');
    await run.exited;

    const envSecret = 'env-token-' + 'y'.repeat(24);
    const admin2 = await freePort();
    const child = spawn(
      process.execPath,
      [
        BIN,
        '--data-dir',
        mkdtempSync(join(tmpdir(), 'gh-cli-')),
        '--listen',
        `127.0.0.1:${await freePort()}`,
        '--egress',
        'direct',
        '--admin',
        `127.0.0.1:${admin2}`,
        '--log-file',
        'off',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GATEHOP_ADMIN_TOKEN: envSecret } },
    );
    children.push(child);
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const envRun: Run = { child, stdout: () => out, stderr: () => '', exited };
    expect(await cmdlineOf(envRun)).not.toContain(envSecret);
    const res2 = await fetch(`http://127.0.0.1:${admin2}/status`, {
      headers: { authorization: `Bearer ${envSecret}` },
    });
    expect(res2.status).toBe(200);
    child.kill('SIGTERM');
    await exited;
  });
});
