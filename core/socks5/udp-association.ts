import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { isIP } from 'node:net';
import type { Logger } from '../common/index.js';
import type { Egress, EgressUdpSocket, UdpDatagram } from '../egress/index.js';
import { encodeUdpHeader, parseUdpHeader, unmapIpv4 } from './socks5-codec.js';
import type { ProxyStats } from './proxy-stats.js';

/** Name lookups waiting at once per association; datagrams past this are dropped (UDP may drop). */
const MAX_PENDING_LOOKUPS = 32;
const MAX_CACHED_NAMES = 256;

export interface UdpAssociationOptions {
  readonly egress: Egress;
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
 * which we do not reassemble).
 */
export class UdpAssociation {
  #client: DgramSocket | null = null;
  #egressSocket: EgressUdpSocket | null = null;
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
    const egressSocket = await this.opts.egress.bindUdp();
    if (this.#closed) {
      egressSocket.close();
      throw new Error('UDP association closed while opening');
    }
    this.#egressSocket = egressSocket;
    egressSocket.onMessage((d) => this.#fromEgress(d));
    egressSocket.onClose((err) => {
      if (err) this.opts.onError(err);
    });
    const addr = client.address();
    return { address: addr.address, port: addr.port };
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
    this.opts.egress.resolve(host).then(
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
    this.opts.stats.bytesDown += d.data.length;
    const packet = Buffer.concat([encodeUdpHeader(d.address, d.port), d.data]);
    this.#client.send(packet, this.#clientPort, this.#clientAddress);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#client?.close();
    this.#egressSocket?.close();
    this.#names.clear();
  }
}
