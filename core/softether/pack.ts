import { randomBytes, randomInt } from 'node:crypto';
import { ErrorCodes, GatehopError } from '../common/index.js';

/**
 * SoftEther's PACK (src/Mayaqua/Pack.c): named elements, each one typed list of values, all
 * integers big-endian. What a node sends is untrusted: the decoder bounds the whole, the element
 * count, the values per element and every size before it allocates, and refuses what SoftEther's
 * own reader refuses (unknown types, an empty or over-long name, a name twice).
 */
export const PackType = { INT: 0, DATA: 1, STR: 2, UNISTR: 3, INT64: 4 } as const;
export type PackType = (typeof PackType)[keyof typeof PackType];

type Values =
  | { type: typeof PackType.INT; values: number[] }
  | { type: typeof PackType.DATA; values: Buffer[] }
  | { type: typeof PackType.STR; values: string[] }
  | { type: typeof PackType.UNISTR; values: string[] }
  | { type: typeof PackType.INT64; values: bigint[] };

export interface PackLimits {
  /** The encoded PACK (SoftEther's server caps a PACK it receives over HTTP at 64 KiB). */
  maxBytes: number;
  maxElements: number;
  maxValuesPerElement: number;
}

/** A Hello or a Welcome is a few hundred bytes and a few dozen elements. */
export const DEFAULT_PACK_LIMITS: PackLimits = { maxBytes: 64 * 1024, maxElements: 1024, maxValuesPerElement: 64 };
/** SoftEther's MAX_ELEMENT_NAME_LEN. */
const MAX_NAME = 63;

export class Pack {
  /** By lower-cased name: SoftEther looks names up without regard to case. */
  readonly #elements = new Map<string, { name: string; v: Values }>();

  get size(): number {
    return this.#elements.size;
  }

  names(): string[] {
    return [...this.#elements.values()].map((e) => e.name);
  }

  #set(name: string, v: Values): this {
    if (name.length === 0 || Buffer.byteLength(name) > MAX_NAME || name.includes('\0'))
      throw new RangeError(`a PACK element name is 1..${MAX_NAME} bytes: ${JSON.stringify(name)}`);
    this.#elements.set(name.toLowerCase(), { name, v });
    return this;
  }

