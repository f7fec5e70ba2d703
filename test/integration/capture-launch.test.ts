import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusSchema } from '../../core/api/index.js';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { desktopExec, splitWords } from '../../core/app/capture-launch.js';
import { silentLogger } from '../../core/common/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { until } from '../helpers/fds.js';
import { runGatehop } from '../helpers/gatehop-process.js';
import { isRoot } from '../helpers/netns.js';

const HELPER = resolve(import.meta.dirname, '../../native/build/Release/gatehop-capture');

describe('a command line for "Run a program through Gatehop…"', () => {
  it('splits words as a shell would, without expanding or running anything', () => {
    expect(splitWords(`curl -sS  'http://a.test/x y' "q\\"uote" back\\ slash $HOME`)).toEqual([
      'curl',
      '-sS',
      'http://a.test/x y',
      'q"uote',
      'back slash',
      '$HOME',
    ]);
    expect(splitWords('  ')).toEqual([]);
    expect(() => splitWords('echo "open')).toThrow(/unclosed/);
  });

  it("takes a .desktop entry's Exec line without its field codes", () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-desktop-'));
    const file = join(dir, 'game.desktop');
    writeFileSync(file, '[Desktop Entry]\nName=Game\nExec=/opt/game/run --fullscreen %U\nType=Application\n');
    expect(desktopExec(file)).toEqual(['/opt/game/run', '--fullscreen']);
    writeFileSync(file, '[Desktop Entry]\nName=Nothing\n');
    expect(() => desktopExec(file)).toThrow(/no Exec line/);
  });
});

/**
 * The window's "Run a program through Gatehop…" and "Open a terminal through Gatehop" on a real
 * core: the program runs captured (its name lookups answered by Gatehop's gateway). Root, so the
 * helper opens /dev/net/tun as it is here (0600); the unprivileged path is capture-rig's.
 */
describe.skipIf(!isRoot || process.platform !== 'linux' || !existsSync(HELPER))(
  'run a program from the window (#46)',
  () => {
    let app: RunningApp;
    let port = 0;
    let token = '';
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-capture-launch-'));

    beforeAll(async () => {
      app = await startApp(
        buildConfig(
          {},
          {
            egress: 'direct',
            listen: '127.0.0.1:0',
            admin: '127.0.0.1:0',
            dataDir,
            logFile: 'off',
            adminCorsOrigins: ['http://dashboard.example'],
          },
        ),
        silentLogger(),
      );
      port = app.listening.admin!.port;
      token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    });
    afterAll(async () => {
      await app?.stop();
    });

    it('says capture is available, runs a command captured, and lists it while it runs', async () => {
      const status = statusSchema.parse((await apiRequest(port, 'GET', '/status', { token })).json());
      expect(status.capture).toMatchObject({ available: true, reason: null, programs: [] });
      const out = join(dataDir, 'looked-up');
      const r = await apiRequest(port, 'POST', '/capture/run', {
        token,
        body: { command: `sh -c 'getent hosts files.test > ${out}; sleep 2'` },
      });
      expect(r.status, JSON.stringify(r.json())).toBe(200);
      expect(r.json()).toMatchObject({ command: ['sh', '-c', `getent hosts files.test > ${out}; sleep 2`] });
      await until(() => (existsSync(out) && readFileSync(out, 'utf8') ? true : undefined), 10_000, 'the lookup');
      expect(readFileSync(out, 'utf8')).toMatch(/^198\.18\.\d+\.\d+\s+files\.test/);
      const during = statusSchema.parse((await apiRequest(port, 'GET', '/status', { token })).json());
      expect(during.capture?.programs.map((p) => p.command)).toEqual(['sh']);
      await until(
        async () =>
          statusSchema.parse((await apiRequest(port, 'GET', '/status', { token })).json()).capture?.programs.length ===
          0
            ? true
            : undefined,
        10_000,
        'the program to end',
      );
    }, 30_000);

    it("opens the user's terminal ($TERMINAL) with the command captured inside it; refuses an empty command without a terminal", async () => {
      const bin = mkdtempSync(join(tmpdir(), 'gh-term-'));
      const term = join(bin, 'my-terminal');
      const marker = join(dataDir, 'terminal-ran');
      // A terminal that runs what follows -e, and says it was the one that ran it.
      writeFileSync(term, `#!/bin/sh\n[ "$1" = -e ] && shift\necho terminal > ${marker}.by\nexec "$@"\n`);
      chmodSync(term, 0o755);
      // The user's shell, for `gatehop terminal` (a terminal with no command runs it).
      const shell = join(bin, 'my-shell');
      writeFileSync(shell, `#!/bin/sh\ngetent hosts shell.test > ${marker}.shell\n`);
      chmodSync(shell, 0o755);
      const saved = { PATH: process.env.PATH, TERMINAL: process.env.TERMINAL, SHELL: process.env.SHELL };
      process.env.PATH = `${bin}:${process.env.PATH}`;
      process.env.TERMINAL = 'my-terminal';
      process.env.SHELL = shell;
      try {
        const r = await apiRequest(port, 'POST', '/capture/run', {
          token,
          body: { command: `sh -c 'getent hosts other.test > ${marker}'`, terminal: true },
        });
        expect(r.status, JSON.stringify(r.json())).toBe(200);
        await until(
          () => (existsSync(marker) && readFileSync(marker, 'utf8') ? true : undefined),
          10_000,
          'the command',
        );
        expect(readFileSync(`${marker}.by`, 'utf8')).toBe('terminal\n');
        expect(readFileSync(marker, 'utf8')).toMatch(/^198\.18\.\d+\.\d+\s+other\.test/);
        // `gatehop terminal` (a launcher's command): the running core opens the terminal with the user's shell captured.
        // (Not spawnSync: the core answering it runs in this process.)
        const cli = await runGatehop(['terminal', '--data-dir', dataDir, '--admin', `127.0.0.1:${port}`]);
        expect(cli.code, cli.stderr).toBe(0);
        await until(
          () => (existsSync(`${marker}.shell`) && readFileSync(`${marker}.shell`, 'utf8') ? true : undefined),
          10_000,
          'the shell',
        );
        expect(readFileSync(`${marker}.shell`, 'utf8')).toMatch(/^198\.18\.\d+\.\d+\s+shell\.test/);
      } finally {
        for (const k of ['PATH', 'TERMINAL', 'SHELL'] as const) {
          if (saved[k] === undefined) delete process.env[k];
          else process.env[k] = saved[k];
        }
      }
      // A dashboard from an allowed origin may steer the proxy with the token, never start programs.
      const dashboard = await apiRequest(port, 'POST', '/capture/run', {
        token,
        body: { command: `touch ${marker}.dashboard` },
        headers: { origin: 'http://dashboard.example' },
      });
      expect(dashboard.status).toBe(403);
      expect(dashboard.json()).toMatchObject({ error: 'GH_ERR_API_ORIGIN' });
      const ticket = await apiRequest(port, 'POST', '/capture/sessions', {
        token,
        body: { command: 'x' },
        headers: { origin: 'http://dashboard.example' },
      });
      expect(ticket.status).toBe(403);
      const status = await apiRequest(port, 'GET', '/status', {
        token,
        headers: { origin: 'http://dashboard.example' },
      });
      expect(status.status).toBe(200);
      expect(existsSync(`${marker}.dashboard`)).toBe(false);
      const empty = await apiRequest(port, 'POST', '/capture/run', { token, body: { command: ' ' } });
      expect(empty.status).toBe(400);
      expect(empty.json()).toMatchObject({ error: 'GH_ERR_CONFIG_INVALID' });
    }, 30_000);
  },
);
