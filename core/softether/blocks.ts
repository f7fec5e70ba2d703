import { randomBytes, randomInt } from 'node:crypto';
import { ErrorCodes, GatehopError } from '../common/index.js';

/** SoftEther's MAX_PACKET_SIZE: the largest Ethernet frame a session carries. */
export const MAX_FRAME = 1600;
/** Past this a block is not a frame at all: SoftEther drops the connection (Connection.c). */
export const MAX_BLOCK = 2 * MAX_FRAME;
/** KEEP_ALIVE_MAGIC in the block count's place, then at most MAX_KEEPALIVE_SIZE bytes. */
export const KEEP_ALIVE_MAGIC = 0xffffffff;
export const MAX_KEEPALIVE = 512;

/**
 * The data inside an established SE-VPN connection (src/Cedar/Connection.c `ConnectionSend`,
 * `ConnectionReceive`): a send is `u32 n` then n × (`u32 size` + one Ethernet frame), or a
 * keep-alive (`u32 0xFFFFFFFF`, `u32 size` ≤ 512, random bytes). Read as a stream: the reader
 * holds at most one block, whatever count a send claims, so a node cannot make it buffer more.
 */
type Mode = 'count' | 'size' | 'block' | 'keepalive-size' | 'keepalive';

const EMPTY = Buffer.alloc(0);

export class BlockReader {
  #mode: Mode = 'count';
  #left = 0;
  #want = 4;
  /** The start of the item a chunk ended in (fewer than #want bytes, so at most one block). */
  #partial: Buffer = EMPTY;
  /** Blocks over MAX_FRAME (and ≤ MAX_BLOCK), dropped as SoftEther drops them. */
  oversized = 0;
  keepAlives = 0;

  /** Bytes held between pushes: the start of one item, never more than a block. */
  get buffered(): number {
    return this.#partial.length;
  }

  /**
   * The frames completed by this chunk, in order; GH_ERR_SOFTETHER_PROTOCOL past the bounds.
   * Frames whole in the chunk are views into it (copy one to keep it); only an item cut by the
   * chunk's end is copied, so a 16 KiB record is never copied whole.
   */
  push(chunk: Buffer): Buffer[] {
    const frames: Buffer[] = [];
    let at = 0;
    if (this.#partial.length > 0) {
      const need = this.#want - this.#partial.length;
      if (chunk.length < need) {
        this.#partial = Buffer.concat([this.#partial, chunk]);
        return frames;
      }
      const item = Buffer.concat([this.#partial, chunk.subarray(0, need)]);
      this.#partial = EMPTY;
      this.#step(item, 0, frames, false);
      at = need;
    }
    while (chunk.length - at >= this.#want) {
      const want = this.#want;
      this.#step(chunk, at, frames, true);
      at += want;
    }
    if (at < chunk.length) this.#partial = Buffer.from(chunk.subarray(at));
    return frames;
  }

  /** Reads the #want bytes at buf[at]; `shared`: buf is the caller's chunk, so a frame is copied out. */
  #step(buf: Buffer, at: number, frames: Buffer[], shared: boolean): void {
    const want = this.#want;
    switch (this.#mode) {
      case 'count': {
        const n = buf.readUInt32BE(at);
        if (n === KEEP_ALIVE_MAGIC) this.#next('keepalive-size', 4);
        else if (n !== 0) {
          this.#left = n;
          this.#next('size', 4);
        }
        return;
      }
      case 'size': {
        const size = buf.readUInt32BE(at);
        if (size > MAX_BLOCK) throw bad(`a data block of ${size} bytes (at most ${MAX_BLOCK})`);
        if (size === 0) this.#blockDone();
        else this.#next('block', size);
        return;
      }
      case 'block':
        if (want > MAX_FRAME) this.oversized++;
        // A view, not a copy: the one reader of frames (the stack) copies each into lwIP's memory
        // within the call (TunnelLink.onPackets); copying here took over half the reader's time.
        else frames.push(shared ? buf.subarray(at, at + want) : buf);
        this.#blockDone();
        return;
      case 'keepalive-size': {
        const size = buf.readUInt32BE(at);
        if (size > MAX_KEEPALIVE) throw bad(`a keep-alive of ${size} bytes (at most ${MAX_KEEPALIVE})`);
        this.keepAlives++;
        if (size === 0) this.#next('count', 4);
        else this.#next('keepalive', size);
        return;
      }
      case 'keepalive':
        this.#next('count', 4);
        return;
    }
  }

  #next(mode: Mode, want: number): void {
    this.#mode = mode;
    this.#want = want;
  }

  #blockDone(): void {
    this.#left--;
    if (this.#left > 0) this.#next('size', 4);
    else this.#next('count', 4);
  }
}

/** One send of frames: the count, then each frame with its size (one buffer, written in one pass). */
export function encodeBlocks(frames: readonly Buffer[]): Buffer {
  let size = 4;
  for (const f of frames) {
    if (f.length > MAX_FRAME) throw new RangeError(`a frame of ${f.length} bytes (at most ${MAX_FRAME})`);
    size += 4 + f.length;
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.writeUInt32BE(frames.length, 0);
  for (const f of frames) {
    at = out.writeUInt32BE(f.length, at);
    at += f.copy(out, at);
  }
  return out;
}

/** A keep-alive with random padding, as SoftEther's `SendKeepAlive` makes them. */
export function encodeKeepAlive(size = randomInt(MAX_KEEPALIVE)): Buffer {
  return Buffer.concat([u32(KEEP_ALIVE_MAGIC), u32(size), randomBytes(size)]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function bad(message: string): GatehopError {
  return new GatehopError(ErrorCodes.SOFTETHER_PROTOCOL, message);
}
