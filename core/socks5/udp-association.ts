import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { isIP } from 'node:net';
import type { Logger } from '../common/index.js';
import type { Egress, EgressLease, EgressSource, EgressUdpSocket, UdpDatagram } from '../egress/index.js';
import { encodeUdpHeader, parseUdpHeader, unmapIpv4 } from './socks5-codec.js';
import type { ProxyStats } from './proxy-stats.js';
import { detach } from '../common/index.js';
import type { Decision, Flow } from '../route/index.js';
import { NameLookups, type Router } from '../router/index.js';
import { bump } from './proxy-stats.js';

/** After re-homing, the old egress socket still takes replies this long. */
const REHOME_LINGER_MS = 5_000;
/** Routing decisions waiting at once per association; datagrams past this are dropped (UDP may drop). */
const MAX_PENDING_LOOKUPS = 32;
/** Decisions remembered per association, by peer (the table is asked again for a new peer). */
const MAX_CACHED_DECISIONS = 256;
/** Packets held while the DIRECT socket opens; more are dropped (UDP may drop). */
const MAX_HELD_DIRECT = 16;

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
  #pendingLookups = 0;
  /** Names of tunnel-bound targets, resolved by the egress that carries the datagrams. */
  readonly #names = new NameLookups({
    resolve: (host) => this.#lease!.egress.resolve(host),
    onDrop: (host, why, err) => this.#dropUnresolved(host, why, err),
  });
  readonly #decisions = new Map<string, Decision>();
  /** The DIRECT leg, opened at the first packet a rule sends direct. */
  #direct: { lease: EgressLease; socket: EgressUdpSocket } | null = null;
  #directOpening: Array<{ payload: Buffer; host: string; port: number; type: string }> | null = null;
  /** Names of DIRECT targets, resolved by the host (the rule chose so). */
  readonly #directNames = new NameLookups({
    resolve: (host) => this.#direct!.lease.egress.resolve(host),
    onDrop: (host, why, err) => this.#dropUnresolved(host, why, err),
  });

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
    const router = this.opts.router;
    if (router?.routed) {
      // One association talks to many peers: each packet goes where the table sends its peer.
      const key = `${host}:${dstPort}`;
      // The client's address and port are the association's (one sender), so the key is the peer.
      const cached = this.#decisions.get(key);
      if (cached) return this.#dispatch(cached, key, payload, host, dstPort, type);
      const flow: Flow = {
        network: 'udp',
        host,
        port: dstPort,
        src: { ip: this.#clientAddress, port: this.#clientPort },
        ...this.opts.flowFacts,
      };
      const known = router.decideNow(flow);
      if (known) return this.#dispatch(known, key, payload, host, dstPort, type);
      if (this.#pendingLookups >= MAX_PENDING_LOOKUPS) {
        stats.udp.otherDropped++;
        return;
      }
      this.#pendingLookups++;
      router.decide(flow).then(
        (d) => {
          this.#pendingLookups--;
          if (!this.#closed) this.#dispatch(d, key, payload, host, dstPort, type);
        },
        (err: Error) => {
          this.#pendingLookups--;
          stats.udp.otherDropped++;
          this.opts.log.warn({ event: 'udp-route-failed', err: err.message }, 'routing a UDP packet failed');
        },
      );
      return;
    }
    this.#toTunnel(payload, host, dstPort, type);
  }

  #dispatch(d: Decision, key: string, payload: Buffer, host: string, port: number, type: string): void {
    if (!this.#decisions.has(key)) {
      if (this.#decisions.size >= MAX_CACHED_DECISIONS) this.#decisions.clear();
      this.#decisions.set(key, d);
      bump(this.opts.stats.routed, d.target);
    }
    if (d.target === 'REJECT') {
      this.opts.stats.udp.rejected++;
      return;
    }
    if (d.target === 'DIRECT') return this.#toDirect(payload, host, port, type);
    this.#toTunnel(payload, host, port, type);
  }

  /** A packet a rule sent direct: the host's own socket; a name resolved by the host (the rule chose so). */
  #toDirect(payload: Buffer, host: string, port: number, type: string): void {
    if (this.#direct) {
      const { socket } = this.#direct;
      if (type !== 'domain') return this.#sendOn(socket, payload, host, port);
      return this.#directNames.with(host, (ip) => this.#sendOn(socket, payload, ip, port));
    }
    if (this.#directOpening) {
      if (this.#directOpening.length < MAX_HELD_DIRECT) this.#directOpening.push({ payload, host, port, type });
      else this.opts.stats.udp.otherDropped++;
      return;
    }
    this.#directOpening = [{ payload, host, port, type }];
    const lease = this.opts.router!.sourceFor('DIRECT').acquire();
    lease.egress.bindUdp().then(
      (socket) => {
        const held = this.#directOpening ?? [];
        this.#directOpening = null;
        if (this.#closed) {
          socket.close();
          lease.release();
          return;
        }
        this.#direct = { lease, socket };
        socket.onMessage((d) => {
          this.#countRouted('DIRECT', d.data.length);
          this.#fromEgress(d);
        });
        for (const p of held) this.#toDirect(p.payload, p.host, p.port, p.type);
      },
      (err: Error) => {
        lease.release();
        this.opts.stats.udp.otherDropped += this.#directOpening?.length ?? 0;
        this.#directOpening = null;
        this.opts.log.debug({ event: 'udp-direct-failed', err: err.message }, 'the direct UDP socket did not open');
      },
    );
  }

  #sendOn(socket: EgressUdpSocket, payload: Buffer, ip: string, port: number): void {
    if (this.#closed) return;
    this.#countRouted('DIRECT', payload.length);
    this.opts.stats.udp.datagramsUp++;
    this.opts.stats.bytesUp += payload.length;
    socket.send(payload, ip, port);
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
    this.#direct?.socket.close();
    this.#direct?.lease.release();
    this.#direct = null;
    this.#directOpening = null;
    this.#decisions.clear();
    this.#directNames.close();
    for (const entry of [...this.#lingering]) this.#endLinger(entry);
    this.#names.close();
  }
}
