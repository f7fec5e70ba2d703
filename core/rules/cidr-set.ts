import { isIP } from 'node:net';
import { bareAddress, ipv6Groups } from '../reach/index.js';

/**
 * A set of IPv4 and IPv6 networks, held as sorted, merged address ranges and matched by binary
 * search: O(log n) per address whatever the set's size (a 10,000-network country list costs ~14
 * comparisons). IPv6 addresses are four 32-bit words compared in order; an IPv4-mapped IPv6
 * address (`::ffff:a.b.c.d`) is matched as its IPv4 address.
 */
export class CidrSet {
  #v4: Array<[number, number]> = [];
  #v6: Array<[Words, Words]> = [];
  #v4Sorted: Float64Array = new Float64Array(0);
  #v6Sorted: Uint32Array = new Uint32Array(0);
  #dirty = false;

  get size(): number {
    return this.#v4.length + this.#v6.length;
  }

  /** Adds `a.b.c.d/n`, `x::/n` or a bare address; false when it is neither. */
  add(cidr: string): boolean {
    const parsed = parseCidr(cidr);
    if (!parsed) return false;
    if (parsed.v === 4) this.#v4.push(parsed.range);
    else this.#v6.push(parsed.range);
    this.#dirty = true;
    return true;
  }

  /** Adds the range from..to, each 16 bytes (IPv4 as ::ffff:a.b.c.d, as mihomo's mrs stores it). */
  addRange(from: Uint8Array, to: Uint8Array): boolean {
    if (from.length !== 16 || to.length !== 16) return false;
    const mapped = (b: Uint8Array): boolean =>
      b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
    const words = (b: Uint8Array): Words => {
      const v = new DataView(b.buffer, b.byteOffset, 16);
      return [v.getUint32(0), v.getUint32(4), v.getUint32(8), v.getUint32(12)];
    };
    if (mapped(from) !== mapped(to)) return false;
    if (mapped(from)) {
      const [s, e] = [words(from)[3], words(to)[3]];
      if (s > e) return false;
      this.#v4.push([s, e]);
    } else {
      const [s, e] = [words(from), words(to)];
      if (cmpWords(s, e) > 0) return false;
      this.#v6.push([s, e]);
    }
    this.#dirty = true;
    return true;
  }

  has(ip: string): boolean {
    if (this.#dirty) this.#build();
    const a = parseAddress(ip);
    if (!a) return false;
    if (a.v === 4) return searchV4(this.#v4Sorted, a.value);
    return searchV6(this.#v6Sorted, a.words);
  }

  #build(): void {
    this.#dirty = false;
    const v4 = mergeRanges(
      [...this.#v4].sort((x, y) => x[0] - y[0]),
      (a, b) => a - b,
      (x) => x + 1,
    );
    this.#v4Sorted = new Float64Array(v4.flat());
    const v6 = mergeRanges(
      [...this.#v6].sort((x, y) => cmpWords(x[0], y[0])),
      cmpWords,
      incWords,
    );
    const flat = new Uint32Array(v6.length * 8);
    v6.forEach(([s, e], i) => {
      flat.set(s, i * 8);
      flat.set(e, i * 8 + 4);
    });
    this.#v6Sorted = flat;
  }
}

type Words = [number, number, number, number];

function searchV4(ranges: Float64Array, x: number): boolean {
  let lo = 0;
  let hi = ranges.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (x < ranges[mid * 2]!) hi = mid - 1;
    else if (x > ranges[mid * 2 + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}

function searchV6(ranges: Uint32Array, x: Words): boolean {
  let lo = 0;
  let hi = ranges.length / 8 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cmpAt(x, ranges, mid * 8) < 0) hi = mid - 1;
    else if (cmpAt(x, ranges, mid * 8 + 4) > 0) lo = mid + 1;
    else return true;
  }
  return false;
}

function cmpAt(x: Words, arr: Uint32Array, at: number): number {
  for (let i = 0; i < 4; i++) if (x[i] !== arr[at + i]) return x[i]! < arr[at + i]! ? -1 : 1;
  return 0;
}

function cmpWords(a: Words, b: Words): number {
  for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

function incWords(w: Words): Words {
  const out: Words = [...w];
  for (let i = 3; i >= 0; i--) {
    if (out[i]! < 0xffffffff) {
      out[i] = out[i]! + 1;
      return out;
    }
    out[i] = 0;
  }
  return [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff];
}

/** Sorted ranges → merged ranges (overlapping or adjacent ones joined). */
function mergeRanges<T>(sorted: Array<[T, T]>, cmp: (a: T, b: T) => number, next: (x: T) => T): Array<[T, T]> {
  const out: Array<[T, T]> = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && cmp(s, next(last[1])) <= 0) {
      if (cmp(e, last[1]) > 0) last[1] = e;
    } else out.push([s, e]);
  }
  return out;
}

type Parsed = { v: 4; range: [number, number] } | { v: 6; range: [Words, Words] };

export function parseCidr(text: string): Parsed | null {
  const [addr, bitsText, extra] = text.trim().split('/');
  if (extra !== undefined || !addr) return null;
  const a = parseAddress(addr, false);
  if (!a) return null;
  const max = a.v === 4 ? 32 : 128;
  const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
  if (!(bits >= 0 && bits <= max)) return null;
  if (a.v === 4) {
    const size = 2 ** (32 - bits);
    const start = Math.floor(a.value / size) * size;
    return { v: 4, range: [start, start + size - 1] };
  }
  const start: Words = [0, 0, 0, 0];
  const end: Words = [0, 0, 0, 0];
  for (let i = 0; i < 4; i++) {
    const keep = Math.max(0, Math.min(32, bits - i * 32));
    const mask = keep === 0 ? 0 : keep === 32 ? 0xffffffff : (0xffffffff << (32 - keep)) >>> 0;
    start[i] = (a.words[i]! & mask) >>> 0;
    end[i] = (start[i]! | (~mask >>> 0)) >>> 0;
  }
  return { v: 6, range: [start, end] };
}

type Address = { v: 4; value: number } | { v: 6; words: Words };

/** An address as a number (IPv4) or four words (IPv6); mapped IPv4 becomes IPv4 unless `unmap` is false. */
export function parseAddress(ip: string, unmap = true): Address | null {
  const bare = bareAddress(ip);
  const v = isIP(bare);
  if (v === 4) return { v: 4, value: v4Number(bare) };
  if (v !== 6) return null;
  const words = v6Words(bare.toLowerCase());
  if (!words) return null;
  if (unmap && words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return { v: 4, value: words[3] };
  return { v: 6, words };
}

function v4Number(ip: string): number {
  return ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

function v6Words(ip: string): Words | null {
  const g = ipv6Groups(ip);
  if (!g) return null;
  return [
    ((g[0]! << 16) | g[1]!) >>> 0,
    ((g[2]! << 16) | g[3]!) >>> 0,
    ((g[4]! << 16) | g[5]!) >>> 0,
    ((g[6]! << 16) | g[7]!) >>> 0,
  ];
}
