import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ErrorCodes, GatehopError } from '../common/index.js';
import { gnomeBackend } from './gnome.js';
import { kdeBackend } from './kde.js';
import { macosBackend } from './macos.js';
import { exportLines, type ProxyBackend, type ProxyTarget, type Runner } from './types.js';
import { windowsBackend } from './windows.js';

/** Desktops that keep their proxy in GNOME's org.gnome.system.proxy. */
const GNOME_LIKE = [
  'gnome',
  'unity',
  'cinnamon',
  'budgie',
  'pantheon',
  'x-cinnamon',
  'mate',
  'xfce',
  'lxde',
  'deepin',
  'ubuntu',
  'pop',
  'cosmic',
  'gnome-flashback',
  'gnome-classic',
];

export interface DetectEnv {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  /** Whether a program is on PATH (injectable for tests). */
  has?: (program: string) => boolean;
}

function onPath(env: NodeJS.ProcessEnv): (program: string) => boolean {
  return (program) => (env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, program)));
}

/**
 * The backend for this platform and desktop: Windows and macOS by platform; on Linux by
 * XDG_CURRENT_DESKTOP (KDE → kwriteconfig6 on Plasma 6, else kwriteconfig5; the GNOME family →
 * gsettings). Anything else is GH_ERR_SYSPROXY_UNSUPPORTED with the export lines to use by hand.
 */
export function detectBackend(
  run: Runner,
  target: Pick<ProxyTarget, 'host' | 'port' | 'bypass'>,
  where: DetectEnv = { platform: process.platform, env: process.env },
): ProxyBackend {
  const has = where.has ?? onPath(where.env);
  if (where.platform === 'win32') return windowsBackend(run);
  if (where.platform === 'darwin') return macosBackend(run);
  const desktops = (where.env.XDG_CURRENT_DESKTOP ?? '').toLowerCase().split(':').filter(Boolean);
  if (desktops.includes('kde')) {
    const six = where.env.KDE_SESSION_VERSION === '6' || (!has('kwriteconfig5') && has('kwriteconfig6'));
    return kdeBackend(
      run,
      six ? { read: 'kreadconfig6', write: 'kwriteconfig6' } : { read: 'kreadconfig5', write: 'kwriteconfig5' },
    );
  }
  if (desktops.some((d) => GNOME_LIKE.includes(d))) return gnomeBackend(run);
  const desktop = where.env.XDG_CURRENT_DESKTOP
    ? `the ${where.env.XDG_CURRENT_DESKTOP} desktop`
    : `${where.platform} without a known desktop (XDG_CURRENT_DESKTOP is not set)`;
  throw new GatehopError(
    ErrorCodes.SYSPROXY_UNSUPPORTED,
    `setting the system proxy is not supported on ${desktop}; set it in your applications, or in a shell:\n  ${exportLines(target).join('\n  ')}`,
  );
}
