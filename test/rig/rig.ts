/**
 * The test-side handle on a rig (test/rig/up): addresses, profiles, the API URL and fault controls.
 *   const r = await Rig.up({ nodes: 2, openvpn: ['gcm-udp'] });  ...  r.down();
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { silentLogger } from '../../core/common/index.js';
import { TunnelEgress } from '../../core/egress/index.js';
import { parseProfile, TunnelClient } from '../../core/ovpn/index.js';
import { openvpnUdpResetMs } from '../../core/selector/index.js';
import { liveRecordedPid, recordProcess } from './pid-files.js';
import { installPublicRoot } from '../helpers/pki.js';

const RIG_DIR = import.meta.dirname;

export interface RigNode {
  name: string;
  id: string;
  kind: 'softether' | 'openvpn';
  variant?: string;
  ns: string;
  vpnAddress: string;
  port: number;
  exitAddress: string;
  profiles: { tcp?: string; udp?: string };
  listProfile: string;
  /** SoftEther nodes: the DDNS name its certificate is for, and whether it answers SSTP (the patched binary). */
  ddns?: string;
  sstp?: boolean;
}

export interface RigState {
  prefix: string;
  dir: string;
  lan: string;
  rootAddress: string;
  inetAddress: string;
  inetNs: string;
  clientNs: string | null;
  bigBytes: number;
  bigSha256: string;
  dnsNames: Record<string, string>;
  nfqDelay: string;
  /** The rig's CA: it signed every node's certificate (SSTP verifies by DDNS name, OpenVPN by this CA). */
  caFile: string;
  /**
   * A stand-in for the public roots (#43): install it as the process's extra roots (installPublicRoot)
   * as ISRG Root X1 is for real. It signed the inet host's HTTPS names (tls.rig.test, doh.rig.test).
   */
  publicRootFile: string;
  publicRootKey: string;
  nodes: RigNode[];
  /** The list over HTTPS (a certificate from the rig's public root), as www.vpngate.net serves it. */
  apiUrl: string;
  /** The same list in clear, as mirrors serve theirs (#59: a private CA on it is not trusted). */
  apiPlainUrl: string;
  apiControlUrl: string;
}

export interface RigOptions {
  nodes?: number;
  openvpn?: string[];
  client?: boolean;
  bigMib?: number;
  /**
   * SoftEther nodes that tamper (#43), by id: `dns` (its resolver lies for files.test and answers
   * names under nx.test), `http` (its outgoing HTTP gets a script injected), `tls` (its outgoing
   * TLS to the inet host meets its own CA).
   */
  dishonest?: Record<string, 'dns' | 'http' | 'tls'>;
}

export interface Impairment {
  /** Added to each direction. */
  delayMs?: number;
  jitterMs?: number;
  loss?: number;
  /** A path MTU black hole: IP packets longer than this vanish, both ways, with no ICMP (#60). */
  maxPacketBytes?: number;
}

/** Drop rules a test added: call to lift them; `packets()` counts what they dropped so far. */
export type DropRules = (() => void) & { packets(): number };

/** A host a test adds to the rig (a site, a proxy): its own namespace, reachable from the root namespace, optionally on the lan. */
export interface RigHost {
  ns: string;
  /** Its address on the link to the root namespace (the root side is `rootSide`). */
  address: string;
  rootSide: string;
  /** The link's interface in the root namespace, and in the host's. */
  rootDev: string;
  dev: string;
  /** More addresses on that link (sites that answer on several addresses). */
  extra: string[];
  /** Its address on the lan (where the nodes are), when it has one. */
  lanAddress: string | null;
}

/** A VPN Gate site look-alike (test/rig/services/vpngate-api.mjs) running somewhere on the rig. */
export interface RigSite {
  origin: string;
  listUrl: string;
  stop(): void;
}

/** Rigs not yet taken down, for a process ended by a signal (no 'exit' event then). */
const liveRigs = new Set<Rig>();

/**
 * SIGTERM or SIGINT (a timeout(1), a killed bench, vitest ending a worker) ends a process without
 * its 'exit' event: take every live rig down, then let the signal end the process as it would have.
 */
function onSignal(signal: NodeJS.Signals): void {
  for (const rig of [...liveRigs]) rig.down();
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  process.kill(process.pid, signal);
}

export class Rig {
  readonly #onExit = (): void => this.down();
  #hosts = 0;
  #restoreRoots: (() => void) | null = null;

