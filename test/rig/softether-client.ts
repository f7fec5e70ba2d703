/**
 * SoftEther's own client (Debian's softether-vpnclient) in the rig's client namespace: the peer
 * Gatehop's SE-VPN is measured against (issue #35). It runs as VPN Gate's client does: a virtual
 * tap adapter, one account to the node's hub, as many TCP connections as asked, UDP acceleration
 * off (Gatehop has none; the figure is SE-VPN over TCP against SE-VPN over TCP).
 *
 * The client keeps its state in /var/lib/softether like the server: it runs in a mount namespace
 * of its own with that directory bound to a temporary one, so it never touches the host's. Its
 * tap adapter takes a fixed address at the top of SecureNAT's subnet (no DHCP client is needed:
 * SecureNAT's NAT serves any address on its network), and only the rig's inet is routed through it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Rig } from './rig.js';

const VPNCLIENT = '/usr/libexec/softether/vpnclient/vpnclient';
const VPNCMD = '/usr/libexec/softether/vpncmd/vpncmd';
/** SecureNAT's default network: 192.168.30.0/24, the gateway at .1, DHCP from .10 to .200. */
const SECURENAT_GATEWAY = '192.168.30.1';
const OUR_ADDRESS = '192.168.30.250/24';
const NIC = 'se0';

export interface SoftEtherClientOptions {
  /** TCP connections in the session (max_connection), 1 to 32. */
  connections: number;
  hub?: string;
}

export class SoftEtherClient {
  private constructor(
    private readonly child: ChildProcess,
    private readonly ns: string,
    private readonly dir: string,
  ) {}

  static async start(rig: Rig, nodeName: string, o: SoftEtherClientOptions): Promise<SoftEtherClient> {
    const ns = rig.state.clientNs;
    if (!ns) throw new Error('rig was brought up without --client');
    const node = rig.node(nodeName);
    const dir = mkdtempSync(join(tmpdir(), 'gh-vpnclient-'));
    for (const d of ['lib', 'log', 'run']) mkdirSync(join(dir, d));
    const dirs = ['/var/lib/softether', '/var/log/softether', '/run/softether'];
    const mounts = dirs.map((d, i) => `mount --bind ${dir}/${['lib', 'log', 'run'][i]} ${d}`).join('; ');
    writeFileSync(join(dir, 'start.sh'), `mkdir -p ${dirs.join(' ')}; ${mounts}; exec ${VPNCLIENT} execsvc\n`);
    // Its own process group: close() signals the client and anything it forked.
    const child = spawn('ip', ['netns', 'exec', ns, 'unshare', '-m', 'sh', join(dir, 'start.sh')], {
      stdio: 'ignore',
      detached: true,
    });
    const c = new SoftEtherClient(child, ns, dir);
    try {
      await c.#until('the client to listen', () => c.#vpncmd(['VersionGet']).includes('Version'), 15_000);
      c.#vpncmd(['NicCreate', NIC]);
      c.#vpncmd([
        'AccountCreate',
        'rig',
        `/SERVER:${node.vpnAddress}:443`,
        `/HUB:${o.hub ?? 'RIG'}`,
        '/USERNAME:vpn',
        `/NICNAME:${NIC}`,
      ]);
      c.#vpncmd(['AccountAnonymousSet', 'rig']);
      c.#vpncmd([
        'AccountDetailSet',
        'rig',
        `/MAXTCP:${o.connections}`,
        '/INTERVAL:1',
        '/TTL:0',
        '/HALF:no',
        '/BRIDGE:no',
        '/MONITOR:no',
        '/NOTRACK:yes',
        '/NOQOS:yes',
        '/DISABLEUDP:yes',
      ]);
      c.#vpncmd(['AccountConnect', 'rig']);
      await c.#until(
        'the session to be established',
        () => /Session Established/i.test(c.#vpncmd(['AccountStatusGet', 'rig'])),
        30_000,
      );
      // Every additional connection up before anything is measured (they come one per /INTERVAL).
      await c.#until(
        `${o.connections} TCP connections`,
        () => c.tcpConnections() >= o.connections,
        10_000 + 2_000 * o.connections,
      );
      const ip = (args: string[]): string => c.#in(['ip', ...args]);
      ip(['addr', 'add', OUR_ADDRESS, 'dev', `vpn_${NIC}`]);
      ip(['link', 'set', `vpn_${NIC}`, 'up']);
      ip(['route', 'replace', rig.state.inetAddress.replace(/\.1$/, '.0/24'), 'via', SECURENAT_GATEWAY]);
      // SecureNAT learns our address from the first frames; wait until a request goes through.
      const probe = rig.url('/bytes/16');
      await c.#until(
        'a request through SecureNAT',
        () => c.curl(['-o', '/dev/null', '-w', '%{http_code}', '--max-time', '2', probe]) === '200',
        20_000,
      );
      return c;
    } catch (err) {
      await c.close();
      throw err;
    }
  }

  /** The session's TCP connections as the client reports them ("Number of TCP Connections"). */
  tcpConnections(): number {
    const m = /Number of TCP Connections\s*\|\s*(\d+)/i.exec(this.#vpncmd(['AccountStatusGet', 'rig']));
    return m ? Number(m[1]) : 0;
  }

  /** curl inside the client namespace; returns the body (or the -w output) as text. */
  curl(args: string[]): string {
    return this.#in(['curl', '-s', '--max-time', '120', ...args]);
  }

  /** CPU seconds of the vpnclient processes (its TLS, its tap I/O), user and system apart. */
  cpuSeconds(): { user: number; system: number } {
    let user = 0;
    let system = 0;
    for (const pid of execFileSync('pgrep', ['-g', String(this.child.pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        user += Number(f[11]) / 100;
        system += Number(f[12]) / 100;
      } catch {
        // a short-lived child (vpncmd) gone between the listing and the read
      }
    }
    return { user, system };
  }

  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
      try {
        process.kill(-this.child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000).unref())]);
      try {
        process.kill(-this.child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }
    // The tap adapter lives in the client namespace, not the client's: remove it with the client.
    try {
      this.#in(['ip', 'link', 'del', `vpn_${NIC}`]);
    } catch {
      // removed with the client
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  #in(cmd: string[]): string {
    return execFileSync('ip', ['netns', 'exec', this.ns, ...cmd], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 1 << 20,
    });
  }

  #vpncmd(args: string[]): string {
    try {
      return this.#in([VPNCMD, 'localhost', '/CLIENT', '/CMD', ...args]);
    } catch (err) {
      const e = err as { stdout?: string; message: string };
      throw new Error(`vpncmd ${args[0]}: ${(e.stdout ?? e.message).slice(-600)}`);
    }
  }

  async #until(what: string, ok: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    for (;;) {
      let last = '';
      try {
        if (ok()) return;
      } catch (err) {
        last = (err as Error).message;
      }
      if (this.child.exitCode !== null) throw new Error(`vpnclient exited ${this.child.exitCode} waiting for ${what}`);
      if (Date.now() > deadline) throw new Error(`vpnclient: ${what} did not happen within ${ms} ms ${last}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
