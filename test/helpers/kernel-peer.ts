import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { Stack } from '../../core/netstack/index.js';
import { NetNs, waitForLine } from './netns.js';

const KERNEL_DIR = resolve(import.meta.dirname, '../netstack/kernel');
export const KERNEL_IP = '10.77.0.1';
export const STACK_IP = '10.77.0.2';

export interface Impairment {
  delayMs?: number;
  jitterMs?: number;
  loss?: number;
  reorder?: number;
  reorderMs?: number;
  seed?: number;
}

/**
 * Our stack wired to the Linux kernel through a TUN device in a fresh namespace: the real kernel
 * TCP stack is the peer. Services (ns-servers.mjs, dnsmasq) run inside the namespace.
 */
export class KernelPeer {
  readonly ns = new NetNs();
  readonly stack: Stack;
  readonly #bridge: ChildProcess;
  #inbuf: Buffer = Buffer.alloc(0);
  droppedAtQueue = 0;

  private constructor(impair: Impairment) {
    const args = ['python3', resolve(KERNEL_DIR, 'tun_bridge.py'), '--addr', `${KERNEL_IP}/24`];
    if (impair.delayMs) args.push('--delay-ms', String(impair.delayMs));
    if (impair.jitterMs) args.push('--jitter-ms', String(impair.jitterMs));
    if (impair.loss) args.push('--loss', String(impair.loss));
    if (impair.reorder) args.push('--reorder', String(impair.reorder), '--reorder-ms', String(impair.reorderMs ?? 10));
    args.push('--seed', String(impair.seed ?? 1));
    this.#bridge = this.ns.spawn(args);
    this.#bridge.stdin!.on('error', () => {});
    this.stack = new Stack({
      address: STACK_IP,
      netmask: 24,
      gateway: KERNEL_IP,
      mtu: 1500,
      output: (packet) => {
        // The link's queue is bounded like a real interface's: past 8 MiB in flight, drop.
        if (this.#bridge.stdin!.writableLength > 8 * 1024 * 1024) {
          this.droppedAtQueue++;
          return;
        }
        const head = Buffer.allocUnsafe(2);
        head.writeUInt16BE(packet.length);
        this.#bridge.stdin!.write(Buffer.concat([head, packet]));
      },
    });
  }

  static async start(impair: Impairment = {}): Promise<KernelPeer> {
    const peer = new KernelPeer(impair);
    try {
      await peer.#ready();
      return peer;
    } catch (err) {
      peer.close();
      throw err;
    }
  }

  #ready(): Promise<void> {
    return new Promise((resolvePromise, reject) => {
      let ready = false;
      let stderr = '';
      this.#bridge.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
      this.#bridge.once('exit', (code) => {
        if (!ready) reject(new Error(`tun_bridge exited ${code}: ${stderr}`));
      });
      this.#bridge.stdout!.on('data', (chunk: Buffer) => {
        this.#inbuf = this.#inbuf.length ? Buffer.concat([this.#inbuf, chunk]) : chunk;
        while (this.#inbuf.length >= 2) {
          const n = this.#inbuf.readUInt16BE(0);
          if (this.#inbuf.length < 2 + n) break;
          const packet = this.#inbuf.subarray(2, 2 + n);
          this.#inbuf = this.#inbuf.subarray(2 + n);
          if (n === 0) {
            ready = true;
            resolvePromise();
          } else if (!this.stack.closed) {
            this.stack.input(packet);
          }
        }
      });
    });
  }

  /** Starts the kernel-side TCP services; resolves when they listen. */
  async startServers(): Promise<ChildProcess> {
    const child = this.ns.spawn([process.execPath, resolve(KERNEL_DIR, 'ns-servers.mjs'), KERNEL_IP]);
    await waitForLine(child, /^ready$/);
    return child;
  }

  /** dnsmasq answering only test names, on the kernel side of the tunnel. */
  async startDns(records: Record<string, string>): Promise<void> {
    const args = [
      'dnsmasq',
      '--no-daemon',
      '--no-resolv',
      '--no-hosts',
      '--bind-interfaces',
      `--listen-address=${KERNEL_IP}`,
      '--port=53',
      '--log-facility=-',
    ];
    for (const [name, ip] of Object.entries(records)) args.push(`--address=/${name}/${ip}`);
    const child = this.ns.spawn(args);
    child.stderr!.on('data', () => {});
    // dnsmasq is ready once its port answers: poll with the stack itself.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const listening = this.ns.exec(['ss', '-Hlun', 'sport', '= :53']).trim();
      if (listening) return;
      if (Date.now() > deadline) throw new Error('dnsmasq did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  close(): void {
    this.stack.close();
    this.#bridge.stdin!.end();
    this.ns.close();
  }
}
