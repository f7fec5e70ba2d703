/** The receive arena's size: a batch's worth of segments (64 KiB is ~45 full segments). */
const ARENA_BYTES = 64 * 1024;
/** Runs shorter than this are copied out of the arena (ownSmall). */
const SMALL_COPY_BYTES = 4 * 1024;

/**
 * Slices handed out one after another from one backing store, a new one when it is full: what
 * stays alive is the slices' store, however many slices there were. The store is made on first use.
 */
class Arena {
  #buf: Buffer | null = null;
  #at = 0;

  constructor(private readonly bytes: number) {}

  /** `len` bytes of `from` at `ptr`, copied into the arena. */
  copyIn(from: Buffer, ptr: number, len: number): Buffer {
    if (!this.#buf || this.#at + len > this.#buf.length) {
      this.#buf = Buffer.allocUnsafeSlow(Math.max(this.bytes, len));
      this.#at = 0;
    }
    const at = this.#at;
    from.copy(this.#buf, at, ptr, ptr + len);
    this.#at += len;
    return this.#buf.subarray(at, at + len);
  }
}

/**
 * Bytes in and out of one lwIP instance's WebAssembly memory: a Buffer over the whole memory (made
 * again only when the memory grows, not per packet), received TCP data copied into an arena, and
 * everything else copied out on its own.
 */
export class LwipMemory {
  /** A Buffer over lwIP's whole memory, made again only when the memory grows (not per packet). */
  #view: Buffer | null = null;
  /**
   * Received TCP data is copied out of lwIP into this arena, segment after segment, instead of a
   * new buffer per segment: a stream's run of segments in one batch is then one contiguous slice
   * (no concat), and the garbage per segment is a view, not a backing store.
   */
  readonly #arena = new Arena(ARENA_BYTES);
  /** With `packetArena`: packets out are copied into an arena of their own, as data in is (see copyOut). */
  readonly #packets = new Arena(ARENA_BYTES * 4);

  constructor(
    private readonly memory: () => WebAssembly.Memory,
    /**
     * Packets out share arenas instead of a buffer each: for an owner that is done with each packet
     * within the turn (the capture gateway copies them into its frames), so no arena is pinned,
     * and a download's thousands of big packets are not thousands of backing stores to collect.
     */
    private readonly packetArena = false,
  ) {}

  /** lwIP's memory as a Buffer; a new view only after the memory grew (the old one is detached then). */
  view(): Buffer {
    const buffer = this.memory().buffer;
    if (this.#view?.buffer !== buffer) this.#view = Buffer.from(buffer);
    return this.#view;
  }

  /** TCP data out of lwIP into the arena (see #arena); a new arena when this one is full. */
  copyData(ptr: number, len: number): Buffer {
    return this.#arena.copyIn(this.view(), ptr, len);
  }

  /** A packet out: a buffer of its own, or with `packetArena` a slice of the packet arena. */
  copyPacket(ptr: number, len: number): Buffer {
    if (!this.packetArena) return this.copyOut(ptr, len);
    return this.#packets.copyIn(this.view(), ptr, len);
  }

  /** Anything else lwIP hands out (datagrams, replies): a buffer of its own. */
  copyOut(ptr: number, len: number): Buffer {
    const b = Buffer.allocUnsafe(len);
    b.set(new Uint8Array(this.memory().buffer, ptr, len));
    return b;
  }
}

/** Chunks as one Buffer: a single slice when they lie end to end in one arena (the usual case), else a copy. */
export function joined(chunks: Buffer[]): Buffer {
  const first = chunks[0]!;
  let end = first.byteOffset + first.length;
  for (let i = 1; i < chunks.length; i++) {
    const c = chunks[i]!;
    if (c.buffer !== first.buffer || c.byteOffset !== end) return Buffer.concat(chunks);
    end += c.length;
  }
  return Buffer.from(first.buffer, first.byteOffset, end - first.byteOffset);
}

/**
 * A small run of data gets its own copy: as a slice it would keep its whole 64 KiB arena alive for
 * as long as a slow reader holds it (a keep-alive's few bytes pinning 64 KiB each).
 */
export function ownSmall(data: Buffer): Buffer {
  return data.length < SMALL_COPY_BYTES && data.buffer.byteLength > data.length * 4 ? Buffer.from(data) : data;
}
