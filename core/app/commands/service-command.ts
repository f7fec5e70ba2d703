import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, parse } from 'node:path';
import { writeFileAtomic } from '../../common/index.js';
import { gatehopBin } from '../paths.js';
import { serviceUnit, UNIT_MARK } from '../service-unit.js';
import { fail } from './cli-support.js';

export interface ServiceCommandOptions {
  /** The machine's service instead of the user's own. */
  system?: boolean;
  /** Print the unit instead of writing it. */
  print?: boolean;
  /** Where units go (tests); default the user's or the machine's systemd folder. */
  unitDir?: string;
}

/** Where the unit is written: the user's systemd folder, or the machine's (root only). */
function unitPath(o: ServiceCommandOptions): string {
  if (o.unitDir) return join(o.unitDir, 'gatehop.service');
  if (o.system) return '/etc/systemd/system/gatehop.service';
  const config = process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config');
  return join(config, 'systemd', 'user', 'gatehop.service');
}

/**
 * Whether another user (the machine's dynamic user) can run `bin`: every folder above it
 * searchable by others and the file readable by them. A checkout in a private home is not.
 */
function othersCanRun(bin: string): boolean {
  try {
    if ((statSync(bin).mode & 0o004) === 0) return false;
    for (let dir = dirname(bin); ; dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return false;
      if (dir === parse(dir).root) return true;
    }
  } catch {
    return false;
  }
}

/**
 * `gatehop service install [--system] [-- DAEMON FLAGS…]`: a systemd unit that starts the headless
 * core (with the dashboard) at login, or at boot for the machine, and what to run next.
 */
export function serviceInstall(args: readonly string[], o: ServiceCommandOptions): void {
  if (process.platform !== 'linux') fail('a service is a systemd unit: Linux only (see docs/install.md)', 1);
  const bin = gatehopBin();
  if (!existsSync(bin)) fail(`${bin} is missing: build Gatehop first (npm run build)`, 1);
  const mode = o.system ? 'system' : 'user';
  const unit = serviceUnit({ mode, bin, path: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, args });
  if (o.print) {
    process.stdout.write(unit);
    return;
  }
  const path = unitPath(o);
  if (o.system && !o.unitDir) {
    if (process.getuid?.() !== 0)
      fail('the machine’s service is written to /etc/systemd/system: run this as root (sudo)', 1);
    if (!othersCanRun(bin))
      fail(
        `${bin} is not readable by other users (a checkout in a private home?): the machine's service runs as a user of its own; install Gatehop where others can read it (/opt/gatehop), or use the user's service (without --system)`,
        1,
      );
  }
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomic(path, unit, { mode: 0o644 });
  } catch (err) {
    fail(`could not write ${path}: ${(err as Error).message}`, 1);
  }
  const ctl = o.system ? 'systemctl' : 'systemctl --user';
  const lines = [
    `gatehop: wrote ${path}`,
    'next:',
    `  ${ctl} daemon-reload && ${ctl} enable --now gatehop`,
    o.system
      ? '  its data folder is /var/lib/gatehop (the dashboard token: /var/lib/private/gatehop/admin-token)'
      : `  loginctl enable-linger ${process.env.USER ?? '$USER'}   # to start at boot, before you log in`,
    `  ${o.system ? 'journalctl' : 'journalctl --user'} -u gatehop   # its log`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `gatehop service uninstall [--system]`: removes the unit `service install` wrote (and nothing else). */
export function serviceUninstall(o: ServiceCommandOptions): void {
  const path = unitPath(o);
  if (!existsSync(path)) {
    process.stdout.write(`gatehop: no ${path}\n`);
    return;
  }
  if (!readFileSync(path, 'utf8').startsWith(UNIT_MARK)) fail(`${path} was not written by gatehop: left alone`, 1);
  try {
    if (o.system && !o.unitDir) accessSync(dirname(path), constants.W_OK);
    // What `systemctl enable` made (the link that starts it at login or boot) goes with it.
    for (const target of ['default.target.wants', 'multi-user.target.wants']) {
      const link = join(dirname(path), target, 'gatehop.service');
      if (existsSync(link) && realpathSync(link) === realpathSync(path)) unlinkSync(link);
    }
    unlinkSync(path);
  } catch (err) {
    fail(`could not remove ${path}: ${(err as Error).message}`, 1);
  }
  const ctl = o.system ? 'systemctl' : 'systemctl --user';
  process.stdout.write(`gatehop: removed ${path}\nnext:\n  ${ctl} stop gatehop; ${ctl} daemon-reload\n`);
}
