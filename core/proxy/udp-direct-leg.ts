import type { Logger } from '../common/index.js';
import type { EgressLease, EgressSource, EgressUdpSocket, UdpDatagram } from '../contracts/index.js';
import { NameLookups } from '../router/index.js';
import type { ProxyStats } from './proxy-stats.js';

/** Packets held while the DIRECT socket opens; more are dropped (UDP may drop). */
const MAX_HELD = 16;

/**
 * A UDP association's second leg: the packets a rule sends DIRECT, on a socket of the host's own
 * network opened at the first such packet (held meanwhile, up to MAX_HELD), names resolved by the
 * host (the rule chose so). Replies go to `onDatagram`, as the tunnel leg's do.
 */
export class UdpDirectLeg {
  #open: { lease: EgressLease; socket: EgressUdpSocket } | null = null;
  #opening: Array<{ payload: Buffer; host: string; port: number; type: string }> | null = null;
  #closed = false;
  readonly #names: NameLookups;

  constructor(
    private readonly o: {
      source: () => EgressSource;
      stats: ProxyStats;
      log: Logger;
      /** A packet out (counted by the association), and a reply in. */
      sent: (bytes: number) => void;
      onDatagram: (d: UdpDatagram) => void;
      onUnresolved: (host: string, why: 'full' | 'no-answer' | 'failed', err?: Error) => void;
    },
  ) {
    this.#names = new NameLookups({
      resolve: (host) => this.#open!.lease.egress.resolve(host),
      onDrop: (host, why, err) => this.o.onUnresolved(host, why, err),
    });
  }

  send(payload: Buffer, host: string, port: number, type: string): void {
    if (this.#open) {
      const { socket } = this.#open;
      if (type !== 'domain') return this.#sendOn(socket, payload, host, port);
      return this.#names.with(host, (ip) => this.#sendOn(socket, payload, ip, port));
    }
    if (this.#opening) {
      if (this.#opening.length < MAX_HELD) this.#opening.push({ payload, host, port, type });
      else this.o.stats.udp.otherDropped++;
      return;
    }
    this.#opening = [{ payload, host, port, type }];
    const lease = this.o.source().acquire();
    lease.egress.bindUdp().then(
      (socket) => {
        const held = this.#opening ?? [];
        this.#opening = null;
        if (this.#closed) {
          socket.close();
          lease.release();
          return;
        }
        this.#open = { lease, socket };
        socket.onMessage((d) => this.o.onDatagram(d));
        for (const p of held) this.send(p.payload, p.host, p.port, p.type);
      },
      (err: Error) => {
        lease.release();
        this.o.stats.udp.otherDropped += this.#opening?.length ?? 0;
        this.#opening = null;
        this.o.log.debug({ event: 'udp-direct-failed', err: err.message }, 'the direct UDP socket did not open');
      },
    );
  }

  close(): void {
    this.#closed = true;
    this.#open?.socket.close();
    this.#open?.lease.release();
    this.#open = null;
    this.#opening = null;
    this.#names.close();
  }

  #sendOn(socket: EgressUdpSocket, payload: Buffer, ip: string, port: number): void {
    if (this.#closed) return;
    this.o.sent(payload.length);
    this.o.stats.udp.datagramsUp++;
    this.o.stats.bytesUp += payload.length;
    socket.send(payload, ip, port);
  }
}
