/** The first line of every unit Gatehop writes: `service uninstall` removes only a file that has it. */
export const UNIT_MARK = '# Written by `gatehop service install`; `gatehop service uninstall` removes it.';

export interface ServiceUnitOptions {
  /** A user's own service (their data folder, their login), or the machine's (a dynamic user, /var/lib/gatehop). */
  mode: 'user' | 'system';
  /** The script to run (bin/gatehop.js); its shebang finds node on `path`. */
  bin: string;
  /** PATH for the service: the folder of the node that ran the install first, so the same node runs it. */
  path: string;
  /** The daemon's own flags (`--listen`, `--admin`, `--auth-file`, `--config` …). */
  args: readonly string[];
}

/**
 * One argument of ExecStart as systemd reads it (systemd.service, "Command lines"): plain when it
 * is only safe characters, else in double quotes with `\` and `"` escaped; `%` (a specifier) and
 * `$` (a variable) doubled either way.
 */
export function execArg(arg: string): string {
  const quoted = /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `"${arg.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  return quoted.replace(/%/g, '%%').replace(/\$/g, '$$$$');
}

/** `NAME=value` for Environment=: quoted when it holds spaces or quotes, `%` doubled (no `$` expansion there). */
export function envAssignment(name: string, value: string): string {
  const text = `${name}=${value}`.replace(/%/g, '%%');
  return /[\s"\\]/.test(text) ? `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"` : text;
}

/**
 * A systemd unit that runs the headless core with the dashboard (#63). The machine's service runs
 * as a dynamic user with no capability, no new privileges, the file system read-only but its own
 * state folder, no devices, no other users' homes writable, and only the address families the core
 * uses (IP, Unix sockets for its admin socket, netlink to read the interfaces). A user's service
 * keeps NoNewPrivileges only: the rest needs a system manager, and it runs as that user anyway.
 */
export function serviceUnit(o: ServiceUnitOptions): string {
  const system = o.mode === 'system';
  const args = system ? ['--data-dir', '%S/gatehop', ...o.args] : [...o.args];
  // %S is a specifier, not text: it is written as it is, after the other arguments were escaped.
  const exec = [execArg(o.bin), ...args.map((a) => (a === '%S/gatehop' ? a : execArg(a)))].join(' ');
  const lines = [
    UNIT_MARK,
    '[Unit]',
    "Description=Gatehop: VPN Gate's volunteer servers as one local proxy",
    'Documentation=man:systemd.service(5)',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${exec}`,
    `Environment=${envAssignment('PATH', o.path)}`,
    'Restart=on-failure',
    'RestartSec=5',
    'NoNewPrivileges=yes',
  ];
  if (system)
    lines.push(
      'DynamicUser=yes',
      'StateDirectory=gatehop',
      'StateDirectoryMode=0700',
      'UMask=0077',
      'CapabilityBoundingSet=',
      'AmbientCapabilities=',
      'ProtectSystem=strict',
      'ProtectHome=read-only',
      'PrivateTmp=yes',
      'PrivateDevices=yes',
      'ProtectKernelTunables=yes',
      'ProtectKernelModules=yes',
      'ProtectKernelLogs=yes',
      'ProtectControlGroups=yes',
      'ProtectClock=yes',
      'ProtectHostname=yes',
      'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK',
      'RestrictNamespaces=yes',
      'RestrictRealtime=yes',
      'RestrictSUIDSGID=yes',
      'LockPersonality=yes',
      'SystemCallArchitectures=native',
    );
  lines.push('', '[Install]', `WantedBy=${system ? 'multi-user.target' : 'default.target'}`, '');
  return lines.join('\n');
}
