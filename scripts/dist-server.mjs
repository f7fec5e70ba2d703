// `npm run dist:server` (#63): a .deb of the headless core for a box without a desktop: the
// `gatehop` command, the dashboard at /ui, a systemd unit (the machine's, hardened as `gatehop
// service install --system` writes it), and the Node.js runtime this build was made with
// (Debian 12's own nodejs is 18, older than Gatehop needs, and the native modules are built for
// this one), so it depends only on Debian packages. No Electron.
// Usage: node scripts/dist-server.mjs [--out DIR]   (after npm run build)
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const outArg = process.argv.indexOf('--out');
const out = resolve(outArg > 0 ? process.argv[outArg + 1] : join(root, 'release'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
for (const need of ['dist/core/app/index.js', 'dist/renderer/index.html', 'native/build/Release/gatehop_native.node'])
  if (!existsSync(join(root, need))) {
    console.error(`dist:server: ${need} is missing: run npm run build first`);
    process.exit(2);
  }

const stage = mkdtempSync(join(tmpdir(), 'gatehop-deb-'));
try {
  const opt = join(stage, 'opt/gatehop');
  mkdirSync(opt, { recursive: true });
  for (const p of ['bin', 'package.json', 'package-lock.json', 'LICENSE', 'THIRD_PARTY_NOTICES.txt'])
    if (existsSync(join(root, p))) cpSync(join(root, p), join(opt, p), { recursive: true });
  // The core and the dashboard; the desktop shell stays out.
  cpSync(join(root, 'dist/core'), join(opt, 'dist/core'), { recursive: true });
  cpSync(join(root, 'dist/renderer'), join(opt, 'dist/renderer'), { recursive: true });
  mkdirSync(join(opt, 'native/build/Release'), { recursive: true });
  for (const f of ['gatehop_native.node', 'gatehop-capture'])
    if (existsSync(join(root, 'native/build/Release', f)))
      cpSync(join(root, 'native/build/Release', f), join(opt, 'native/build/Release', f));
  // The runtime dependencies only: a copy of node_modules with the development ones pruned (no
  // download, the native modules as built here).
  cpSync(join(root, 'node_modules'), join(opt, 'node_modules'), { recursive: true, verbatimSymlinks: true });
  execFileSync('npm', ['prune', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: opt,
    stdio: 'ignore',
  });
  rmSync(join(opt, 'package-lock.json'), { force: true });
  // The runtime.
  mkdirSync(join(opt, 'node/bin'), { recursive: true });
  cpSync(process.execPath, join(opt, 'node/bin/node'));
  // The command, with the core's environment and V8 flags (bin/gatehop.js's shebang carries them).
  mkdirSync(join(stage, 'usr/bin'), { recursive: true });
  writeFileSync(
    join(stage, 'usr/bin/gatehop'),
    '#!/bin/sh\n# Gatehop (the headless core): the Node.js runtime it was built with, and its flags.\n' +
      'MALLOC_ARENA_MAX=1 exec /opt/gatehop/node/bin/node --max-semi-space-size=8 /opt/gatehop/bin/gatehop.js "$@"\n',
  );
  chmodSync(join(stage, 'usr/bin/gatehop'), 0o755);
  // The machine's service, as `gatehop service install --system` writes it, for this layout.
  const { serviceUnit } = await import(join(root, 'dist/core/app/service-unit.js'));
  mkdirSync(join(stage, 'lib/systemd/system'), { recursive: true });
  writeFileSync(
    join(stage, 'lib/systemd/system/gatehop.service'),
    serviceUnit({ mode: 'system', bin: '/usr/bin/gatehop', path: '/opt/gatehop/node/bin:/usr/bin:/bin', args: [] }),
  );
  // The package's own files.
  mkdirSync(join(stage, 'DEBIAN'));
  const size = Number(execFileSync('du', ['-sk', '--exclude=DEBIAN', stage], { encoding: 'utf8' }).split('\t')[0]);
  writeFileSync(
    join(stage, 'DEBIAN/control'),
    [
      'Package: gatehop-server',
      `Version: ${pkg.version}`,
      `Architecture: ${arch}`,
      'Maintainer: Gatehop <gatehop@users.noreply.github.com>',
      'Depends: libc6 (>= 2.28), libstdc++6 (>= 8), libgcc-s1, ca-certificates',
      `Installed-Size: ${size}`,
      'Section: net',
      'Priority: optional',
      'Homepage: https://github.com/gatehop/gatehop',
      "Description: VPN Gate's volunteer servers as one local proxy (headless)",
      ' Gatehop without the desktop app: the gatehop command, its dashboard at /ui on the admin',
      ' port, and a hardened systemd unit (gatehop.service). Share it with the phones of the',
      ' house with "gatehop share". Carries its own Node.js runtime.',
      '',
    ].join('\n'),
  );
  const script = (name, body) => {
    writeFileSync(join(stage, 'DEBIAN', name), `#!/bin/sh\nset -e\n${body}`);
    chmodSync(join(stage, 'DEBIAN', name), 0o755);
  };
  script(
    'postinst',
    'if [ "$1" = configure ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi\n' +
      'echo "gatehop: installed. Start it at boot: systemctl enable --now gatehop (dashboard: http://127.0.0.1:9090/ui/)"\n',
  );
  script('prerm', 'if [ "$1" = remove ] && [ -d /run/systemd/system ]; then systemctl stop gatehop || true; fi\n');
  script('postrm', 'if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi\n');
  mkdirSync(out, { recursive: true });
  const deb = join(out, `gatehop-server_${pkg.version}_${arch}.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z6', '--build', stage, deb], { stdio: 'ignore' });
  console.log(deb);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
