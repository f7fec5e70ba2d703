import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { captureHelperPath, ErrorCodes, GatehopError } from '../common/index.js';
import type { TunUpRequest } from './tun-messages.js';

/**
 * System-wide TUN mode (Linux, `sudo gatehop --tun`): every program's traffic, whatever it reads
 * of proxy settings, goes through a TUN device into the capture gateway, by policy routing:
 *
 *   pref 26470  fwmark 0x6768 lookup main    Gatehop's own packets: the real network
 *   pref 26471  iif lo lookup 26472          everything else this host sends: table 26472
 *   table 26472 default dev <tun>            (IPv4 and IPv6; the gateway refuses IPv6 at once)
 *
 * The numbers are Gatehop's own ("gh", 0x6768), not sing-box's and mihomo's defaults (table 2022,
 * rules from 9000), which Gatehop used before and whose rules `tun off` then deleted (#59); and
 * `tun off` deletes only rules that are Gatehop's to the letter (preference, selector and table).
 *
 * Root does only this file's part (#59): a small supervisor (tun-supervisor.ts) makes the device
 * (by the helper), nftables, the routes and the rules, and runs the core as the user who asked
 * (tun-core.ts asks it over IPC). Every parser of node traffic, lists and rule sets, the admin API
 * and the programs it starts run as that user.
 *
 * Gatehop's own packets are told apart by their socket's group: the core runs with a group of its
 * own (`--tun-gid`) from its first instruction, and an nftables route chain marks what that group's
 * sockets send, so they are routed again by the real table, and (since their source was chosen by
 * the TUN route) masqueraded to the interface they leave by. Nothing in the core binds or marks
 * sockets itself, and the tunnels to nodes never enter the TUN. Replies to connections that came in
 * from a real interface are marked the same way (conntrack), so a server on this host still answers.
 * The `iif lo` rule also keeps the kernel's reverse-path check satisfied for what comes back out of
 * the TUN.
 *
 * Strict mode adds an output filter with policy drop: loopback, the TUN, Gatehop's own packets and
 * the networks the user allows pass; so when Gatehop dies, its TUN and routes go with it and the
 * rest of the host is blocked rather than sent out directly, until `gatehop tun off` or the next
 * start. A clean stop removes everything (the user turned TUN mode off).
 */

export const TUN_TABLE = 26472;
export const TUN_MARK = 0x6768;
const PREF_MAIN = 26470;
const PREF_TUN = 26471;

/** Gatehop's two rules, each as `ip rule` writes and deletes it: by its whole selector, never its preference alone. */
const RULES: ReadonlyArray<readonly string[]> = [
  ['pref', String(PREF_MAIN), 'fwmark', String(TUN_MARK), 'lookup', 'main'],
  ['pref', String(PREF_TUN), 'iif', 'lo', 'lookup', String(TUN_TABLE)],
];

export interface TunModeOptions {
  /** The device's name (also names the nftables table). */
  name: string;
  strict: boolean;
  /** The group Gatehop's sockets are known by. */
  gid: number;
  /** Networks strict mode lets through directly (the LAN's printer, …). */
  allow: string[];
}

/** The group for TUN mode: `given` (a number or a name), else gatehop-tun, made as a system group if missing. */
export function tunGroupId(given?: string): number {
  const name = given ?? 'gatehop-tun';
  if (/^\d+$/.test(name)) return Number(name);
  const lookup = (): number | null => {
    try {
      return Number(execFileSync('getent', ['group', name], { encoding: 'utf8' }).split(':')[2]);
    } catch {
      return null;
    }
  };
  const found = lookup();
  if (found !== null) return found;
  if (given !== undefined) throw new GatehopError(ErrorCodes.CONFIG_INVALID, `--tun-gid: no group ${name}`);
  run('groupadd', ['--system', name]);
  const made = lookup();
  if (made === null) throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, `cannot make the group ${name}`);
  return made;
}

