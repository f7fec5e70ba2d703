import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { classifyAddress } from '../reach/index.js';
import { parseAddress } from './cidr-set.js';
import { loadRangeTable, searchRange, type RangeTable } from './range-table.js';
import type { CountryLookup } from './rules.js';

/**
 * Country of an IP address, from `@ip-location-db/geo-whois-asn-country`: IP ranges to ISO country
 * codes, built from the regional registries' WHOIS and ASN data (CC0, with the NRO's statistics
 * under CC BY 4.0: attribution to nro.net). Ranges live in typed arrays and are found by binary
 * search; loading parses the CSVs a slice at a time, yielding between slices, so the main loop
 * never stalls for the ~0.5 M lines.
 */
export class GeoIp implements CountryLookup {
  private constructor(
    private readonly v4: RangeTable,
    private readonly v6: RangeTable,
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
    const code = (buf: Buffer, from: number, to: number): number => codeOf(buf.toString('latin1', from, to).trim());
    const v4 = await loadRangeTable(join(dir, 'geo-whois-asn-country-ipv4-num.csv'), 1, code);
    const v6 = await loadRangeTable(join(dir, 'geo-whois-asn-country-ipv6-num.csv'), 4, code);
    return new GeoIp(v4, v6, names);
  }

  /** Bytes the tables hold (what loading GeoIP adds, apart from the parse's garbage). */
  get bytes(): number {
    return [this.v4, this.v6].reduce((n, t) => n + t.starts.byteLength + t.ends.byteLength + t.values.byteLength, 0);
  }

  get ranges(): number {
    return this.v4.values.length + this.v6.values.length;
  }

  /** The country of a public address; null for private, local and unknown ones (the data has stray private ranges). */
  country(ip: string): string | null {
    if (classifyAddress(ip) !== 'public') return null;
    const a = parseAddress(ip);
    if (!a) return null;
    if (a.v === 4) {
      const i = searchRange(this.v4, [a.value], 1);
      return i < 0 ? null : this.names[this.v4.values[i]!]!;
    }
    const i = searchRange(this.v6, a.words, 4);
    return i < 0 ? null : this.names[this.v6.values[i]!]!;
  }
}