  private constructor(readonly state: RigState) {
    // A test process that dies without its afterAll still takes its rig down.
    process.once('exit', this.#onExit);
    if (liveRigs.size === 0) {
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    }
    liveRigs.add(this);
  }

  static async up(opts: RigOptions = {}): Promise<Rig> {
    const args = ['--nodes', String(opts.nodes ?? 2), '--openvpn', (opts.openvpn ?? []).join(',')];
    if (opts.client) args.push('--client');
    if (opts.bigMib) args.push('--big-mib', String(opts.bigMib));
    if (opts.dishonest)
      args.push(
        '--dishonest',
        Object.entries(opts.dishonest)
          .map(([id, mode]) => `${id}=${mode}`)
          .join(','),
      );
    const out = await new Promise<string>((resolvePromise, reject) => {
      const child = spawn('bash', [resolve(RIG_DIR, 'up'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
      child.on('exit', (code) =>
        code === 0 ? resolvePromise(stdout) : reject(new Error(`rig up failed (${code}): ${stderr}`)),
      );
    });
    const statePath = out.trim().split('\n').pop()!;
    const rig = new Rig(JSON.parse(readFileSync(statePath, 'utf8')) as RigState);
    // The rig is a world with one public CA, as the real one has ISRG Root X1 and its peers: this
    // process (and the Gatehop it starts, which inherits the environment) trusts it the way Node
    // documents adding roots. Its list is served over HTTPS under it (rig.state.apiUrl).
    rig.#restoreRoots = installPublicRoot({ certFile: rig.state.publicRootFile });
    // `up` waits for listening ports, which is not serving: SoftEther opens its UDP listener after
    // its TCP one (and answers on neither until its hub is loaded). A suite that probes a node
    // right away must not depend on the machine being warm, so wait for a real handshake on every
    // profile of every node, as restart() does.
    try {
      await Promise.all(rig.state.nodes.map((n) => rig.#waitServing(n, 60_000)));
    } catch (err) {
      rig.down();
      throw err;
    }
    return rig;
  }

  /** Removes everything this rig made. Idempotent. */
  down(): void {
    process.off('exit', this.#onExit);
    this.#restoreRoots?.();
    this.#restoreRoots = null;
    liveRigs.delete(this);
    if (liveRigs.size === 0) {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
    execFileSync('bash', [resolve(RIG_DIR, 'down'), this.state.prefix], { stdio: 'ignore' });
  }

  node(name: string): RigNode {
    const n = this.state.nodes.find((x) => x.name === name || x.id === name);
    if (!n) throw new Error(`no rig node ${name}`);
    return n;
  }

  get softether(): RigNode[] {
    return this.state.nodes.filter((n) => n.kind === 'softether');
  }

  get openvpn(): RigNode[] {
    return this.state.nodes.filter((n) => n.kind === 'openvpn');
  }

  /** http://<inet>/path: reachable only through a tunnel. */
  url(path: string): string {
    return `http://${this.state.inetAddress}${path}`;
  }

  // ---- faults ----

  /** Delay, jitter and loss on the node's VPN traffic, both directions (NFQUEUE + nfq-delay). */
  impair(nodeName: string, imp: Impairment): void {
    const n = this.node(nodeName);
    this.clearImpairment(nodeName);
    const q = '7';
    for (const [chain, dir] of [
      ['PREROUTING', '-i'],
      ['POSTROUTING', '-o'],
    ] as const) {
      this.#ns(n.ns, [
        'iptables',
        '-t',
        'mangle',
        '-A',
        chain,
        dir,
        'eth0',
        '-j',
        'NFQUEUE',
        '--queue-num',
        q,
        '--queue-bypass',
      ]);
    }
    const child = spawn(
      'ip',
      [
        'netns',
        'exec',
        n.ns,
        this.state.nfqDelay,
        q,
        String(imp.delayMs ?? 0),
        String(imp.jitterMs ?? 0),
        String(imp.loss ?? 0),
        '1',
        ...(imp.maxPacketBytes ? [String(imp.maxPacketBytes)] : []),
      ],
      {
        detached: true,
        stdio: 'ignore',
      },
    );
    child.unref();
    recordProcess(resolve(this.state.dir, 'pids', `nfq-${n.id}`), child.pid);
  }

  clearImpairment(nodeName: string): void {
    const n = this.node(nodeName);
    this.#ns(n.ns, ['iptables', '-t', 'mangle', '-F']);
    const pid = liveRecordedPid(resolve(this.state.dir, 'pids', `nfq-${n.id}`));
    if (pid !== null) process.kill(pid, 'SIGKILL');
  }

  /** Token-bucket rate limit on the node's lan side, both directions. */
  rateLimit(nodeName: string, kbit: number): void {
    const n = this.node(nodeName);
    const tbf = ['tbf', 'rate', `${kbit}kbit`, 'burst', '32kbit', 'latency', '400ms'];
    this.#ns(n.ns, ['tc', 'qdisc', 'replace', 'dev', 'eth0', 'root', ...tbf]);
  }

  clearRateLimit(nodeName: string): void {
    this.#ns(this.node(nodeName).ns, ['tc', 'qdisc', 'del', 'dev', 'eth0', 'root'], true);
  }

  /** The inet host's /health answers `status` to requests leaving by this node (null: 200 again). */
  failHealth(nodeName: string, status: number | null): void {
    const file = resolve(this.state.dir, 'inet-health.json');
    let map: Record<string, number> = {};
    try {
      map = JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
    } catch {
      /* none yet */
    }
    const exit = this.node(nodeName).exitAddress;
    if (status === null) delete map[exit];
    else map[exit] = status;
    writeFileSync(`${file}.tmp`, JSON.stringify(map));
    renameSync(`${file}.tmp`, file); // the server never reads half a file
  }

  /**
   * The node's way out disappears (its exit side drops everything): the tunnel to it stays up, but
   * nothing it is asked to reach answers. Returns a function that puts it back.
   */
  cutExit(nodeName: string): () => void {
    const n = this.node(nodeName);
    this.#ns(n.ns, ['iptables', '-I', 'OUTPUT', '-o', 'eth1', '-j', 'DROP']);
    return () => void this.#ns(n.ns, ['iptables', '-D', 'OUTPUT', '-o', 'eth1', '-j', 'DROP'], true);
  }

  /**
   * The node's resolver goes silent (#60): its namespace drops DNS to the rig's resolver, so
   * SecureNAT's DNS relay (or an OpenVPN node's pushed resolver) answers nothing, while the tunnel
   * and everything by address keep working. Returns a function that puts it back.
   */
  silenceResolver(nodeName: string): () => void {
    const n = this.node(nodeName);
    const rules = [
      ['OUTPUT', '-o', 'eth1', '-p', 'udp', '--dport', '53', '-j', 'DROP'],
      ['OUTPUT', '-o', 'eth1', '-p', 'tcp', '--dport', '53', '-j', 'DROP'],
    ];
    for (const r of rules) this.#ns(n.ns, ['iptables', '-I', ...r]);
    return () => {
      for (const r of rules) this.#ns(n.ns, ['iptables', '-D', ...r], true);
    };
  }

  /**
   * The node's uplink dies for TCP (#60): its exit side drops every TCP segment, while the tunnel
   * and its resolver keep answering (connects through it time out). Returns a function that puts
   * it back.
   */
  cutUplinkTcp(nodeName: string): () => void {
    const n = this.node(nodeName);
    const rule = ['OUTPUT', '-o', 'eth1', '-p', 'tcp', '!', '--dport', '53', '-j', 'DROP'];
    this.#ns(n.ns, ['iptables', '-I', ...rule]);
    return () => void this.#ns(n.ns, ['iptables', '-D', ...rule], true);
  }

  /** Every packet to and from the node's VPN side disappears (a dead route, not a closed port). */
  blackhole(nodeName: string): void {
    const n = this.node(nodeName);
    this.#ns(n.ns, ['iptables', '-I', 'INPUT', '-i', 'eth0', '-j', 'DROP']);
    this.#ns(n.ns, ['iptables', '-I', 'OUTPUT', '-o', 'eth0', '-j', 'DROP']);
  }

  unblackhole(nodeName: string): void {
    const n = this.node(nodeName);
    this.#ns(n.ns, ['iptables', '-D', 'INPUT', '-i', 'eth0', '-j', 'DROP'], true);
    this.#ns(n.ns, ['iptables', '-D', 'OUTPUT', '-o', 'eth0', '-j', 'DROP'], true);
  }

  pause(nodeName: string): void {
    this.#signalServer(nodeName, 'SIGSTOP');
  }

  resume(nodeName: string): void {
    this.#signalServer(nodeName, 'SIGCONT');
  }

  kill(nodeName: string): void {
    this.#signalServer(nodeName, 'SIGKILL');
  }

  /**
   * Starts the node's server again (its configuration is kept); resolves when it serves every
   * profile it has. A listening port is not enough: SoftEther opens its TCP listener before its
   * UDP one, and a client that comes a moment early is refused.
   *
   * `waitFor: 'listening'` (an OpenVPN 2.6 node over TCP) resolves once its TCP port listens,
   * with no handshake of the rig's own: that handshake would take an address from the fresh
   * server's pool, and which address a client then gets would depend on whether it came before
   * or after the rig (seen in CI: a tunnel reconnecting while the rig checked the server came
   * back with another address).
   */
  async restart(nodeName: string, opts: { waitFor?: 'serving' | 'listening' } = {}): Promise<void> {
    const n = this.node(nodeName);
    try {
      this.kill(nodeName);
    } catch {
      /* not running */
    }
    const cmd = readFileSync(resolve(this.state.dir, `restart-${n.id}`), 'utf8').trim();
    // detached: its own session and process group, led by the pid recorded (setsid(1) would fork
    // here, leaving a pid whose group is gone: the next kill would find no server).
    const child = spawn('sh', ['-c', `exec ${cmd}`], { detached: true, stdio: 'ignore' });
    child.unref();
    recordProcess(resolve(this.state.dir, 'pids', n.id), child.pid);
    if (opts.waitFor === 'listening') await this.#waitListening(n, 30_000);
    else await this.#waitServing(n, 30_000);
  }

  /** Until the node's OpenVPN TCP port listens (an OpenVPN 2.6 server serves once it does). */
  async #waitListening(n: RigNode, timeoutMs: number): Promise<void> {
    if (n.kind === 'softether' || !n.profiles.tcp)
      throw new Error(`${n.name}: waitFor 'listening' is for OpenVPN TCP nodes`);
    const { port } = parseProfile(readFileSync(n.profiles.tcp, 'utf8')).remotes[0]!;
    const deadline = Date.now() + timeoutMs;
    while (!this.#ns(n.ns, ['ss', '-Hltn', 'sport', '=', `:${port}`], true).trim()) {
      if (Date.now() > deadline) throw new Error(`${n.name} does not listen on tcp ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Retries a real OpenVPN handshake on each of the node's profiles until every one succeeds. Except
   * SoftEther over UDP: a session there cannot be ended by the client (SoftEther takes no exit
   * notice over UDP) and lingers on the server for its timeout, holding its SecureNAT address; a
   * test's own tunnel made meanwhile could be given the same address and lose its inbound
   * traffic to the lingering session. There an answered HARD_RESET shows the UDP listener is up,
   * and the TCP handshake (a session TCP close ends at once) shows the hub is loaded.
   */
  async #waitServing(n: RigNode, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const files = Object.entries(n.profiles).sort(([a], [b]) => (a === 'tcp' ? -1 : b === 'tcp' ? 1 : 0));
    for (const [proto, file] of files) {
      const profile = parseProfile(readFileSync(file, 'utf8'));
      // A TLS-1.0-only OpenVPN server refuses our TLS in silence (its alert never leaves it), and
      // Gatehop does not take silence for a refusal (#34): an answered HARD_RESET shows it is up.
      if ((n.kind === 'softether' || n.variant?.startsWith('legacy')) && proto === 'udp') {
        const { host, port } = profile.remotes[0]!;
        for (;;) {
          try {
            await openvpnUdpResetMs(host, port, 1_000);
            break;
          } catch (err) {
            if (Date.now() > deadline) throw new Error(`${n.name} does not answer on udp: ${(err as Error).message}`);
            await new Promise((r) => setTimeout(r, 200));
          }
        }
        continue;
      }
      if (n.kind === 'softether') {
        await this.#waitNat(n, file, deadline);
        continue;
      }
      for (;;) {
        const client = new TunnelClient({ profile, logger: silentLogger() });
        try {
          await client.connect({ timeoutMs: Math.max(1_000, deadline - Date.now()) });
          break;
        } catch (err) {
          if (Date.now() > deadline) throw new Error(`${n.name} does not serve ${file}: ${(err as Error).message}`);
          await new Promise((r) => setTimeout(r, 200));
        } finally {
          client.close();
        }
      }
    }
  }

  /**
   * A SoftEther node serves when a TCP connection through it reaches the inet host. Right after
   * the server starts, its SecureNAT has been seen to answer the tunnel (pings, DHCP) yet leave
   * TCP SYNs unanswered for ~10 s and then reset them: a test's first connection then failed (see
   * test/rig/README.md). A handshake alone does not show that; a real connection does.
   */
  async #waitNat(n: RigNode, file: string, deadline: number): Promise<void> {
    const profileText = readFileSync(file, 'utf8');
    let last = '';
    while (Date.now() < deadline) {
      let egress: TunnelEgress | null = null;
      try {
        egress = await TunnelEgress.open({
          id: `rig-ready-${n.id}`,
          nodeId: n.name,
          link: { protocol: 'openvpn', profileText },
          logger: silentLogger(),
          connectTimeoutMs: Math.max(1_000, deadline - Date.now()),
          unresponsiveMs: 0,
        });
        while (Date.now() < deadline) {
          try {
            const c = await egress.connectTcp(this.state.inetAddress, 80, { timeoutMs: 2_000 });
            c.stream.destroy();
            return;
          } catch (err) {
            last = (err as Error).message;
          }
        }
      } catch (err) {
        last = (err as Error).message;
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        await egress?.close();
      }
    }
    throw new Error(`${n.name} does not carry TCP to the inet host through ${file}: ${last}`);
  }

  // ---- more hosts: sites, proxies, filters ----

  /**
   * A new host in a namespace of its own, linked to the root namespace on 10.K.(200+i).0/24 (root
   * .1, host .2 and `extraAddresses` more), and on the lan with `lan: true` (LAN .3+i), so it can
   * reach the nodes. Its name carries the rig's prefix: `down` removes it.
   */
  addHost(
    name: string,
    opts: { lan?: boolean; extraAddresses?: number; hosts?: Record<string, string> } = {},
  ): RigHost {
    const i = this.#hosts++;
    if (i > 40) throw new Error('too many rig hosts');
    const p = this.state.prefix;
    const ns = `${p}-${name}`;
    const k = this.state.lan.split('.')[1]!;
    const net = `10.${k}.${200 + i}`;
    const run = (cmd: string[]): void =>
      void execFileSync(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    run(['ip', 'netns', 'add', ns]);
    run(['ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
    const v = `${p}h${i}`;
    run(['ip', 'link', 'add', v, 'type', 'veth', 'peer', 'name', `${v}x`]);
    run(['ip', 'link', 'set', `${v}x`, 'netns', ns]);
    run(['ip', 'addr', 'add', `${net}.1/24`, 'dev', v]);
    run(['ip', 'link', 'set', v, 'up']);
    const extra = Array.from({ length: opts.extraAddresses ?? 0 }, (_, j) => `${net}.${3 + j}`);
    for (const a of [`${net}.2`, ...extra])
      run(['ip', 'netns', 'exec', ns, 'ip', 'addr', 'add', `${a}/24`, 'dev', `${v}x`]);
    run(['ip', 'netns', 'exec', ns, 'ip', 'link', 'set', `${v}x`, 'up']);
    let lanAddress: string | null = null;
    if (opts.lan) {
      lanAddress = this.state.lan.replace(/\.0\/24$/, `.${3 + i}`);
      const l = `${p}l${i}`;
      run(['ip', 'link', 'add', l, 'type', 'veth', 'peer', 'name', `${l}x`]);
      run(['ip', 'link', 'set', `${l}x`, 'netns', `${p}-lan`]);
      run(['ip', 'netns', 'exec', `${p}-lan`, 'ip', 'link', 'set', `${l}x`, 'master', 'br0', 'up']);
      run(['ip', 'link', 'set', l, 'netns', ns]);
      run(['ip', 'netns', 'exec', ns, 'ip', 'addr', 'add', `${lanAddress}/24`, 'dev', l]);
      run(['ip', 'netns', 'exec', ns, 'ip', 'link', 'set', l, 'up']);
    }
    if (opts.hosts) {
      // `ip netns exec` binds /etc/netns/NS/hosts over /etc/hosts: names only this host knows.
      mkdirSync(`/etc/netns/${ns}`, { recursive: true });
      const lines = ['127.0.0.1 localhost', ...Object.entries(opts.hosts).map(([n, a]) => `${a} ${n}`)];
      writeFileSync(`/etc/netns/${ns}/hosts`, `${lines.join('\n')}\n`);
    }
    return { ns, address: `${net}.2`, rootSide: `${net}.1`, rootDev: v, dev: `${v}x`, extra, lanAddress };
  }

  /**
   * Runs a VPN Gate site look-alike in `ns` (the inet namespace, a host's) on host:port: the list
   * (optionally only some nodes, or none with `noList`), a mirror directory naming `mirrors`, a mode.
   * In clear, as mirrors serve it; `https`: over HTTPS with a certificate from the rig's public root
   * for `host` (an address), as www.vpngate.net serves it.
   */
  async serveList(opts: {
    ns: string | null;
    host: string;
    port?: number;
    nodes?: string[];
    mirrors?: string[];
    mode?: string;
    noList?: boolean;
    https?: boolean;
  }): Promise<RigSite> {
    const id = `site-${Math.random().toString(16).slice(2, 8)}`;
    const portFile = resolve(this.state.dir, `${id}.port`);
    const args = [
      resolve(RIG_DIR, 'services/vpngate-api.mjs'),
      resolve(this.state.dir, 'state.json'),
      portFile,
      '--host',
      opts.host,
      '--port',
      String(opts.port ?? 0),
    ];
    if (opts.nodes) args.push('--nodes', opts.nodes.join(','));
    if (opts.mirrors) args.push('--mirrors', opts.mirrors.join(','));
    if (opts.mode) args.push('--mode', opts.mode);
    if (opts.noList) args.push('--no-list');
    if (opts.https) {
      const [cert, key] = this.#issue(id, [`IP:${opts.host}`]);
      args.push('--tls', `${cert},${key}`, '--plain-port-file', `${portFile}.plain`);
    }
    const cmd = opts.ns ? ['ip', 'netns', 'exec', opts.ns, process.execPath, ...args] : [process.execPath, ...args];
    const child = spawn(cmd[0]!, cmd.slice(1), { detached: true, stdio: 'ignore' });
    child.unref();
    recordProcess(resolve(this.state.dir, 'pids', id), child.pid);
    const deadline = Date.now() + 10_000;
    let port = '';
    while (
      !(port = (() => {
        try {
          return readFileSync(portFile, 'utf8');
        } catch {
          return '';
        }
      })())
    ) {
      if (Date.now() > deadline) throw new Error(`site look-alike on ${opts.host} did not start`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const origin = `${opts.https ? 'https' : 'http'}://${opts.host}:${port}`;
    return {
      origin,
      listUrl: `${origin}/api/iphone/`,
      stop: () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      },
    };
  }

  /**
   * A STUN server (services/stun.mjs) in `ns` on host:3478/udp: what a browser's WebRTC asks for the
   * address sites would learn (the leak test, #64). Returns its `stun:` URL; `down` stops it.
   */
  async serveStun(ns: string, host: string): Promise<string> {
    const id = `stun-${Math.random().toString(16).slice(2, 8)}`;
    const portFile = resolve(this.state.dir, `${id}.port`);
    const child = spawn(
      'ip',
      ['netns', 'exec', ns, process.execPath, resolve(RIG_DIR, 'services/stun.mjs'), host, portFile],
      { detached: true, stdio: 'ignore' },
    );
    child.unref();
    recordProcess(resolve(this.state.dir, 'pids', id), child.pid);
    const deadline = Date.now() + 10_000;
    while (!existsSync(portFile)) {
      if (Date.now() > deadline) throw new Error(`STUN server on ${host} did not start`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return `stun:${host}:3478`;
  }

  /**
   * An nftables rule in the root namespace that drops what Gatehop sends to `cidr` (a blocked site,
   * a network that cannot reach the nodes): the packets vanish, as behind a national filter. The
   * rig's own table; `down` deletes it. Returns a function that lifts this one rule.
   */
  blockFromHost(cidr: string, opts: { tcpPort?: number } = {}): DropRules {
    return this.#dropRules([['ip', 'daddr', cidr, ...(opts.tcpPort ? ['tcp', 'dport', String(opts.tcpPort)] : [])]]);
  }

  /**
   * A filter that breaks OpenVPN and lets TLS through, as deep packet inspection does where VPN
   * Gate is used most: every UDP datagram to the nodes' OpenVPN port 1194, and every TCP segment
   * to it whose payload starts like an OpenVPN client's first packet (2-byte length, then opcode
   * P_CONTROL_HARD_RESET_CLIENT_V2 with key id 0: 0x38). A TLS ClientHello (0x16 0x03 …) to the
   * same port passes. Returns a function that lifts it; its `packets()` says how many it dropped.
   */
  filterOpenVpn(): DropRules {
    const lan = this.state.lan;
    return this.#dropRules([
      ['ip', 'daddr', lan, 'udp', 'dport', '1194'],
      // OpenVPN over TCP opens with a short hard reset: a 2-byte length under 256, then opcode 7
      // (0x38). A filter judging any segment by its third byte alone also drops one in 256 of an
      // SE-VPN session's own segments on that port (TLS ciphertext), as no real filter would.
      ['ip', 'daddr', lan, 'ip', 'length', '< 200', 'tcp', 'dport', '1194', '@ih,0,8', '0x00', '@ih,16,8', '0x38'],
    ]);
  }

  /**
   * Loss of small packets only, from Gatehop to a node over UDP: every datagram to its OpenVPN port
   * whose IP length is under `underBytes` vanishes (pure ACKs and pings inside the tunnel; data
   * passes). What a congested hop or a node's full queue does to the one ACK that reopens a window.
   */
  dropSmallDatagramsTo(nodeName: string, underBytes: number): DropRules {
    const n = this.node(nodeName);
    return this.#dropRules([
      ['ip', 'daddr', n.vpnAddress, 'ip', 'length', `< ${underBytes}`, 'udp', 'dport', String(n.port)],
    ]);
  }

  /** Drop rules in the rig's own nftables table (output hook), counted; returns a function that deletes them. */
  #dropRules(matches: string[][]): DropRules {
    const table = this.state.prefix;
    const nft = (...a: string[]): string => execFileSync('nft', a, { encoding: 'utf8' });
    nft('add', 'table', 'inet', table);
    nft('add', 'chain', 'inet', table, 'out', '{ type filter hook output priority 0 ; policy accept ; }');
    const comment = `gh-${Math.random().toString(16).slice(2, 10)}`;
    for (const match of matches)
      nft('add', 'rule', 'inet', table, 'out', ...match, 'counter', 'drop', 'comment', `"${comment}"`);
    const lift = () => {
      const listing = nft('-a', 'list', 'chain', 'inet', table, 'out');
      for (const m of listing.matchAll(new RegExp(`comment "${comment}" # handle (\\d+)`, 'g')))
        nft('delete', 'rule', 'inet', table, 'out', 'handle', m[1]!);
    };
    const packets = (): number => {
      const listing = nft('list', 'chain', 'inet', table, 'out');
      let n = 0;
      for (const m of listing.matchAll(new RegExp(`counter packets (\\d+) bytes \\d+ drop comment "${comment}"`, 'g')))
        n += Number(m[1]);
      return n;
    };
    return Object.assign(lift, { packets });
  }

  /** The API look-alike's behaviour: ok | slow | fail | empty | truncated | html. */
  async apiMode(mode: string, delayMs?: number): Promise<void> {
    const url = `${this.state.apiControlUrl}?mode=${mode}${delayMs ? `&delayMs=${delayMs}` : ''}`;
    const res = await fetch(url, { method: 'POST' });
    if (!res.ok) throw new Error(`api control: ${res.status}`);
  }

  // ---- Debian's openvpn client in the client namespace ----

  /** Connects the native client; resolves once "Initialization Sequence Completed". */
  async nativeClient(nodeName: string, proto: 'tcp' | 'udp', extraArgs: string[] = []): Promise<NativeClient> {
    if (!this.state.clientNs) throw new Error('rig was brought up without --client');
    const n = this.node(nodeName);
    const profile = n.profiles[proto];
    if (!profile) throw new Error(`${n.name} has no ${proto} profile`);
    const inet = this.state.inetAddress.replace(/\.1$/, '.0');
    const args = [
      'netns',
      'exec',
      this.state.clientNs,
      'openvpn',
      '--config',
      profile,
      '--dev',
      'ghv0',
      '--dev-type',
      'tun',
      '--route-nopull',
      '--route',
      inet,
      '255.255.255.0',
      '--pull-filter',
      'ignore',
      'block-outside-dns',
      '--verb',
      '3',
    ];
    // SoftEther does no cipher negotiation; and SoftEther over TCP stalls with Nagle on.
    if (n.kind === 'softether') args.push('--data-ciphers', 'AES-128-CBC');
    if (proto === 'tcp') args.push('--socket-flags', 'TCP_NODELAY');
    args.push(...extraArgs);
    const child = spawn('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolvePromise, reject) => {
      let log = '';
      const timer = setTimeout(
        () => reject(new Error(`native client to ${n.name}/${proto} not up in 30 s: ${log.slice(-1500)}`)),
        30_000,
      );
      child.stdout.on('data', (c: Buffer) => {
        log += c.toString();
        if (log.includes('Initialization Sequence Completed')) {
          clearTimeout(timer);
          resolvePromise();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`native client exited ${code}: ${log.slice(-1500)}`));
      });
    });
    return new NativeClient(child, this.state.clientNs);
  }

  /**
   * A certificate for `sans` (`DNS:…`, `IP:…`; the first is its CN) from the rig's public root, or
   * from `from` (a CA's certificate and key files): [cert file, key file], `days` long.
   */
  #issue(id: string, sans: string[], from?: { ca: string; key: string }, days = 30): [string, string] {
    const dir = resolve(this.state.dir, 'pki');
    const { ca, key } = from ?? { ca: this.state.publicRootFile, key: this.state.publicRootKey };
    const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
    const cn = sans[0]!.replace(/^(DNS|IP):/, '');
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', `${id}.key`, '-out', `${id}.csr`);
    writeFileSync(
      resolve(dir, `${id}.ext`),
      `subjectAltName=${sans.join(',')}\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${id}.csr`,
      '-CA',
      ca,
      '-CAkey',
      key,
      '-CAcreateserial',
      '-days',
      String(days),
      '-extfile',
      `${id}.ext`,
      '-out',
      `${id}.crt`,
    );
    return [resolve(dir, `${id}.crt`), resolve(dir, `${id}.key`)];
  }

