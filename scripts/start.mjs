// `npm start`: the tray app where Electron's binary and a display exist; otherwise the headless
// core (VPN Gate, the dashboard at /ui/) with one line saying why and how to get the desktop app.
// GATEHOP_ELECTRON names another Electron binary (a test's stand-in, or one installed elsewhere);
// GATEHOP_NATIVE_CACHE and GATEHOP_ELECTRON_HEADERS move where the Electron build of SQLite is
// kept and where Electron's headers come from.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_ENV } from './core-env.mjs';
import { CORE_V8_FLAGS } from './core-v8-flags.mjs';
import { electronVersion, ensureNativeBinding } from './electron-native.mjs';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);

function electronBinary() {
  if (process.env.GATEHOP_ELECTRON)
    return existsSync(process.env.GATEHOP_ELECTRON) ? process.env.GATEHOP_ELECTRON : null;
  try {
    const dir = dirname(require.resolve('electron/package.json'));
    const rel = existsSync(join(dir, 'path.txt')) ? readFileSync(join(dir, 'path.txt'), 'utf8').trim() : null;
    const bin = rel ? join(dir, 'dist', rel) : null;
    return bin && existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

function headless(why) {
  process.stderr.write(
    `gatehop: starting the headless core with the dashboard, since ${why}; for the tray app run \`npm start\` on a desktop, or install a package from \`npm run dist\`.\n`,
  );
  return spawn(process.execPath, [...CORE_V8_FLAGS, join(root, 'bin/gatehop.js'), ...args], {
    stdio: 'inherit',
    env: { ...process.env, ...CORE_ENV },
  });
}

const hasDisplay = process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
const bin = electronBinary();
let child;
if (!bin)
  child = headless(
    "Electron's binary is not installed (`npx install-electron` fetches it, from $ELECTRON_MIRROR when set)",
  );
else if (!hasDisplay) child = headless('there is no display (DISPLAY / WAYLAND_DISPLAY is not set)');
else {
  // The store's SQLite addon, built for this Electron (once; kept in node_modules/.cache).
  let binding = null;
  try {
    binding = await ensureNativeBinding({
      root,
      runtime: 'electron',
      target: electronVersion(root),
      cacheDir: process.env.GATEHOP_NATIVE_CACHE || undefined,
      headersUrl: process.env.GATEHOP_ELECTRON_HEADERS || undefined,
    });
  } catch (err) {
    child = headless(`better-sqlite3 could not be built for Electron (${err.message})`);
  }
  if (binding)
    child = spawn(bin, [`--js-flags=${CORE_V8_FLAGS.join(' ')}`, root, ...args], {
      stdio: 'inherit',
      env: { ...process.env, ...CORE_ENV, GATEHOP_SQLITE_BINDING: binding },
    });
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
