import { readFile } from 'node:fs/promises';

/** Lines parsed between yields to the event loop while loading (a few ms of work each). */
const LINES_PER_TURN = 4_000;

/** Address ranges with a number each (a country's index, an AS number), sorted for binary search. */
export interface RangeTable {
  /** `width` 32-bit words per address (1 for IPv4, 4 for IPv6). */
  readonly starts: Uint32Array;
  readonly ends: Uint32Array;
  readonly values: Uint32Array;
}

/** The index of the range holding `x` (an address as `width` words), or -1. */
export function searchRange(t: RangeTable, x: readonly number[], width: number): number {
  let lo = 0;
  let hi = t.values.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cmp(x, t.starts, mid * width, width) < 0) hi = mid - 1;
    else if (cmp(x, t.ends, mid * width, width) > 0) lo = mid + 1;
    else return mid;
  }
  return -1;
}

function cmp(x: readonly number[], arr: Uint32Array, at: number, width: number): number {
  for (let i = 0; i < width; i++) if (x[i] !== arr[at + i]) return x[i]! < arr[at + i]! ? -1 : 1;
  return 0;
}

/**
 * `start,end,VALUE[,…]` lines (decimal addresses, as ip-location-db's `-num.csv` files) into
 * sorted typed arrays; `valueOf` reads the third field (bytes `from` to `to`). Read from the bytes
 * (decoding 17 MB into one string alone stalls the loop ~100 ms), yielding every few thousand lines.
 */
export async function loadRangeTable(
  path: string,
  width: 1 | 4,
  valueOf: (buf: Buffer, from: number, to: number) => number,
): Promise<RangeTable> {
  const buf = await readFile(path);
  let count = 1;
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) {
    if (++count % (LINES_PER_TURN * 4) === 0) await new Promise<void>((r) => setImmediate(r));
  }
  const starts = new Uint32Array(count * width);
  const ends = new Uint32Array(count * width);
  const values = new Uint32Array(count);
  let n = 0;
  let pos = 0;
  while (pos < buf.length) {
    for (let k = 0; k < LINES_PER_TURN && pos < buf.length; k++) {
      let end = buf.indexOf(10, pos);
      if (end < 0) end = buf.length;
      const c1 = buf.indexOf(44, pos);
      const c2 = c1 < 0 ? -1 : buf.indexOf(44, c1 + 1);
      const lineStart = pos;
      pos = end + 1;
      if (c1 < 0 || c2 < 0 || c2 >= end) continue;
      const c3 = buf.indexOf(44, c2 + 1);
      put(starts, n, width, buf, lineStart, c1);
      put(ends, n, width, buf, c1 + 1, c2);
      values[n] = valueOf(buf, c2 + 1, c3 < 0 || c3 > end ? end : c3);
      n++;
    }
    await new Promise<void>((r) => setImmediate(r));
  }
  return { starts: starts.subarray(0, n * width), ends: ends.subarray(0, n * width), values: values.subarray(0, n) };
}

function put(arr: Uint32Array, i: number, width: 1 | 4, buf: Buffer, from: number, to: number): void {
  if (width === 1) {
    let v = 0;
    for (let j = from; j < to; j++) v = v * 10 + (buf[j]! - 48);
    arr[i] = v;
    return;
  }
  let v = BigInt(buf.toString('latin1', from, to));
  for (let w = 3; w >= 0; w--) {
    arr[i * 4 + w] = Number(v & 0xffffffffn);
    v >>= 32n;
  }
}
