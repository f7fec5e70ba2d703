/**
 * The README's quick start, as far as this machine allows (#62): `npm start` (what it runs after
 * its build: scripts/start.mjs) with no Electron or display starts the headless core, prints the
 * ready line the README shows, and the README's own curl line, pointed at the rig's web server
 * instead of the Internet, comes back through a node. The only changes to what a newcomer types
 * are the rig's list (--api), its private addresses, free ports and a data dir of the test's own.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { Rig } from '../rig/rig.js';

const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const QUICK = README.slice(
  README.indexOf('## Quick start'),
  README.indexOf('\n## ', README.indexOf('## Quick start') + 5),
);
/** The ready line's shape, as the core prints it (core/app/app.ts describeListening). */
const READY =
  /^gatehop ready: proxy socks5\+http:\/\/127\.0\.0\.1:(\d+) egress=vpngate \(\d+ nodes, list via direct \S+\) admin=http:\/\/127\.0\.0\.1:\d+$/m;

describe('the README quick start', () => {
  it('is npm ci && npm start, and npm start is the build and scripts/start.mjs', () => {
    expect(QUICK).toMatch(/^ *npm ci && npm start$/m);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe('npm run build && node scripts/start.mjs');
  });

  it('shows the ready line the core prints, and a curl through the proxy on port 1080', () => {
    // Indented in the README (inside a list item).
    expect(QUICK).toMatch(new RegExp(READY.source.replace('^', '^ *'), 'm'));
    expect(QUICK).toMatch(/^ *curl -x socks5h:\/\/127\.0\.0\.1:1080 https:\/\/\S+$/m);
  });
});

describe.skipIf(!isRoot)('the README quick start on the rig', () => {
  let rig: Rig;
  let child: ChildProcess;
  let out = '';
  let err = '';

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 1 });
    child = spawn(
      process.execPath,
      [
        join(ROOT, 'scripts/start.mjs'),
        '--api',
        rig.state.apiUrl,
        '--allow-private-nodes',
        // The rig's web server is at a private address, which the default rules send direct.
        '--mode',
        'global',
        '--listen',
        '127.0.0.1:0',
        '--admin',
        '127.0.0.1:0',
        '--data-dir',
        mkdtempSync(join(tmpdir(), 'gh-quick-')),
        '--log-file',
        'off',
      ],
      { cwd: ROOT, env: { ...process.env, DISPLAY: '', WAYLAND_DISPLAY: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
  }, 240_000);

  afterAll(() => {
    child?.kill('SIGKILL');
    rig?.down();
  });

  it('prints the ready line and the dashboard link, and the README curl comes back through the node', async () => {
    const port = await until(
      () => READY.exec(out)?.[1],
      60_000,
      () => `the ready line (stdout: ${out}; stderr: ${err})`,
    );
    expect(out).toMatch(/^dashboard: http:\/\/127\.0\.0\.1:\d+\/ui\/#token=\S+$/m);
    const line = /^ *(curl -x socks5h:\/\/127\.0\.0\.1:1080 )https:\/\/\S+$/m.exec(QUICK)![1]!;
    const args = line.replace('127.0.0.1:1080', `127.0.0.1:${port}`).trim().split(/\s+/).slice(1);
    // The first tunnel takes a few seconds, as the README says: the curl is repeated until then.
    const body = await until(
      () => {
        try {
          return execFileSync('curl', ['-sS', '--max-time', '10', ...args, 'http://files.test/ip'], {
            encoding: 'utf8',
          });
        } catch {
          return undefined;
        }
      },
      90_000,
      'a curl through the first tunnel',
    );
    expect(rig.state.nodes.map((n) => n.exitAddress)).toContain(body);
  }, 180_000);
});
