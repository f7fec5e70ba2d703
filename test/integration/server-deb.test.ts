/**
 * `npm run dist:server` (#63): the .deb of the headless core. Built from this tree's build, it
 * depends only on Debian packages (it carries its own Node.js), holds no Electron, its systemd unit
 * passes systemd's own checker against the package's files, and the core it installs runs from the
 * package's folder alone (not this checkout's), serving the dashboard at /ui.
 * Then the way a user installs it: `apt-get install ./gatehop-server_….deb` in a clean Debian root
 * (debootstrap's minimal bookworm from packages fetched at setup, in a chroot), where the installed
 * `gatehop` serves /ui.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRequest } from '../helpers/admin-client.js';
import { waitForLine } from '../helpers/netns.js';
import { freePort } from '../helpers/ports.js';

const ROOT = resolve(import.meta.dirname, '../..');
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const ready = has('dpkg-deb') && has('systemd-analyze') && existsSync(join(ROOT, 'dist/renderer/index.html'));

/**
 * A clean Debian 12 root's packages, downloaded once by scripts/system-deps.sh (setup, as root):
 * the test itself reaches no host outside this machine, it unpacks these.
 */
const BASE_TARBALL = '/var/cache/gatehop-test/debian-bookworm-minbase.tgz';

describe.skipIf(!ready)('the server package (npm run dist:server)', () => {
  let dir = '';
  let deb = '';
  let root = '';
  let core: ChildProcess | null = null;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gh-server-deb-'));
    deb = execFileSync(process.execPath, [join(ROOT, 'scripts/dist-server.mjs'), '--out', dir], {
      encoding: 'utf8',
    }).trim();
    root = join(dir, 'root');
    execFileSync('dpkg-deb', ['-x', deb, root]);
  }, 120_000);

  afterAll(() => {
    core?.kill('SIGKILL');
    // Never remove a folder something is still mounted under.
    const mounted = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .some((l) => dir !== '' && l.split(' ')[1]?.startsWith(dir));
    if (dir && !mounted) rmSync(dir, { recursive: true, force: true });
  });

  it('depends only on packages Debian has, and carries its runtime instead of Debian’s older nodejs', () => {
    const depends = execFileSync('dpkg-deb', ['-f', deb, 'Depends'], { encoding: 'utf8' }).trim();
    const names = depends.split(',').map((d) => d.trim().split(' ')[0]!);
    expect(names.sort()).toEqual(['ca-certificates', 'libc6', 'libgcc-s1', 'libstdc++6']);
    for (const n of names) expect(spawnSync('apt-cache', ['show', n]).status, `${n} is a Debian package`).toBe(0);
    expect(existsSync(join(root, 'opt/gatehop/node/bin/node'))).toBe(true);
  });

  it('holds the core, the dashboard and the command, and nothing of the desktop app', () => {
    for (const f of ['usr/bin/gatehop', 'opt/gatehop/bin/gatehop.js', 'opt/gatehop/dist/renderer/index.html'])
      expect(existsSync(join(root, f)), f).toBe(true);
    expect(existsSync(join(root, 'opt/gatehop/dist/electron'))).toBe(false);
    expect(existsSync(join(root, 'opt/gatehop/node_modules/electron'))).toBe(false);
    expect(existsSync(join(root, 'opt/gatehop/node_modules/vitest'))).toBe(false); // development only
    expect(readFileSync(join(root, 'usr/bin/gatehop'), 'utf8')).toContain('/opt/gatehop/bin/gatehop.js');
  });

  it("has a unit systemd's own checker accepts against the package's files", () => {
    // A root with the package's files and the host's targets (what the unit is ordered against).
    mkdirSync(join(root, 'usr/lib/systemd/system'), { recursive: true });
    for (const f of readdirSync('/usr/lib/systemd/system').filter((n) => n.endsWith('.target')))
      cpSync(join('/usr/lib/systemd/system', f), join(root, 'usr/lib/systemd/system', f), { verbatimSymlinks: true });
    const r = spawnSync('systemd-analyze', ['verify', `--root=${root}`, 'gatehop.service'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe('');
    const unit = readFileSync(join(root, 'lib/systemd/system/gatehop.service'), 'utf8');
    expect(unit).toContain('ExecStart=/usr/bin/gatehop --data-dir %S/gatehop');
    expect(unit).toContain('DynamicUser=yes');
  });

  it.skipIf(!has('debootstrap') || process.getuid?.() !== 0 || !existsSync(BASE_TARBALL))(
    'installs with apt-get into a clean Debian root, and the installed gatehop serves /ui',
    async () => {
      const clean = join(dir, 'clean');
      const bootstrap = spawnSync(
        'debootstrap',
        ['--variant=minbase', '--include=ca-certificates', `--unpack-tarball=${BASE_TARBALL}`, 'bookworm', clean],
        { encoding: 'utf8' },
      );
      expect(bootstrap.status, bootstrap.stderr.slice(-2000)).toBe(0);
      cpSync(deb, join(clean, 'tmp/gatehop-server.deb'));
      // Only /proc is mounted (Node reads it); /dev is debootstrap's own nodes, never the host's,
      // so removing the root afterwards cannot reach anything of this machine.
      const mounts = [join(clean, 'proc')];
      execFileSync('mount', ['-t', 'proc', 'proc', mounts[0]!]);
      let installed: ChildProcess | null = null;
      try {
        const inRoot = (args: string[]) =>
          spawnSync('/usr/sbin/chroot', [clean, ...args], {
            encoding: 'utf8',
            env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', DEBIAN_FRONTEND: 'noninteractive', HOME: '/root' },
          });
        // No package lists and no network: every dependency is already in the clean root, as on a
        // Debian system, so apt-get installs the file alone.
        const install = inRoot([
          'apt-get',
          'install',
          '-y',
          '-qq',
          '--no-install-recommends',
          '/tmp/gatehop-server.deb',
        ]);
        expect(install.status, install.stderr.slice(-2000)).toBe(0);
        expect(inRoot(['gatehop', '--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
        const admin = await freePort();
        installed = spawn(
          '/usr/sbin/chroot',
          [
            clean,
            'gatehop',
            '--egress',
            'direct',
            '--listen',
            `127.0.0.1:${await freePort()}`,
            '--admin',
            `127.0.0.1:${admin}`,
            '--data-dir',
            '/var/lib/gatehop-test',
            '--log-file',
            'off',
          ],
          { env: { PATH: '/usr/bin:/bin', HOME: '/root' } },
        );
        // A chroot that cannot start says so by exiting (waitForLine rejects with what it printed).
        installed.once('error', () => {});
        await waitForLine(installed, /^gatehop ready: /, 30_000);
        const ui = await apiRequest(admin, 'GET', '/ui/');
        expect(ui.status).toBe(200);
      } finally {
        installed?.kill('SIGKILL');
        for (const m of mounts) spawnSync('umount', ['-l', m]);
      }
    },
    600_000,
  );

  it('runs the core from the package’s folder alone and serves the dashboard at /ui', async () => {
    const admin = await freePort();
    const opt = join(root, 'opt/gatehop');
    core = spawn(
      join(opt, 'node/bin/node'),
      [
        join(opt, 'bin/gatehop.js'),
        '--egress',
        'direct',
        '--listen',
        `127.0.0.1:${await freePort()}`,
        '--admin',
        `127.0.0.1:${admin}`,
        '--data-dir',
        join(dir, 'data'),
        '--log-file',
        'off',
      ],
      { cwd: dir, env: { PATH: '/usr/bin:/bin', HOME: dir } },
    );
    await waitForLine(core, /^gatehop ready: /, 30_000);
    const ui = await apiRequest(admin, 'GET', '/ui/');
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('<div id="root">');
    const v = spawnSync(join(opt, 'node/bin/node'), [join(opt, 'bin/gatehop.js'), '--version'], { encoding: 'utf8' });
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
