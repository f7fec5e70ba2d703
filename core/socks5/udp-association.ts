import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { isIP } from 'node:net';
import type { Logger } from '../common/index.js';
import type { Egress, EgressLease, EgressSource, EgressUdpSocket, UdpDatagram } from '../egress/index.js';
import { encodeUdpHeader, parseUdpHeader, unmapIpv4 } from './socks5-codec.js';
import type { ProxyStats } from './proxy-stats.js';
import { detach } from '../common/index.js';
import type { Decision, Flow } from '../route/index.js';
import { NameLookups, type Router } from '../router/index.js';
import { UdpDirectLeg } from './udp-direct-leg.js';
import { UdpPeerDecisions } from './udp-peer-decisions.js';

/** After re-homing, the old egress socket still takes replies this long. */
const REHOME_LINGER_MS = 5_000;

export interface UdpAssociationOptions {
  /** Where the association leases its egress; at a switch it re-homes to the new active one. */
  readonly source: EgressSource;
  /** Routes each packet by its peer: TUNNEL (source), DIRECT (a socket on the host's network) or dropped. */
  readonly router?: Router;
  /** The TCP control connection's peer: only datagrams from this address are relayed. */
  readonly clientAddress: string;
  /** 0 when the client did not say; then the first datagram's source port is fixed. */
  readonly clientPort: number;
  /** The local address the control connection arrived on; the relay binds there. */
  readonly bindHost: string;
  readonly stats: ProxyStats;
  readonly log: Logger;
  readonly onActivity: () => void;
  readonly onError: (err: Error) => void;
  /** What rules may ask of every packet's flow and the association knows from its control connection. */
  readonly flowFacts?: Pick<Flow, 'inPort' | 'inType' | 'inUser'>;
}

/**
 * One SOCKS5 UDP ASSOCIATE relay: a client-facing socket bound per association and an egress-side
 * socket. Datagrams from anyone but the client are dropped and counted, so are fragments (FRAG != 0,
 * which we do not reassemble). When its egress starts draining, the association keeps its
 * client-facing socket and opens a new egress-side socket on the new active egress (re-homing); the
 * old one lingers briefly for replies in flight.
 */
