import type { EgressUdpSocket, UdpDatagram } from '../../contracts/index.js';
import type { ToTunnel } from './messages.js';
import { ownedBuffer, type Outbox } from './outbox.js';

/** The main thread's end of a UDP socket on a tunnel worker's stack. */
export class WorkerUdpSocket implements EgressUdpSocket {
  readonly #id: number;
  readonly #out: Outbox<ToTunnel>;
  readonly #onGone: () => void;
  #messageHandlers: Array<(d: UdpDatagram) => void> = [];
  #closeHandlers: Array<(err?: Error) => void> = [];
  #closed = false;

  constructor(id: number, out: Outbox<ToTunnel>, onGone: () => void) {
    this.#id = id;
    this.#out = out;
    this.#onGone = onGone;
  }

  send(data: Buffer, address: string, port: number): void {
    if (this.#closed) return;
    // The caller keeps its Buffer: the datagram crosses in a copy of its own.
    const copy = ownedBuffer([data], data.length, false);
    this.#out.send({ t: 'udp-send', id: this.#id, data: copy, address, port }, copy);
  }

  onMessage(handler: (d: UdpDatagram) => void): void {
    this.#messageHandlers.push(handler);
  }

  onClose(handler: (err?: Error) => void): void {
    if (this.#closed) handler();
    else this.#closeHandlers.push(handler);
  }

  deliver(d: UdpDatagram): void {
    for (const h of this.#messageHandlers) h(d);
  }

  /** The tunnel closed the socket (or is gone). */
  onClosedByTunnel(): void {
    this.#finish();
  }

  close(): void {
    if (this.#closed) return;
    this.#out.send({ t: 'udp-close', id: this.#id });
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#onGone();
    const handlers = this.#closeHandlers;
    this.#closeHandlers = [];
    this.#messageHandlers = [];
    for (const h of handlers) h();
  }
}
