// `npm start`: the tray app where Electron's binary and a display exist; otherwise the headless
// core (VPN Gate, the dashboard at /ui/) with one line saying why and how to get the desktop app.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);

function electronBinary() {
  try {
    const dir = dirname(require.resolve('electron/package.json'));
    const rel = existsSync(join(dir, 'path.txt')) ? readFileSync(join(dir, 'path.txt'), 'utf8').trim() : null;
    const bin = rel ? join(dir, 'dist', rel) : null;
    return bin && existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

const hasDisplay = process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
const bin = electronBinary();
let child;
if (bin && hasDisplay) {
  child = spawn(bin, ['.', ...args], { stdio: 'inherit' });
} else {
  const why = !bin
    ? "Electron's binary is not installed (it downloads on `npm install` where the network allows: `npx electron --version` fetches it)"
    : 'there is no display (DISPLAY / WAYLAND_DISPLAY is not set)';
  process.stderr.write(`gatehop: starting the headless core with the dashboard, since ${why}; for the tray app run \`npm start\` on a desktop, or install a package from \`npm run dist\`.\n`);
  child = spawn(process.execPath, ['bin/gatehop.js', ...args], { stdio: 'inherit' });
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
