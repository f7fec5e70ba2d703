import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { isIP } from 'node:net';
import type { Logger } from '../common/index.js';
import type { Egress, EgressLease, EgressSource, EgressUdpSocket, UdpDatagram } from '../egress/index.js';
import { encodeUdpHeader, parseUdpHeader, unmapIpv4 } from './socks5-codec.js';
import type { ProxyStats } from './proxy-stats.js';
import { detach } from '../common/index.js';

/** After re-homing, the old egress socket still takes replies this long. */
const REHOME_LINGER_MS = 5_000;
/** Name lookups waiting at once per association; datagrams past this are dropped (UDP may drop). */
const MAX_PENDING_LOOKUPS = 32;
const MAX_CACHED_NAMES = 256;

export interface UdpAssociationOptions {
  /** Where the association leases its egress; at a switch it re-homes to the new active one. */
  readonly source: EgressSource;
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
  #pendingLookups = 0;
  readonly #names = new Map<string, string>();

  constructor(private readonly opts: UdpAssociationOptions) {
    this.#clientAddress = unmapIpv4(opts.clientAddress);
    this.#clientPort = opts.clientPort;
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
    socket.onMessage((d) => this.#fromEgress(d));
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
    if (type !== 'domain') {
      this.#send(payload, host, dstPort);
      return;
    }
    const cached = this.#names.get(host);
    if (cached) {
      this.#send(payload, cached, dstPort);
      return;
    }
    if (this.#pendingLookups >= MAX_PENDING_LOOKUPS) {
      stats.udp.otherDropped++;
      return;
    }
    this.#pendingLookups++;
    this.#lease!.egress.resolve(host).then(
      (addresses) => {
        this.#pendingLookups--;
        const ip = addresses[0];
        if (!ip || this.#closed) return;
        if (this.#names.size >= MAX_CACHED_NAMES) this.#names.clear();
        this.#names.set(host, ip);
        this.#send(payload, ip, dstPort);
      },
      (err: Error) => {
        this.#pendingLookups--;
        stats.udp.otherDropped++;
        this.opts.log.debug({ event: 'udp-resolve-failed', host, err: err.message }, 'UDP target did not resolve');
      },
    );
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
    for (const entry of [...this.#lingering]) this.#endLinger(entry);
    this.#names.clear();
  }
}
