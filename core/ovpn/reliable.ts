import { ErrorCodes, GatehopError } from '../common/index.js';

/** One control message as the reliability layer tracks it; the owner encodes it for the wire. */
export interface ControlMessage {
  readonly opcode: number;
  readonly msgId: number;
  readonly payload: Buffer;
}

export interface ReliableChannelOptions {
  /** Unacknowledged messages allowed in flight (1 = stop-and-wait, SoftEther over UDP, notes §2.3). */
  sendWindow: number;
  /** Puts a message on the wire, the first time or again. */
  transmit(msg: ControlMessage): void;
  /** Asked before each retransmission; false keeps the message unacknowledged but silent. */
  mayRetransmit?(msg: ControlMessage): boolean;
  /** Message ids accepted ahead of the next one expected (OpenVPN's reliable window). */
  receiveWindow?: number;
  initialRtoMs?: number;
  maxRtoMs?: number;
  /** Messages waiting for the send window before the channel calls itself stuck. */
  maxBacklog?: number;
}

interface Pending extends ControlMessage {
  rtoMs: number;
  timer: NodeJS.Timeout | null;
}

/**
 * The reliability layer of one key_id's control channel: message ids, a send window, retransmission
 * with a doubling timeout, acknowledgements to send, and in-order delivery through a bounded receive
 * window. It knows nothing about TLS or the packet format, and holds nothing a peer can grow: the
 * receive buffer never exceeds the window, and ids outside it are dropped.
 */
export class ReliableChannel {
  #nextSendId = 0;
  readonly #backlog: Pending[] = [];
  readonly #unacked = new Map<number, Pending>();
  #acks: number[] = [];
  #recvNext = 0;
  #highestAcked = -1;
  readonly #recvBuf = new Map<number, Buffer>();
  #closed = false;
  readonly #o: Required<Omit<ReliableChannelOptions, 'mayRetransmit'>> & Pick<ReliableChannelOptions, 'mayRetransmit'>;

  constructor(opts: ReliableChannelOptions) {
    this.#o = { receiveWindow: 16, initialRtoMs: 2_000, maxRtoMs: 16_000, maxBacklog: 256, ...opts };
  }

  /** The id the next message sent will carry. */
  get nextSendId(): number {
    return this.#nextSendId;
  }

  get inFlight(): number {
    return this.#unacked.size;
  }

  get backlog(): number {
    return this.#backlog.length;
  }

  /** Nothing waiting and nothing unacknowledged. */
  get idle(): boolean {
    return this.#backlog.length === 0 && this.#unacked.size === 0;
  }

  /** Messages received ahead of a gap, waiting for it to fill. */
  get buffered(): number {
    return this.#recvBuf.size;
  }

  /** The next message id expected from the peer. */
  get receiveNext(): number {
    return this.#recvNext;
  }

  get pendingAcks(): number {
    return this.#acks.length;
  }

  /** Queues a message; it goes out as soon as the send window allows. */
  send(opcode: number, payload: Buffer): void {
    if (this.#closed) return;
    if (this.#backlog.length >= this.#o.maxBacklog) {
      throw new GatehopError(
        ErrorCodes.NETSTACK_FAILED,
        `control channel stuck: ${this.#backlog.length} messages wait for the peer to acknowledge`,
      );
    }
    this.#backlog.push({ opcode, msgId: this.#nextSendId++, payload, rtoMs: this.#o.initialRtoMs, timer: null });
    this.#pump();
  }

  /** The highest message id the peer acknowledged (-1: none yet): proof that it received that far. */
  get highestAcked(): number {
    return this.#highestAcked;
  }

  /** The peer acknowledged these ids (unknown ones are ignored); frees window for what waits. */
  acknowledged(ids: readonly number[]): void {
    for (const id of ids) {
      const p = this.#unacked.get(id);
      if (!p) continue;
      this.#highestAcked = Math.max(this.#highestAcked, id);
      if (p.timer) clearTimeout(p.timer);
      this.#unacked.delete(id);
    }
    this.#pump();
  }

  /**
   * The peer's reset (hard or soft) with its message id: it is acknowledged, and in-order delivery
   * continues after it. Only the first one counts; a repeat is acknowledged again.
   */
  acceptReset(msgId: number): boolean {
    this.#acks.push(msgId);
    if (this.#recvNext !== 0) return false;
    this.#recvNext = msgId + 1;
    return true;
  }

  /**
   * A message from the peer. Returns the payloads now deliverable in order (often none). Anything
   * in or behind the window is acknowledged (behind: our ack was lost, say it again); ids beyond
   * the window are dropped unacknowledged so the peer sends them again later.
   */
  receive(msgId: number, payload: Buffer): Buffer[] {
    if (msgId < this.#recvNext) {
      this.#acks.push(msgId);
      return [];
    }
    if (msgId >= this.#recvNext + this.#o.receiveWindow) return [];
    this.#acks.push(msgId);
    if (!this.#recvBuf.has(msgId)) this.#recvBuf.set(msgId, payload);
    const out: Buffer[] = [];
    for (let next = this.#recvBuf.get(this.#recvNext); next !== undefined; next = this.#recvBuf.get(this.#recvNext)) {
      this.#recvBuf.delete(this.#recvNext++);
      out.push(next);
    }
    return out;
  }

  /** Up to `max` acknowledgements to send, oldest first. */
  takeAcks(max: number): number[] {
    return this.#acks.splice(0, max);
  }

  close(): void {
    this.#closed = true;
    for (const p of this.#unacked.values()) if (p.timer) clearTimeout(p.timer);
    this.#unacked.clear();
    this.#backlog.length = 0;
    this.#recvBuf.clear();
    this.#acks = [];
  }

  #pump(): void {
    while (!this.#closed && this.#backlog.length > 0 && this.#unacked.size < this.#o.sendWindow) {
      const p = this.#backlog.shift()!;
      this.#unacked.set(p.msgId, p);
      this.#transmit(p);
    }
  }

  #transmit(p: Pending): void {
    this.#o.transmit(p);
    if (this.#closed || !this.#unacked.has(p.msgId)) return; // transmit may close or ack synchronously
    p.timer = setTimeout(() => {
      p.timer = null;
      if (this.#closed || !this.#unacked.has(p.msgId)) return;
      if (this.#o.mayRetransmit && !this.#o.mayRetransmit(p)) return;
      p.rtoMs = Math.min(p.rtoMs * 2, this.#o.maxRtoMs);
      this.#transmit(p);
    }, p.rtoMs);
    p.timer.unref();
  }
}
