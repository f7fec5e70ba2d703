import { EventEmitter } from 'node:events';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { TunnelThread } from '../../core/egress/worker/worker-tunnel-egress.js';
import { TunnelHost, type HostedTunnel } from '../../core/egress/worker/tunnel-host.js';
import type { FromTunnel } from '../../core/egress/worker/messages.js';
import type { TunnelDiagnostics } from '../../core/egress/index.js';
import { DirectEgress } from '../../core/egress/index.js';

export const IDLE_DIAGNOSTICS: TunnelDiagnostics = {
  link: 'up',
  responsive: true,
  reconnects: 0,
  decryptFailures: 0,
  segmentsOut: 0,
  retransmissions: 0,
  windowUpdatesResent: 0,
  dnsHits: 0,
  dnsMisses: 0,
  weakTls: false,
  encryptedDns: false,
  trustRule: 'private-ca',
  wasmMemoryBytes: 0,
  heapUsedBytes: 0,
};

/** The host network as a hosted tunnel: real sockets on 127.0.0.1 behind the thread boundary. */
export function directTunnel(): HostedTunnel & { egress: DirectEgress; goDown(reason: string): void } {
  const egress = new DirectEgress('hosted-direct');
  const closeHandlers = new Set<(reason: string) => void>();
  return {
    egress,
    connectTcp: (h, p, o) => egress.connectTcp(h, p, o),
    bindUdp: () => egress.bindUdp(),
    resolve: (h) => egress.resolve(h),
    measureDns: async () => 1,
    diagnostics: () => IDLE_DIAGNOSTICS,
    onLiveness: () => () => {},
    onClose: (fn) => {
      closeHandlers.add(fn);
      return () => closeHandlers.delete(fn);
    },
    goDown(reason) {
      void egress.close();
      for (const fn of closeHandlers) fn(reason);
    },
    async close() {
      await egress.close();
      for (const fn of closeHandlers) fn('closed');
    },
  };
}

/**
 * A tunnel "thread" on this thread: the host and the WorkerTunnelEgress talk over a real
 * MessageChannel (structured clone, transferred buffers are detached), without a Worker, so the
 * boundary's protocol is tested against real sockets. `terminate` stands in for a crash.
 */
export class ChannelThread extends EventEmitter implements TunnelThread {
  readonly host: TunnelHost | null;
  readonly #main: MessagePort;
  readonly #side: MessagePort;
  #ended = false;

  constructor(tunnel: HostedTunnel | null) {
    super();
    const { port1, port2 } = new MessageChannel();
    this.#main = port2;
    this.#side = port1;
    port2.on('message', (batch) => this.emit('message', batch));
    this.host = tunnel ? new TunnelHost(port1, tunnel, () => this.#end(0)) : null;
    port1.on('message', (batch) => this.host?.handle(batch));
    // A null tunnel: opened, then silent (a hung worker).
    const opened: FromTunnel = { t: 'opened', info: { diagnostics: IDLE_DIAGNOSTICS, dnsServers: [] } };
    if (this.host) this.host.out.send(opened);
    else port1.postMessage([opened]);
  }

  postMessage(value: unknown, transfer?: readonly ArrayBuffer[]): void {
    if (!this.#ended) this.#main.postMessage(value, transfer);
  }

  async terminate(): Promise<number> {
    this.#end(1);
    return 1;
  }

  #end(code: number): void {
    if (this.#ended) return;
    this.#ended = true;
    // Like a worker's exit: what it posted before is still delivered, then the thread is gone.
    setTimeout(
      () => {
        this.#main.close();
        this.#side.close();
        this.emit('exit', code);
      },
      code === 0 ? 20 : 0,
    );
  }
}
