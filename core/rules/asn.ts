import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { classifyAddress } from '../reach/index.js';
import { parseAddress } from './cidr-set.js';
import { loadRangeTable, searchRange, type RangeTable } from './range-table.js';
import type { AsnLookup } from './rules.js';

/**
 * The autonomous system an address is announced from, for IP-ASN rules: `@ip-location-db/asn`
 * (RouteViews' BGP tables with DB-IP and the NRO's delegations, updated daily upstream; CC BY 4.0:
 * attribution to RouteViews, DB-IP and nro.net, see SECURITY.md's sources). Loaded as GeoIP is: a
 * slice at a time, only when a rule names an AS.
 */
export class AsnDb implements AsnLookup {
  private constructor(
    private readonly v4: RangeTable,
    private readonly v6: RangeTable,
  ) {}

  /** Where the package's data is (null when it is not installed). */
  static dataDir(): string | null {
    try {
      return dirname(createRequire(import.meta.url).resolve('@ip-location-db/asn/package.json'));
    } catch {
      return null;
    }
  }

  static async load(dir: string | null = AsnDb.dataDir()): Promise<AsnDb> {
    if (!dir) throw new Error('the ASN data package (@ip-location-db/asn) is not installed');
    const asn = (buf: Buffer, from: number, to: number): number => {
      let v = 0;
      for (let j = from; j < to; j++) {
        const d = buf[j]! - 48;
        if (d < 0 || d > 9) break;
        v = v * 10 + d;
      }
      return v;
    };
    return new AsnDb(
      await loadRangeTable(join(dir, 'asn-ipv4-num.csv'), 1, asn),
      await loadRangeTable(join(dir, 'asn-ipv6-num.csv'), 4, asn),
    );
  }

  get ranges(): number {
    return this.v4.values.length + this.v6.values.length;
  }

  get bytes(): number {
    return [this.v4, this.v6].reduce((n, t) => n + t.starts.byteLength + t.ends.byteLength + t.values.byteLength, 0);
  }

  /** The AS number announcing a public address; null for private, local and unknown ones. */
  asn(ip: string): number | null {
    if (classifyAddress(ip) !== 'public') return null;
    const a = parseAddress(ip);
    if (!a) return null;
    const i = a.v === 4 ? searchRange(this.v4, [a.value], 1) : searchRange(this.v6, a.words, 4);
    if (i < 0) return null;
    return (a.v === 4 ? this.v4 : this.v6).values[i]!;
  }
}
