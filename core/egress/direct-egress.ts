import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { isIP, Socket } from 'node:net';
import { abortReason, ErrorCodes, GatehopError, settleFirst } from '../common/index.js';
import { mapSocketError } from './map-socket-error.js';
import type {
  ConnectTcpOptions,
  Egress,
  EgressState,
  EgressStats,
  EgressTcpConnection,
  EgressUdpSocket,
  UdpDatagram,
} from '../contracts/index.js';

const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;

/** The host network as an egress: plain sockets and the system resolver. */
export class DirectEgress implements Egress {
  readonly id: string;
  readonly stats: EgressStats = { bytesUp: 0, bytesDown: 0, sessionsActive: 0, sessionsTotal: 0, failures: 0 };
  #state: EgressState = 'ready';
  readonly #sockets = new Set<Socket>();
  readonly #udpSockets = new Set<DirectUdpSocket>();

  constructor(id = 'direct') {
    this.id = id;
  }

  get state(): EgressState {
    return this.#state;
  }

  async resolve(host: string, opts: { signal?: AbortSignal } = {}): Promise<string[]> {
    if (isIP(host)) return [host];
    opts.signal?.throwIfAborted();
    try {
      const found = await lookup(host, { all: true, verbatim: true });
      opts.signal?.throwIfAborted();
      if (found.length === 0) throw Object.assign(new Error(`no address for ${host}`), { code: 'ENOTFOUND' });
      return found.map((a) => a.address);
    } catch (err) {
      if (opts.signal?.aborted) throw abortReason(opts.signal, `resolve ${host}`);
      throw mapSocketError(err, host);
    }
  }

  async connectTcp(host: string, port: number, opts: ConnectTcpOptions = {}): Promise<EgressTcpConnection> {
    this.#assertOpen();
    const deadline = AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
    const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
    const target = `${host}:${port}`;
    try {
      const addresses = await this.resolve(host, { signal });
      let lastError: unknown;
      // Try each address in turn (the resolver's order), as a browser's fallback would.
      for (const address of addresses) {
        try {
          return await this.#connectOne(address, port, signal, target);
        } catch (err) {
          lastError = err;
          if (signal.aborted) break;
        }
      }
      throw signal.aborted ? abortReason(signal, `connect to ${target}`) : mapSocketError(lastError, target);
    } catch (err) {
      this.stats.failures++;
      throw err instanceof GatehopError ? err : mapSocketError(err, target);
    }
  }

  #connectOne(address: string, port: number, signal: AbortSignal, target: string): Promise<EgressTcpConnection> {
    return settleFirst<Socket>({ signal, what: `connect to ${target}` }, (settle) => {
      const socket = new Socket({ allowHalfOpen: true });
      const onError = (err: Error): void => settle.reject(mapSocketError(err, target));
      socket.once('error', onError);
      socket.connect({ host: address, port, noDelay: true }, () => settle.resolve(socket));
      return (resolved) => {
        socket.off('error', onError);
        if (!resolved) socket.destroy();
      };
    }).then((socket) => {
      if (this.#state === 'closed') {
        socket.destroy();
        throw new GatehopError(ErrorCodes.EGRESS_CLOSED, `egress ${this.id} closed while connecting to ${target}`);
      }
      this.#track(socket);
      return {
        stream: socket,
        localAddress: socket.localAddress ?? '0.0.0.0',
        localPort: socket.localPort ?? 0,
        remoteAddress: socket.remoteAddress ?? address,
        remotePort: socket.remotePort ?? port,
      };
    });
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    this.stats.sessionsActive++;
    this.stats.sessionsTotal++;
    socket.once('close', () => {
      this.#sockets.delete(socket);
      this.stats.sessionsActive--;
      this.stats.bytesUp += socket.bytesWritten;
      this.stats.bytesDown += socket.bytesRead;
    });
  }

  async bindUdp(): Promise<EgressUdpSocket> {
    this.#assertOpen();
    const udp = await DirectUdpSocket.open();
    this.#udpSockets.add(udp);
    this.stats.sessionsActive++;
    this.stats.sessionsTotal++;
    udp.onClose(() => {
      this.#udpSockets.delete(udp);
      this.stats.sessionsActive--;
      this.stats.bytesUp += udp.bytesSent;
      this.stats.bytesDown += udp.bytesReceived;
    });
    return udp;
  }

  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    for (const socket of this.#sockets) socket.destroy();
    for (const udp of this.#udpSockets) udp.close();
  }

  #assertOpen(): void {
    if (this.#state === 'closed') {
      throw new GatehopError(ErrorCodes.EGRESS_CLOSED, `egress ${this.id} is closed`);
    }
  }
}

/** One dual-stack host UDP socket: an IPv6 socket with IPv4-mapped addresses, or IPv4 only. */
class DirectUdpSocket implements EgressUdpSocket {
  bytesSent = 0;
  bytesReceived = 0;
  #closed = false;
  #closeHandlers: Array<(err?: Error) => void> = [];

  private constructor(
    private readonly v4: UdpSocket,
    private readonly v6: UdpSocket | null,
  ) {}

  static async open(): Promise<DirectUdpSocket> {
    const v4 = createSocket('udp4');
    await bind(v4);
    const v6 = createSocket({ type: 'udp6', ipv6Only: true });
    const v6ok = await bind(v6).then(
      () => true,
      () => false, // no IPv6 on this host: IPv6 targets will fail at send time
    );
    return new DirectUdpSocket(v4, v6ok ? v6 : (v6.close(), null));
  }

  send(data: Buffer, address: string, port: number): void {
    if (this.#closed) return;
    const family = isIP(address);
    const socket = family === 6 ? this.v6 : family === 4 ? this.v4 : null;
    if (!socket) return; // no route for that family: a datagram may be dropped
    this.bytesSent += data.length;
    socket.send(data, port, address);
  }

  onMessage(handler: (datagram: UdpDatagram) => void): void {
    const listener = (data: Buffer, rinfo: { address: string; port: number }): void => {
      this.bytesReceived += data.length;
      handler({ data, address: rinfo.address, port: rinfo.port });
    };
    this.v4.on('message', listener);
    this.v6?.on('message', listener);
  }

  onClose(handler: (err?: Error) => void): void {
    if (this.#closed) handler();
    else this.#closeHandlers.push(handler);
  }

  close(err?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.v4.close();
    this.v6?.close();
    for (const h of this.#closeHandlers.splice(0)) h(err);
  }
}

function bind(socket: UdpSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, () => {
      socket.off('error', reject);
      // A send error (e.g. ICMP unreachable surfaced as ECONNREFUSED) must not crash the process.
      socket.on('error', () => {});
      resolve();
    });
  });
}
