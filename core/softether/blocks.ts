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

export class BlockReader {
  #mode: Mode = 'count';
  #left = 0;
  #want = 4;
  #buf: Buffer = Buffer.alloc(0);
  /** Blocks over MAX_FRAME (and ≤ MAX_BLOCK), dropped as SoftEther drops them. */
  oversized = 0;
  keepAlives = 0;

  /** The frames completed by this chunk, in order; GH_ERR_SOFTETHER_PROTOCOL past the bounds. */
  push(chunk: Buffer): Buffer[] {
    const frames: Buffer[] = [];
    const buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    let at = 0;
    while (buf.length - at >= this.#want) {
      const want = this.#want;
      switch (this.#mode) {
        case 'count': {
          const n = buf.readUInt32BE(at);
          if (n === KEEP_ALIVE_MAGIC) this.#next('keepalive-size', 4);
          else if (n !== 0) {
            this.#left = n;
            this.#next('size', 4);
          }
          break;
        }
        case 'size': {
          const size = buf.readUInt32BE(at);
          if (size > MAX_BLOCK) throw bad(`a data block of ${size} bytes (at most ${MAX_BLOCK})`);
          if (size === 0) this.#blockDone();
          else this.#next('block', size);
          break;
        }
        case 'block':
          if (want > MAX_FRAME) this.oversized++;
          // A copy: the chunk it came in is not kept alive by a frame that lingers in the stack.
          else frames.push(Buffer.from(buf.subarray(at, at + want)));
          this.#blockDone();
          break;
        case 'keepalive-size': {
          const size = buf.readUInt32BE(at);
          if (size > MAX_KEEPALIVE) throw bad(`a keep-alive of ${size} bytes (at most ${MAX_KEEPALIVE})`);
          this.keepAlives++;
          if (size === 0) this.#next('count', 4);
          else this.#next('keepalive', size);
          break;
        }
        case 'keepalive':
          this.#next('count', 4);
          break;
      }
      at += want;
    }
    this.#buf = at === buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(at));
    return frames;
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

/** One send of frames: the count, then each frame with its size. */
export function encodeBlocks(frames: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [u32(frames.length)];
  for (const f of frames) {
    if (f.length > MAX_FRAME) throw new RangeError(`a frame of ${f.length} bytes (at most ${MAX_FRAME})`);
    parts.push(u32(f.length), f);
  }
  return Buffer.concat(parts);
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
