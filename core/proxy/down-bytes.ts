import type { ClientConnection } from '../contracts/index.js';
import type { TcpQueues } from './tcp-queues.js';

/**
 * What a session's client has taken: bytes handed to the kernel for it (bytesWritten less what Node
 * still buffers) less what the kernel still holds for it, less the handshake's own replies. The
 * count never goes back (the kernel's queues are sampled, not exact), and is fixed at close.
 */
export class DownBytes {
  /** Bytes written to the client before its relay began (handshake replies): not payload. */
  #base = 0;
  #seen = 0;
  /** Set at close: what the client was handed in all. */
  #final: number | null = null;
  /** A protocol whose handshake replies come before its payload (SOCKS5): nothing counts before the relay. */
  #fromRelay = false;
  #relaying = false;

  constructor(
    private readonly socket: ClientConnection,
    private readonly queues: TcpQueues,
  ) {}

  /** For protocols whose handshake replies are not payload: down bytes count from the relay on. */
  countFromRelay(): void {
    this.#fromRelay = true;
  }

  /** The relay starts: what was written so far was the handshake's. */
  relayStarts(): void {
    this.#base = this.socket.bytesWritten ?? 0;
    this.#relaying = true;
  }

  get value(): number {
    if (this.#final !== null) return this.#final;
    if (this.#fromRelay && !this.#relaying) return 0;
    const s = this.socket;
    const dispatched = (s.bytesWritten ?? 0) - s.writableLength - this.#base;
    if (dispatched <= this.#seen) return this.#seen;
    const queued =
      s.remoteAddress && s.localAddress
        ? this.queues.queued(
            { address: s.localAddress, port: s.localPort ?? 0 },
            { address: s.remoteAddress, port: s.remotePort ?? 0 },
          )
        : 0;
    this.#seen = Math.max(this.#seen, dispatched - queued);
    return this.#seen;
  }

  /**
   * The count fixed at close, before the socket goes (destroying it drops what Node still buffers):
   * what the kernel has is the client's (a closing connection delivers its queue).
   */
  close(): number {
    this.#final =
      this.#fromRelay && !this.#relaying
        ? 0
        : Math.max(this.#seen, (this.socket.bytesWritten ?? 0) - this.socket.writableLength - this.#base);
    return this.#final;
  }
}
