import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { isIP } from 'node:net';
import type { Logger } from '../common/index.js';
import type { Egress, EgressSource, UdpDatagram } from '../contracts/index.js';
import { encodeUdpHeader, parseUdpHeader, unmapIpv4 } from './socks5-codec.js';
import type { ProxyStats } from './proxy-stats.js';
import type { Flow } from '../rules/index.js';
import type { Router } from '../router/index.js';
import { UdpRelay } from './udp-relay.js';

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
 * One SOCKS5 UDP ASSOCIATE relay: a client-facing socket bound per association, and the egress side
 * (udp-relay.ts: rules, the tunnel and DIRECT legs, re-homing at a switch). Datagrams from anyone
 * but the client are dropped and counted, so are fragments (FRAG != 0, which we do not reassemble).
 */
export class UdpAssociation {
  #client: DgramSocket | null = null;
  #clientAddress: string;
  #clientPort: number;
  #closed = false;
  readonly #relay: UdpRelay;

  constructor(private readonly opts: UdpAssociationOptions) {
    this.#clientAddress = unmapIpv4(opts.clientAddress);
    this.#clientPort = opts.clientPort;
    this.#relay = new UdpRelay({
      source: opts.source,
      ...(opts.router ? { router: opts.router } : {}),
      stats: opts.stats,
      log: opts.log,
      flowFacts: () => ({ src: { ip: this.#clientAddress, port: this.#clientPort }, ...this.opts.flowFacts }),
      onReply: (d) => this.#fromEgress(d),
      onError: opts.onError,
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
    await this.#relay.open();
    const addr = client.address();
    return { address: addr.address, port: addr.port };
  }

  get egress(): Egress | null {
    return this.#relay.egress;
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
    this.#relay.send(payload, host, dstPort, type);
  }

  #fromEgress(d: UdpDatagram): void {
    if (this.#closed || !this.#client || this.#clientPort === 0) return;
    this.opts.onActivity();
    const packet = Buffer.concat([encodeUdpHeader(d.address, d.port), d.data]);
    this.#client.send(packet, this.#clientPort, this.#clientAddress);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#client?.close();
    this.#relay.close();
  }
}