export class UdpAssociation {
  #client: DgramSocket | null = null;
  #egressSocket: EgressUdpSocket | null = null;
  #lease: EgressLease | null = null;
  readonly #lingering = new Set<{ socket: EgressUdpSocket; lease: EgressLease; timer: NodeJS.Timeout }>();
  #clientAddress: string;
  #clientPort: number;
  #closed = false;
  /** Names of tunnel-bound targets, resolved by the egress that carries the datagrams. */
  readonly #names = new NameLookups({
    resolve: (host) => this.#lease!.egress.resolve(host),
    onDrop: (host, why, err) => this.#dropUnresolved(host, why, err),
  });
  /** Where each peer's packets go (with a router): udp-peer-decisions.ts. */
  readonly #decisions: UdpPeerDecisions | null;
  /** The DIRECT leg, opened at the first packet a rule sends direct: udp-direct-leg.ts. */
  readonly #direct: UdpDirectLeg;

  constructor(private readonly opts: UdpAssociationOptions) {
    this.#clientAddress = unmapIpv4(opts.clientAddress);
    this.#clientPort = opts.clientPort;
    this.#decisions = opts.router ? new UdpPeerDecisions(opts.router, opts.stats, opts.log, () => this.#closed) : null;
    this.#direct = new UdpDirectLeg({
      source: () => this.opts.router!.sourceFor('DIRECT'),
      stats: opts.stats,
      log: opts.log,
      sent: (bytes) => this.#countRouted('DIRECT', bytes),
      onDatagram: (d) => {
        this.#countRouted('DIRECT', d.data.length);
        this.#fromEgress(d);
      },
      onUnresolved: (host, why, err) => this.#dropUnresolved(host, why, err),
    });
  }

  async open(): Promise<{ address: string; port: number }> {
    const host = unmapIpv4(this.opts.bindHost);
    const client = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');
    this.#client = client;
    await new Promise<void>((resolve, reject) => {
      client.once('error', reject);
      client.bind(0, host, () => {
        client.off('error', reject);
        resolve();
      });
    });
    client.on('error', (err) => this.opts.onError(err));
    client.on('message', (msg, rinfo) => this.#fromClient(msg, rinfo.address, rinfo.port));
    await this.#bindEgress();
    const addr = client.address();
    return { address: addr.address, port: addr.port };
  }

  get egress(): Egress | null {
    return this.#lease?.egress ?? null;
  }

  /** Leases the active egress and opens this association's socket on it. */
  async #bindEgress(): Promise<void> {
    const lease = this.opts.source.acquire();
    let socket: EgressUdpSocket;
    try {
      socket = await lease.egress.bindUdp();
    } catch (err) {
      lease.release();
      throw err;
    }
    if (this.#closed) {
      socket.close();
      lease.release();
      throw new Error('UDP association closed while opening');
    }
    const previous = this.#egressSocket && this.#lease ? { socket: this.#egressSocket, lease: this.#lease } : null;
    this.#lease = lease;
    this.#egressSocket = socket;
    this.#names.clear(); // names are resolved by the egress that carries the datagrams
    socket.onMessage((d) => {
      this.#countRouted('TUNNEL', d.data.length);
      this.#fromEgress(d);
    });
    socket.onClose((err) => {
      if (err && socket === this.#egressSocket) this.opts.onError(err);
    });
    lease.onRetire(() => detach(this.opts.log, 'udp-rehome', this.#rehome()));
    if (previous) {
      const entry = { ...previous, timer: setTimeout(() => this.#endLinger(entry), REHOME_LINGER_MS) };
      entry.timer.unref();
      this.#lingering.add(entry);
    }
  }

  async #rehome(): Promise<void> {
    if (this.#closed) return;
    const from = this.#lease?.egress.id;
    try {
      await this.#bindEgress();
      this.opts.stats.udp.rehomed++;
      this.opts.log.info(
        { event: 'udp-rehomed', from, to: this.#lease?.egress.id },
        'UDP association moved to the new egress',
      );
    } catch (err) {
      if (!this.#closed)
        this.opts.log.warn(
          { event: 'udp-rehome-failed', from, err: (err as Error).message },
          'UDP association stays on the draining egress',
        );
    }
  }

  #endLinger(entry: { socket: EgressUdpSocket; lease: EgressLease; timer: NodeJS.Timeout }): void {
    if (!this.#lingering.delete(entry)) return;
    clearTimeout(entry.timer);
    entry.socket.close();
    entry.lease.release();
  }

  #fromClient(msg: Buffer, address: string, port: number): void {
    const { stats } = this.opts;
    if (unmapIpv4(address) !== this.#clientAddress || (this.#clientPort !== 0 && port !== this.#clientPort)) {
      stats.udp.foreignDropped++;
      return;
    }
    this.#clientPort = port;
    const parsed = parseUdpHeader(msg);
    if (parsed.kind !== 'ok') {
      stats.udp.otherDropped++;
      return;
    }
    if (parsed.value.frag !== 0) {
      stats.udp.fragDropped++;
      return;
    }
    this.opts.onActivity();
    const payload = msg.subarray(parsed.value.headerLength);
    const { host, port: dstPort, type } = parsed.value.target;
    if (this.#decisions && this.opts.router?.routed) {
      const flow: Flow = {
        network: 'udp',
        host,
        port: dstPort,
        src: { ip: this.#clientAddress, port: this.#clientPort },
        ...this.opts.flowFacts,
      };
      this.#decisions.route(flow, (d) => this.#dispatch(d, payload, host, dstPort, type));
      return;
    }
    this.#toTunnel(payload, host, dstPort, type);
  }

  #dispatch(d: Decision, payload: Buffer, host: string, port: number, type: string): void {
    if (d.target === 'REJECT') {
      this.opts.stats.udp.rejected++;
      return;
    }
    if (d.target === 'DIRECT') return this.#direct.send(payload, host, port, type);
    this.#toTunnel(payload, host, port, type);
  }

  #countRouted(target: string, bytes: number): void {
    if (!this.opts.router?.routed) return;
    const r = this.opts.stats.routedBytes;
    r[target] = (r[target] ?? 0) + bytes;
  }

  #toTunnel(payload: Buffer, host: string, dstPort: number, type: string): void {
    this.#countRouted('TUNNEL', payload.length);
    if (type !== 'domain') {
      this.#send(payload, host, dstPort);
      return;
    }
    this.#names.with(host, (ip) => this.#send(payload, ip, dstPort));
  }

  #dropUnresolved(host: string, why: 'full' | 'no-answer' | 'failed', err?: Error): void {
    this.opts.stats.udp.otherDropped++;
    if (err) this.opts.log.debug({ event: 'udp-resolve-failed', host, err: err.message }, 'UDP target did not resolve');
  }

  #send(payload: Buffer, ip: string, port: number): void {
    if (this.#closed || !this.#egressSocket) return;
    this.opts.stats.udp.datagramsUp++;
    this.opts.stats.bytesUp += payload.length;
    this.#egressSocket.send(payload, ip, port);
  }

  #fromEgress(d: UdpDatagram): void {
    if (this.#closed || !this.#client || this.#clientPort === 0) return;
    this.opts.onActivity();
    this.opts.stats.udp.datagramsDown++;
    this.opts.stats.closedBytesDown += d.data.length;
    const packet = Buffer.concat([encodeUdpHeader(d.address, d.port), d.data]);
    this.#client.send(packet, this.#clientPort, this.#clientAddress);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#client?.close();
    this.#egressSocket?.close();
    this.#lease?.release();
    this.#lease = null;
    this.#direct.close();
    this.#decisions?.clear();
    for (const entry of [...this.#lingering]) this.#endLinger(entry);
    this.#names.close();
  }
}
