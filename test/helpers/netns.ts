import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * The kernel here speaks IPv6 (a machine booted with ipv6.disable=1 has no /proc/sys/net/ipv6, one
 * with it switched off says so): the IPv6 parts of a test run only where an address can be added.
 */
export const hasIpv6 = ((): boolean => {
  try {
    return readFileSync('/proc/sys/net/ipv6/conf/default/disable_ipv6', 'utf8').trim() === '0';
  } catch {
    return false;
  }
})();

/** A network namespace with a unique name, removed (with its processes) by close(), also at exit. */
export class NetNs {
  readonly name = `ghns-${process.pid}-${randomBytes(3).toString('hex')}`;
  readonly #children = new Set<ChildProcess>();
  #closed = false;
  readonly #onExit = (): void => this.close();

  constructor() {
    execFileSync('ip', ['netns', 'add', this.name]);
    process.once('exit', this.#onExit);
    this.exec(['ip', 'link', 'set', 'lo', 'up']);
  }

  exec(cmd: string[]): string {
    return execFileSync('ip', ['netns', 'exec', this.name, ...cmd], { encoding: 'utf8' });
  }

  spawn(cmd: string[]): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', this.name, ...cmd], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    return child;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    process.off('exit', this.#onExit);
    for (const c of this.#children) c.kill('SIGKILL');
    // Anything still running in the namespace (a child's children) goes with it.
    try {
      const pids = execFileSync('ip', ['netns', 'pids', this.name], { encoding: 'utf8' }).split(/\s+/).filter(Boolean);
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    } catch {
      /* namespace already gone */
    }
    try {
      execFileSync('ip', ['netns', 'del', this.name], { stdio: 'ignore' });
    } catch {
      /* already gone */
    }
  }
}

const GATEHOP_BIN = resolve(import.meta.dirname, '../../bin/gatehop.js');

/**
 * The built CLI (`npm run build`) run as a user would in `ns`, with the direct egress (these tests
 * are about the machine's networks, not nodes): resolves once it says it is ready. `admin` puts the
 * admin API on 127.0.0.1:9090 in the namespace; `logFile` is a path or 'off'; `args` go last.
 */
export async function coreInNamespace(
  ns: NetNs,
  dataDir: string,
  opts: { admin?: boolean; logFile?: string; args?: string[] } = {},
): Promise<ChildProcess> {
  const core = ns.spawn([
    process.execPath,
    GATEHOP_BIN,
    '--egress',
    'direct',
    ...(opts.admin ? ['--admin', '127.0.0.1:9090'] : []),
    '--data-dir',
    dataDir,
    '--log-file',
    opts.logFile ?? 'off',
    ...(opts.args ?? []),
  ]);
  await waitForLine(core, /^gatehop ready: /, 30_000);
  return core;
}

/** Resolves when `child` prints a line matching `re` on stdout. */
export function waitForLine(child: ChildProcess, re: RegExp, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(
      () => reject(new Error(`no line matching ${re} within ${timeoutMs} ms: ${buf}`)),
      timeoutMs,
    );
    const onData = (c: Buffer): void => {
      buf += c.toString();
      const line = buf.split('\n').find((l) => re.test(l));
      if (line) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(line);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before printing ${re}: ${buf}`));
    });
  });
}

/**
 * Two namespaces joined by a veth on `${subnet}.0/24`: `a` at `${subnet}.1`, `b` at `${subnet}.2`
 * (a computer and a phone on one LAN). close() on either removes the link.
 */
export function lanPair(subnet: string): { a: NetNs; b: NetNs; aDev: string; bDev: string } {
  const a = new NetNs();
  const b = new NetNs();
  const aDev = `ghv${randomBytes(4).toString('hex')}`.slice(0, 15);
  const bDev = `${aDev.slice(0, 14)}p`;
  a.exec(['ip', 'link', 'add', aDev, 'type', 'veth', 'peer', 'name', bDev, 'netns', b.name]);
  a.exec(['ip', 'addr', 'add', `${subnet}.1/24`, 'dev', aDev]);
  a.exec(['ip', 'link', 'set', aDev, 'up']);
  b.exec(['ip', 'addr', 'add', `${subnet}.2/24`, 'dev', bDev]);
  b.exec(['ip', 'link', 'set', bDev, 'up']);
  return { a, b, aDev, bDev };
}

/**
 * A "phone" on a LAN with this machine itself: a new namespace joined to this one by a veth on
 * `${subnet}.0/24`, this machine at `${subnet}.1`, the phone at `${subnet}.2` (for a core that runs
 * here, beside the rig). close() on the namespace removes the link with it.
 */
export function phoneOnThisMachine(subnet: string): NetNs {
  const phone = new NetNs();
  const host = `ghp${randomBytes(4).toString('hex')}`.slice(0, 14);
  execFileSync('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', `${host}p`, 'netns', phone.name]);
  execFileSync('ip', ['addr', 'add', `${subnet}.1/24`, 'dev', host]);
  execFileSync('ip', ['link', 'set', host, 'up']);
  phone.exec(['ip', 'addr', 'add', `${subnet}.2/24`, 'dev', `${host}p`]);
  phone.exec(['ip', 'link', 'set', `${host}p`, 'up']);
  return phone;
}

/**
 * Two ways out of `ns`, as a laptop has at home and at a café: a veth per name in `nets` ("home0":
 * "10.61.1" gets 10.61.1.1/24), neither end going anywhere. Returns a function that moves the
 * default route to one of them: what "this network" is (core/common networkKeyOf) changes with it.
 */
export function twoWaysOut<K extends string>(ns: NetNs, nets: Record<K, string>): (iface: K) => void {
  for (const [iface, net] of Object.entries(nets) as Array<[K, string]>) {
    ns.exec(['ip', 'link', 'add', iface, 'type', 'veth', 'peer', 'name', `${iface}p`]);
    ns.exec(['ip', 'addr', 'add', `${net}.1/24`, 'dev', iface]);
    ns.exec(['ip', 'link', 'set', iface, 'up']);
    ns.exec(['ip', 'link', 'set', `${iface}p`, 'up']);
  }
  return (iface) => void ns.exec(['ip', 'route', 'replace', 'default', 'via', `${nets[iface]}.254`, 'dev', iface]);
}
