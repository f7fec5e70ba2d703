import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { classifyAddress } from '../common/index.js';
import { parseAddress } from './cidr-set.js';
import type { CountryLookup } from './rules.js';

/** Lines parsed between yields to the event loop while loading (a few ms of work each). */
const LINES_PER_TURN = 4_000;

/**
 * Country of an IP address, from `@ip-location-db/geo-whois-asn-country`: IP ranges to ISO country
 * codes, built from the regional registries' WHOIS and ASN data (CC0, with the NRO's statistics
 * under CC BY 4.0: attribution to nro.net). Ranges live in typed arrays and are found by binary
 * search; loading parses the CSVs a slice at a time, yielding between slices, so the main loop
 * never stalls for the ~0.5 M lines.
 */
export class GeoIp implements CountryLookup {
  private constructor(
    private readonly v4: { starts: Uint32Array; ends: Uint32Array; codes: Uint16Array },
    private readonly v6: { starts: Uint32Array; ends: Uint32Array; codes: Uint16Array },
    private readonly names: readonly string[],
  ) {}

  /** Where the package's data is (null when it is not installed). */
  static dataDir(): string | null {
    try {
      const require = createRequire(import.meta.url);
      return dirname(require.resolve('@ip-location-db/geo-whois-asn-country/package.json'));
    } catch {
      return null;
    }
  }

  static async load(dir: string | null = GeoIp.dataDir()): Promise<GeoIp> {
    if (!dir) throw new Error('the GeoIP data package (@ip-location-db/geo-whois-asn-country) is not installed');
    const names: string[] = [];
    const index = new Map<string, number>();
    const codeOf = (c: string): number => {
      let i = index.get(c);
      if (i === undefined) {
        i = names.length;
        names.push(c);
        index.set(c, i);
      }
      return i;
    };
    const v4 = await loadTable(join(dir, 'geo-whois-asn-country-ipv4-num.csv'), 1, codeOf);
    const v6 = await loadTable(join(dir, 'geo-whois-asn-country-ipv6-num.csv'), 4, codeOf);
    return new GeoIp(v4, v6, names);
  }

  /** Bytes the tables hold (what loading GeoIP adds, apart from the parse's garbage). */
  get bytes(): number {
    return [this.v4, this.v6].reduce((n, t) => n + t.starts.byteLength + t.ends.byteLength + t.codes.byteLength, 0);
  }

  get ranges(): number {
    return this.v4.codes.length + this.v6.codes.length;
  }

  /** The country of a public address; null for private, local and unknown ones (the data has stray private ranges). */
  country(ip: string): string | null {
    if (classifyAddress(ip) !== 'public') return null;
    const a = parseAddress(ip);
    if (!a) return null;
    if (a.v === 4) {
      const i = search(this.v4, [a.value], 1);
      return i < 0 ? null : this.names[this.v4.codes[i]!]!;
    }
    const i = search(this.v6, a.words, 4);
    return i < 0 ? null : this.names[this.v6.codes[i]!]!;
  }
}

type Table = { starts: Uint32Array; ends: Uint32Array; codes: Uint16Array };

function search(t: Table, x: readonly number[], width: number): number {
  let lo = 0;
  let hi = t.codes.length - 1;
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
 * `start,end,CC` lines (decimal numbers) into sorted typed arrays, `width` 32-bit words per address.
 * Read from the bytes (decoding 17 MB into one string alone stalls the loop ~100 ms).
 */
async function loadTable(path: string, width: 1 | 4, codeOf: (c: string) => number): Promise<Table> {
  const buf = await readFile(path);
  let count = 1;
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) {
    if (++count % (LINES_PER_TURN * 4) === 0) await new Promise<void>((r) => setImmediate(r));
  }
  const starts = new Uint32Array(count * width);
  const ends = new Uint32Array(count * width);
  const codes = new Uint16Array(count);
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
      put(starts, n, width, buf, lineStart, c1);
      put(ends, n, width, buf, c1 + 1, c2);
      codes[n] = codeOf(buf.toString('latin1', c2 + 1, end).trim());
      n++;
    }
    await new Promise<void>((r) => setImmediate(r));
  }
  return { starts: starts.subarray(0, n * width), ends: ends.subarray(0, n * width), codes: codes.subarray(0, n) };
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