  /**
   * Gives a SoftEther node a new certificate (vpncmd ServerCertSet, as its operator would; every
   * protocol uses it from the next connection): from the rig's "public" root or its private CA, for
   * `names` (SAN DNS entries). Returns the certificate's PEM.
   */
  setNodeCert(nodeName: string, issuer: 'public' | 'rig', names: string[]): string {
    const n = this.node(nodeName);
    const id = `${n.id}-${issuer}-${Math.random().toString(16).slice(2, 8)}`;
    const from =
      issuer === 'public' ? undefined : { ca: this.state.caFile, key: resolve(this.state.dir, 'pki', 'ca.key') };
    const [cert, key] = this.#issue(
      id,
      names.map((x) => `DNS:${x}`),
      from,
      2,
    );
    this.#vpncmd(n.ns, null, ['ServerCertSet', `/LOADCERT:${cert}`, `/LOADKEY:${key}`]);
    return readFileSync(cert, 'utf8');
  }

  /**
   * Turns a SoftEther node's OpenVPN or SSTP server on or off (vpncmd ProtoOptionsSet, as an
   * operator would); SE-VPN, SoftEther's own, cannot be turned off. Returns a function that undoes it.
   */
  setProtocol(nodeName: string, protocol: 'OpenVPN' | 'SSTP', enabled: boolean): () => void {
    const n = this.node(nodeName);
    const set = (on: boolean): void =>
      void this.#vpncmd(n.ns, null, ['ProtoOptionsSet', protocol, '/NAME:Enabled', `/VALUE:${on ? 'true' : 'false'}`]);
    set(enabled);
    return () => set(!enabled);
  }

  /**
   * Sets how long a SoftEther node's SecureNAT leases an address (vpncmd DhcpSet, which takes
   * every setting at once: the rest are SecureNAT's defaults, as the rig runs them). Returns a
   * function that puts back the default (7200 s).
   */
  setDhcpLease(nodeName: string, hub: string, seconds: number): () => void {
    const n = this.node(nodeName);
    const set = (expire: number): void =>
      void this.#vpncmd(n.ns, hub, [
        'DhcpSet',
        '/START:192.168.30.10',
        '/END:192.168.30.200',
        '/MASK:255.255.255.0',
        `/EXPIRE:${expire}`,
        '/GW:192.168.30.1',
        '/DNS:192.168.30.1',
        '/DNS2:none',
        '/DOMAIN:none',
        '/LOG:yes',
        '/PUSHROUTE:none',
      ]);
    set(seconds);
    return () => set(7200);
  }

  /**
   * A SoftEther node that takes no new session (#60), as a volunteer's server at its limit: the
   * hub's maximum of concurrent sessions set to the user sessions it has now (vpncmd
   * SetMaxSession; SecureNAT's own does not count). A hub with none cannot be made full this way
   * (0 is "no limit"): put a client on it first. Returns a function that lifts the limit again.
   */
  fill(nodeName: string, hub = 'RIG'): () => void {
    const n = this.node(nodeName);
    const now = this.softetherSessions(nodeName, hub).filter((s) => s.connections > 0).length;
    if (now === 0) throw new Error(`${nodeName}: no session to fill it with (0 means no limit)`);
    this.#vpncmd(n.ns, hub, ['SetMaxSession', String(now)]);
    return () => void this.#vpncmd(n.ns, hub, ['SetMaxSession', '0']);
  }

  /** The user sessions on a SoftEther node's hub now and their TCP connections, as the server counts them (vpncmd SessionList). */
  softetherSessions(nodeName: string, hub = 'RIG'): Array<{ name: string; connections: number }> {
    const out = this.#vpncmd(this.node(nodeName).ns, hub, ['SessionList'], ['/CSV']);
    // CSV: "Session Name,…,TCP Connections,…", the count as "current / max" ("None" for SecureNAT).
    const rows = out
      .split('\n')
      .filter((l) => l.includes(','))
      .map((l) => [...l.matchAll(/"([^"]*)"|([^,]+)|(?<=,|^)(?=,|$)/g)].map((m) => m[1] ?? m[2] ?? ''));
    const header = rows.findIndex((r) => r.some((c) => /TCP Connections/i.test(c)));
    if (header < 0) return [];
    const col = rows[header]!.findIndex((c) => /TCP Connections/i.test(c));
    return rows.slice(header + 1).flatMap((r) => {
      const n = /^(\d+)\s*\//.exec(r[col] ?? '')?.[1];
      return n === undefined ? [] : [{ name: r[0]!, connections: Number(n) }];
    });
  }

  /**
   * Cuts one TCP connection at a node, as a middlebox's reset would: the node's socket to
   * `peer`:`peerPort` is destroyed (ss -K), which sends the peer a RST.
   */
  cutTcp(nodeName: string, peer: string, peerPort: number): void {
    this.#ns(this.node(nodeName).ns, ['ss', '-K', 'dst', peer, 'dport', '=', `:${peerPort}`]);
  }

  /** vpncmd against the SoftEther server in `ns`, on `hub` (null: the server itself), running one command. */
  #vpncmd(ns: string, hub: string | null, command: string[], options: string[] = []): string {
    const target = hub === null ? [] : [`/HUB:${hub}`];
    return this.#ns(ns, [
      '/usr/libexec/softether/vpncmd/vpncmd',
      'localhost:443',
      '/SERVER',
      ...target,
      ...options,
      '/CMD',
      ...command,
    ]);
  }

  #ns(ns: string, cmd: string[], tolerant = false): string {
    try {
      return execFileSync('ip', ['netns', 'exec', ns, ...cmd], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      if (tolerant) return '';
      throw err;
    }
  }

  #signalServer(nodeName: string, signal: NodeJS.Signals): void {
    const n = this.node(nodeName);
    const pid = liveRecordedPid(resolve(this.state.dir, 'pids', n.id));
    if (pid === null) throw new Error(`${nodeName}: its server is not running (${signal})`);
    process.kill(-pid, signal); // the server's whole process group (SoftEther forks a worker)
  }
}

export class NativeClient {
  constructor(
    private readonly child: ChildProcess,
    private readonly ns: string,
  ) {}

  /** curl inside the client namespace; returns body (or the -w output) as text. */
  curl(args: string[]): string {
    return execFileSync('ip', ['netns', 'exec', this.ns, 'curl', '-s', '--max-time', '120', ...args], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
  }

  /**
   * CPU seconds the openvpn process has used, user and system apart (/proc/PID/stat; `ip netns
   * exec` execs openvpn in place, so the child is openvpn itself). Kernel work done in softirq on
   * its behalf (the TUN device, the kernel's TCP) is not in it.
   */
  cpuSeconds(): { user: number; system: number } {
    const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 (1-based), in clock ticks of 1/100 s on Linux.
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  }

  close(): Promise<void> {
    if (this.child.exitCode !== null) return Promise.resolve();
    return new Promise((r) => {
      this.child.once('exit', () => r());
      this.child.kill('SIGTERM');
    });
  }
}
