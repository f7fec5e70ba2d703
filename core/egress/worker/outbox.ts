/** The end of a MessagePort (or a Worker, or parentPort) that the outbox posts to. */
export interface PostTarget {
  postMessage(value: unknown, transfer?: readonly ArrayBuffer[]): void;
}

const BUSY_GAP_MS = 1;

type Queued<M> = { msg: M; transfer?: ArrayBuffer } | { id: number; parts: Buffer[]; bytes: number };

/**
 * Messages to the other thread, posted as one array per event-loop turn: a bulk transfer costs one
 * postMessage per turn, not one per packet. Stream data is merged while it waits: consecutive
 * chunks for one stream become one `ArrayBuffer` that is transferred, not cloned. With
 * `giveAway`, a lone chunk that owns its whole buffer is transferred as is (zero copies; the
 * worker does this with what lwIP hands it, which nobody else holds); otherwise chunks are copied
 * once into an exactly sized buffer, so a caller's Buffer is never detached and a pooled 8 KiB slab
 * never crosses whole. Order is kept: a stream's data is never merged past a message queued after it.
 */
export class Outbox<M extends { t: string }> {
  readonly #target: PostTarget;
  readonly #dataMessage: (id: number, data: ArrayBuffer) => M;
  #queue: Array<Queued<M>> = [];
  #scheduled = false;
  #closed = false;
  #lastFlushAt = 0;

  readonly #giveAway: boolean;

  constructor(target: PostTarget, dataMessage: (id: number, data: ArrayBuffer) => M, opts: { giveAway: boolean }) {
    this.#target = target;
    this.#dataMessage = dataMessage;
    this.#giveAway = opts.giveAway;
  }

  /** `transfer`: a buffer of the message's own that moves with it instead of being cloned. */
  send(msg: M, transfer?: ArrayBuffer): void {
    if (this.#closed) return;
    this.#queue.push(transfer ? { msg, transfer } : { msg });
    this.#schedule();
  }

  /** Queues stream bytes; the caller accounts for them against the stream's window. */
  sendData(id: number, chunk: Buffer): void {
    if (this.#closed || chunk.length === 0) return;
    const last = this.#queue[this.#queue.length - 1];
    if (last && 'parts' in last && last.id === id) {
      last.parts.push(chunk);
      last.bytes += chunk.length;
    } else {
      this.#queue.push({ id, parts: [chunk], bytes: chunk.length });
    }
    this.#schedule();
  }

  /** Posts what is queued now (the turn's end does it otherwise). */
  flush(): void {
    this.#scheduled = false;
    if (this.#queue.length === 0 || this.#closed) return;
    this.#lastFlushAt = performance.now();
    const queue = this.#queue;
    this.#queue = [];
    const batch: M[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const q of queue) {
      if ('msg' in q) {
        batch.push(q.msg);
        if (q.transfer) transfer.push(q.transfer);
        continue;
      }
      const data = ownedBuffer(q.parts, q.bytes, this.#giveAway);
      transfer.push(data);
      batch.push(this.#dataMessage(q.id, data));
    }
    this.#target.postMessage(batch, transfer);
  }

  /** Drops what is queued; nothing more is posted. */
  close(): void {
    this.#closed = true;
    this.#queue = [];
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // Idle, the batch goes at the end of this turn. Busy (the last post was under a millisecond
    // ago), it waits for the next timer tick so one post carries many turns' worth: a post costs
    // both threads ~10 µs, and at 10k packets/s a post per turn was a tenth of a core.
    if (performance.now() - this.#lastFlushAt >= BUSY_GAP_MS) setImmediate(() => this.flush());
    else setTimeout(() => this.flush(), 1);
  }
}

/** One ArrayBuffer holding exactly these bytes, safe to transfer (nobody else views it). */
export function ownedBuffer(parts: readonly Buffer[], bytes: number, giveAway: boolean): ArrayBuffer {
  const whole = giveAway && parts.length === 1 ? wholeBuffer(parts[0]!) : null;
  if (whole) return whole;
  const out = new Uint8Array(new ArrayBuffer(bytes));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out.buffer;
}

/** A slice of Node's shared allocation pool, or a view into a SharedArrayBuffer, may not be given away. */
function wholeBuffer(b: Buffer): ArrayBuffer | null {
  const ab = b.buffer;
  return ab instanceof ArrayBuffer && b.byteOffset === 0 && b.byteLength === ab.byteLength ? ab : null;
}