export function nftTable(name: string): string {
  return `gatehop_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/** The nftables table for TUN mode (the mark, the masquerade, and in strict mode the drop). */
export function nftRuleset(o: TunModeOptions, tunSubnet: string): string {
  const v4 = o.allow.filter((c) => !c.includes(':'));
  const v6 = o.allow.filter((c) => c.includes(':'));
  const strict = o.strict
    ? [
        '  chain gatehop_strict {',
        '    type filter hook output priority filter; policy drop;',
        '    oifname "lo" accept',
        `    oifname "${o.name}" accept`,
        `    meta mark ${TUN_MARK} accept`,
        ...(v4.length ? [`    ip daddr { ${v4.join(', ')} } accept`] : []),
        ...(v6.length ? [`    ip6 daddr { ${v6.join(', ')} } accept`] : []),
        '  }',
      ]
    : [];
  return [
    `table inet ${nftTable(o.name)} {`,
    // Connections that came in from a real interface (sshd, the admin API on the LAN, a DHCP
    // answer) are marked too, so their replies leave the way they came instead of into the TUN.
    '  chain gatehop_incoming {',
    '    type filter hook input priority mangle; policy accept;',
    `    iifname != "${o.name}" ct state new ct mark set ${TUN_MARK}`,
    '  }',
    '  chain gatehop_mark {',
    '    type route hook output priority mangle; policy accept;',
    `    meta skgid ${o.gid} meta mark set ${TUN_MARK}`,
    `    ct mark ${TUN_MARK} meta mark set ${TUN_MARK}`,
    '  }',
    '  chain gatehop_masquerade {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    `    meta mark ${TUN_MARK} oifname != "${o.name}" ip saddr ${tunSubnet} masquerade`,
    '  }',
    ...strict,
    '}',
    '',
  ].join('\n');
}

function run(cmd: string, args: string[], input?: string): void {
  execFileSync(cmd, args, { stdio: ['pipe', 'ignore', 'pipe'], ...(input !== undefined ? { input } : {}) });
}

function quietly(cmd: string, args: string[]): boolean {
  try {
    run(cmd, args);
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes what TUN mode set in this network namespace (its two rules, its table, its nftables
 * table), and nothing of another program's (a rule at the same preference with another selector,
 * another table). Idempotent. `keepBlock`: the nftables table stays (strict mode's drop, after the
 * core died without being asked to stop: the kill switch holds until `tun off` or the next start).
 */
export function tunOff(name: string, o: { keepBlock?: boolean } = {}): { removed: string[] } {
  const removed: string[] = [];
  for (const family of ['-4', '-6']) {
    for (const rule of [...RULES].reverse()) {
      while (quietly('ip', [family, 'rule', 'del', ...rule])) removed.push(`ip ${family} rule ${rule[1]}`);
    }
    if (quietly('ip', [family, 'route', 'flush', 'table', String(TUN_TABLE)]))
      removed.push(`ip ${family} table ${TUN_TABLE}`);
  }
  if (!o.keepBlock && quietly('nft', ['delete', 'table', 'inet', nftTable(name)]))
    removed.push(`nft inet ${nftTable(name)}`);
  return { removed };
}

/** The device and the routing for one run of TUN mode, held by the supervisor (root). */
export interface RaisedTun {
  /** Called once if the helper exits before lower(): the device and its routes are gone. */
  onLost(cb: (code: number | null, stderr: string) => void): void;
  /** The helper stopped, then the routes, rules and nftables removed (keepBlock: tunOff's). */
  lower(o?: { keepBlock?: boolean }): Promise<void>;
}

/**
 * The TUN up (the helper, relaying to the core's capture socket as the core's user), then
 * nftables, the routes and the rules; undone in reverse on any failure. Root's part of TUN mode.
 */
export async function raiseTun(
  req: TunUpRequest,
  o: TunModeOptions,
  user: { uid: number; gid: number },
): Promise<RaisedTun> {
  const helper = captureHelperPath();
  if (!helper) throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, 'the capture helper is not built');
  const child: ChildProcess = spawn(helper, ['--tun', o.name, req.socketPath, req.tunAddress, String(req.mtu)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      GATEHOP_CAPTURE_KEY: req.key,
      GATEHOP_TUN_UID: String(user.uid),
      GATEHOP_TUN_GID: String(user.gid),
    },
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  let lowering = false;
  let lost: ((code: number | null, stderr: string) => void) | null = null;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, 'the TUN did not come up in 10 s'));
    }, 10_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('ready\n')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, `the TUN helper exited (${code}): ${stderr.trim()}`));
    });
  });
  const subnet = `${req.tunAddress.replace(/\.\d+$/, '.0')}/30`;
  try {
    run('nft', ['-f', '-'], nftRuleset(o, subnet));
    run('ip', ['-4', 'route', 'replace', 'default', 'dev', o.name, 'table', String(TUN_TABLE)]);
    for (const rule of RULES) run('ip', ['-4', 'rule', 'add', ...rule]);
    // IPv6 into the TUN too (the gateway refuses it at once); a host without IPv6 has nothing to route.
    if (quietly('ip', ['-6', 'route', 'replace', 'default', 'dev', o.name, 'table', String(TUN_TABLE)])) {
      for (const rule of RULES) run('ip', ['-6', 'rule', 'add', ...rule]);
    }
  } catch (err) {
    child.kill('SIGTERM');
    tunOff(o.name);
    const why = (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
    throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, `TUN mode could not set its routes: ${why}`);
  }
  // The helper's end is its 'exit' event, which never rejects.
  child.once('exit', (code) => {
    if (!lowering) lost?.(code, stderr.trim());
  });
  return {
    onLost: (cb) => (lost = cb),
    lower: async (l = {}) => {
      if (lowering) return;
      lowering = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      tunOff(o.name, l);
    },
  };
}
