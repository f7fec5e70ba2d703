import type { Logger } from '../common/index.js';
import type { Egress, EgressLease, EgressSource, EgressUdpSocket, UdpDatagram } from '../contracts/index.js';
import { detach } from '../common/index.js';
import type { Decision, Flow } from '../rules/index.js';
import { NameLookups, type Router } from '../router/index.js';
import type { ProxyStats } from './proxy-stats.js';
import { UdpDirectLeg } from './udp-direct-leg.js';
import { UdpPeerDecisions } from './udp-peer-decisions.js';

/** After re-homing, the old egress socket still takes replies this long. */
const REHOME_LINGER_MS = 5_000;

export interface UdpRelayOptions {
  /** Where the relay leases its egress; at a switch it re-homes to the new active one. */
  readonly source: EgressSource;
  /** Routes each packet by its peer: TUNNEL (source), DIRECT (a socket on the host's network) or dropped. */
  readonly router?: Router;
  readonly stats: ProxyStats;
  readonly log: Logger;
  /** Where the packets come from (SRC-IP and SRC-PORT rules), and what else rules may ask of them. */
  readonly flowFacts: () => Pick<Flow, 'src' | 'inPort' | 'inType' | 'inUser'>;
  /** Each reply, from the tunnel leg or the DIRECT one. */
  readonly onReply: (d: UdpDatagram) => void;
  readonly onError: (err: Error) => void;
}

/**
 * The egress side of one UDP client (a SOCKS5 association, a captured program's UDP socket): each
 * packet goes where the rule table sends its peer, on a tunnel socket leased from the active egress
 * or a DIRECT socket on the host's network; replies from either come back to `onReply`. When its
 * egress starts draining, the relay opens a new tunnel socket on the new active egress (re-homing);
 * the old one lingers briefly for replies in flight.
 */
export class UdpRelay {
  #egressSocket: EgressUdpSocket | null = null;
  #lease: EgressLease | null = null;
  readonly #lingering = new Set<{ socket: EgressUdpSocket; lease: EgressLease; timer: NodeJS.Timeout }>();
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

  constructor(private readonly opts: UdpRelayOptions) {
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

  /** Leases the active egress and opens the tunnel socket on it. */
  async open(): Promise<void> {
    await this.#bindEgress();
  }

  get egress(): Egress | null {
    return this.#lease?.egress ?? null;
  }

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
      throw new Error('UDP relay closed while opening');
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

  /** One packet from the client to host:port (`type` 'domain' when host is a name). */
  send(payload: Buffer, host: string, port: number, type: string): void {
    if (this.#closed) return;
    if (this.#decisions && this.opts.router?.routed) {
      const flow: Flow = { network: 'udp', host, port, ...this.opts.flowFacts() };
      this.#decisions.route(flow, (d) => this.#dispatch(d, payload, host, port, type));
      return;
    }
    this.#toTunnel(payload, host, port, type);
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
    if (err)
      this.opts.log.debug({ event: 'udp-resolve-failed', host, why, err: err.message }, 'UDP target did not resolve');
  }

  #send(payload: Buffer, ip: string, port: number): void {
    if (this.#closed || !this.#egressSocket) return;
    this.opts.stats.udp.datagramsUp++;
    this.opts.stats.bytesUp += payload.length;
    this.#egressSocket.send(payload, ip, port);
  }

  #fromEgress(d: UdpDatagram): void {
    if (this.#closed) return;
    this.opts.stats.udp.datagramsDown++;
    this.opts.stats.closedBytesDown += d.data.length;
    this.opts.onReply(d);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#egressSocket?.close();
    this.#lease?.release();
    this.#lease = null;
    this.#direct.close();
    this.#decisions?.clear();
    for (const entry of [...this.#lingering]) this.#endLinger(entry);
    this.#names.close();
  }
}