  addInt(name: string, value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`${name}: not a u32`);
    return this.#set(name, { type: PackType.INT, values: [value] });
  }

  addBool(name: string, value: boolean): this {
    return this.addInt(name, value ? 1 : 0);
  }

  addInt64(name: string, value: bigint): this {
    return this.#set(name, { type: PackType.INT64, values: [BigInt.asUintN(64, value)] });
  }

  addData(name: string, value: Buffer): this {
    return this.#set(name, { type: PackType.DATA, values: [value] });
  }

  addStr(name: string, value: string): this {
    return this.#set(name, { type: PackType.STR, values: [value] });
  }

  addUniStr(name: string, value: string): this {
    return this.#set(name, { type: PackType.UNISTR, values: [value] });
  }

  typeOf(name: string): PackType | null {
    return this.#elements.get(name.toLowerCase())?.v.type ?? null;
  }

  getInt(name: string): number | null {
    const e = this.#elements.get(name.toLowerCase())?.v;
    return e?.type === PackType.INT ? (e.values[0] ?? null) : null;
  }

  getBool(name: string): boolean {
    return (this.getInt(name) ?? 0) !== 0;
  }

  getInt64(name: string): bigint | null {
    const e = this.#elements.get(name.toLowerCase())?.v;
    return e?.type === PackType.INT64 ? (e.values[0] ?? null) : null;
  }

  getData(name: string): Buffer | null {
    const e = this.#elements.get(name.toLowerCase())?.v;
    return e?.type === PackType.DATA ? (e.values[0] ?? null) : null;
  }

  /** A STR or a UNISTR element's first value. */
  getStr(name: string): string | null {
    const e = this.#elements.get(name.toLowerCase())?.v;
    return e?.type === PackType.STR || e?.type === PackType.UNISTR ? (e.values[0] ?? null) : null;
  }

  /**
   * The wire form. `pencore` (random DATA, 0–999 bytes) is what SoftEther's client adds to every
   * PACK it sends over HTTP, so lengths do not give the message away.
   */
  encode(opts: { pencore?: boolean } = {}): Buffer {
    const elements = [...this.#elements.values()];
    if (opts.pencore)
      elements.push({ name: 'pencore', v: { type: PackType.DATA, values: [randomBytes(randomInt(1000))] } });
    const parts: Buffer[] = [u32(elements.length)];
    for (const { name, v } of elements) {
      const n = Buffer.from(name, 'utf8');
      parts.push(u32(n.length + 1), n, u32(v.type), u32(v.values.length));
      for (const value of v.values) parts.push(...encodeValue(v.type, value));
    }
    return Buffer.concat(parts);
  }

  /** Reads a PACK; GH_ERR_SOFTETHER_PROTOCOL on anything malformed or past the limits. Trailing bytes are ignored, as SoftEther does. */
  static decode(buf: Buffer, limits: PackLimits = DEFAULT_PACK_LIMITS): Pack {
    if (buf.length > limits.maxBytes) throw bad(`a PACK of ${buf.length} bytes (at most ${limits.maxBytes})`);
    const r = new Reader(buf);
    const count = r.u32('the element count');
    if (count > limits.maxElements) throw bad(`${count} elements (at most ${limits.maxElements})`);
    // Every element takes at least 13 bytes: a PACK cannot claim more than its length holds.
    if (count * 13 > buf.length) throw bad(`${count} elements in ${buf.length} bytes`);
    const pack = new Pack();
    for (let i = 0; i < count; i++) {
      const nameLen = r.u32('a name length');
      if (nameLen === 0 || nameLen - 1 > MAX_NAME) throw bad(`an element name of ${nameLen - 1} bytes`);
      const name = r.bytes(nameLen - 1, 'a name').toString('utf8');
      const type = r.u32(`the type of ${name}`);
      const n = r.u32(`the value count of ${name}`);
      if (n > limits.maxValuesPerElement) throw bad(`${name}: ${n} values (at most ${limits.maxValuesPerElement})`);
      const v = readValues(r, type, n, name);
      if (pack.#elements.has(name.toLowerCase())) throw bad(`element ${name} twice`);
      if (name.length === 0 || name.includes('\0')) throw bad(`an element name ${JSON.stringify(name)}`);
      pack.#elements.set(name.toLowerCase(), { name, v });
    }
    return pack;
  }
}

function readValues(r: Reader, type: number, n: number, name: string): Values {
  switch (type) {
    case PackType.INT:
      return { type, values: Array.from({ length: n }, () => r.u32(name)) };
    case PackType.INT64:
      return { type, values: Array.from({ length: n }, () => r.u64(name)) };
    case PackType.DATA:
      return { type, values: Array.from({ length: n }, () => r.bytes(r.u32(`${name}'s size`), name)) };
    case PackType.STR:
      return {
        type,
        values: Array.from({ length: n }, () => r.bytes(r.u32(`${name}'s length`), name).toString('latin1')),
      };
    case PackType.UNISTR:
      return {
        type,
        values: Array.from({ length: n }, () => {
          // UTF-8 with its terminating NUL counted in the size; what follows a NUL is not text.
          const raw = r.bytes(r.u32(`${name}'s size`), name);
          const nul = raw.indexOf(0);
          return (nul < 0 ? raw : raw.subarray(0, nul)).toString('utf8');
        }),
      };
    default:
      throw bad(`element ${name} of unknown type ${type}`);
  }
}

function encodeValue(type: PackType, value: number | bigint | Buffer | string): Buffer[] {
  switch (type) {
    case PackType.INT:
      return [u32(value as number)];
    case PackType.INT64: {
      const b = Buffer.alloc(8);
      b.writeBigUInt64BE(value as bigint);
      return [b];
    }
    case PackType.DATA:
      return [u32((value as Buffer).length), value as Buffer];
    case PackType.STR: {
      const s = Buffer.from(value as string, 'latin1');
      return [u32(s.length), s];
    }
    case PackType.UNISTR: {
      const s = Buffer.concat([Buffer.from(value as string, 'utf8'), Buffer.alloc(1)]);
      return [u32(s.length), s];
    }
  }
}

class Reader {
  #at = 0;
  constructor(private readonly buf: Buffer) {}

  #need(n: number, what: string): void {
    if (n > this.buf.length - this.#at) throw bad(`the PACK ends inside ${what}`);
  }

  u32(what: string): number {
    this.#need(4, what);
    const v = this.buf.readUInt32BE(this.#at);
    this.#at += 4;
    return v;
  }

  u64(what: string): bigint {
    this.#need(8, what);
    const v = this.buf.readBigUInt64BE(this.#at);
    this.#at += 8;
    return v;
  }

  /** A view of the next n bytes (checked against what is left before anything is made). */
  bytes(n: number, what: string): Buffer {
    this.#need(n, what);
    const v = this.buf.subarray(this.#at, this.#at + n);
    this.#at += n;
    return Buffer.from(v);
  }
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function bad(message: string): GatehopError {
  return new GatehopError(ErrorCodes.SOFTETHER_PROTOCOL, `malformed PACK: ${message}`);
}
