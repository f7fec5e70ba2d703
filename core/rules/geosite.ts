import { DomainSet } from './domain-set.js';
import { pbFields, pbString } from './protobuf-reader.js';
import { RuleParseError } from './rule-error.js';
import type { SiteLookup } from './rules.js';
import { compileUserRegex, type UserRegex } from './user-regex.js';

/** geosite.dat's largest published build is ~6 MiB; this leaves room and bounds what a mirror may send. */
export const MAX_GEOSITE_BYTES = 64 * 1024 * 1024;
/**
 * Matchers kept built beyond one per list of the file: for `@attr` and `!` forms, which are keys of
 * their own. Every list a config names stays built (#59): with room for 64 in all, a config naming
 * more rebuilt lists on every flow, each flow evicting what the next one needed.
 */
const MAX_BUILT_VARIANTS = 64;

/** v2fly's Domain.Type. */
const PLAIN = 0;
const REGEX = 1;
const ROOT_DOMAIN = 2;
const FULL = 3;

interface SiteMatcher {
  readonly names: DomainSet;
  readonly keywords: readonly string[];
  readonly regexes: readonly UserRegex[];
  /** How many entries the list had after the attribute filter (0: the rule can never match). */
  readonly entries: number;
}

/**
 * v2fly's domain-list data (`geosite.dat`, the GeoSiteList protobuf that mihomo's GEOSITE reads):
 * the file is kept as bytes with each list's place indexed by name, and a list is decoded into a
 * matcher only when a rule first asks for it (as mihomo's memory-conservative loader does), so a
 * config naming `cn` and `category-ads-all` pays for those two of the ~1,400 lists.
 *
 * `GEOSITE,code` as mihomo reads it: the list name, case-insensitive; `@attr` (several allowed)
 * keeps the entries that carry every one of those attributes (`google@cn`); a leading `!` matches
 * names the list does not. Entries: `full:` the name only, `domain:` the name and every name under
 * it, `keyword:` any name containing it, `regexp:` an RE2 pattern (linear time, as all user regexes).
 */
export class GeoSite implements SiteLookup {
  readonly #buf: Uint8Array;
  readonly #index: ReadonlyMap<string, { start: number; end: number }>;
  readonly #built = new Map<string, SiteMatcher | null>();
  #builds = 0;

  private constructor(buf: Uint8Array, index: Map<string, { start: number; end: number }>) {
    this.#buf = buf;
    this.#index = index;
  }

  /** Indexes a geosite.dat; throws RuleParseError when it is not one. */
  static parse(buf: Uint8Array): GeoSite {
    if (buf.length > MAX_GEOSITE_BYTES) throw new RuleParseError(`larger than ${MAX_GEOSITE_BYTES} bytes`);
    const index = new Map<string, { start: number; end: number }>();
    for (const entry of pbFields(buf)) {
      if (entry.no !== 1 || entry.wire !== 2) throw new RuleParseError('not a geosite.dat (GeoSiteList)');
      let code: string | null = null;
      for (const f of pbFields(buf, entry.start, entry.end))
        if (f.no === 1 && f.wire === 2) {
          code = pbString(buf, f).toLowerCase();
          break;
        }
      if (code === null || code === '') throw new RuleParseError('a GeoSite list without a name');
      index.set(code, { start: entry.start, end: entry.end });
    }
    if (index.size === 0) throw new RuleParseError('no list in it');
    return new GeoSite(buf, index);
  }

  /** Matchers built so far (each list once while it is asked for: what the cache is for). */
  get builds(): number {
    return this.#builds;
  }

  /** The lists' names, lower-case. */
  get lists(): readonly string[] {
    return [...this.#index.keys()];
  }

  get bytes(): number {
    return this.#buf.byteLength;
  }

  has(list: string): boolean {
    return this.#index.has(list.toLowerCase());
  }

  matches(code: string, name: string): boolean {
    const not = code.startsWith('!');
    const m = this.#matcher(not ? code.slice(1) : code);
    if (m === null) return false;
    const hit = m.names.has(name) || m.keywords.some((k) => name.includes(k)) || m.regexes.some((r) => r.test(name));
    return hit !== not;
  }

  /** How many entries `code` selects (attributes applied), or null when the file has no such list. */
  entries(code: string): number | null {
    return this.#matcher(code.replace(/^!/, ''))?.entries ?? null;
  }

  #matcher(code: string): SiteMatcher | null {
    const key = code.toLowerCase();
    const had = this.#built.get(key);
    if (had !== undefined) return had;
    const [list = '', ...attrs] = key.split('@').map((s) => s.trim());
    const place = this.#index.get(list);
    const m = place
      ? this.#build(
          place,
          attrs.filter((a) => a !== ''),
        )
      : null;
    this.#builds++;
    // Bounded by the file: one matcher per list, and a few forms more.
    if (this.#built.size >= this.#index.size + MAX_BUILT_VARIANTS) this.#built.delete(this.#built.keys().next().value!);
    this.#built.set(key, m);
    return m;
  }

  #build(place: { start: number; end: number }, attrs: readonly string[]): SiteMatcher {
    const buf = this.#buf;
    const names = new DomainSet();
    const keywords: string[] = [];
    const regexes: UserRegex[] = [];
    let entries = 0;
    for (const f of pbFields(buf, place.start, place.end)) {
      if (f.no !== 2 || f.wire !== 2) continue;
      let type = PLAIN;
      let value = '';
      const keys: string[] = [];
      for (const d of pbFields(buf, f.start, f.end)) {
        if (d.no === 1 && d.wire === 0) type = d.value;
        else if (d.no === 2 && d.wire === 2) value = pbString(buf, d).toLowerCase();
        else if (d.no === 3 && d.wire === 2)
          for (const a of pbFields(buf, d.start, d.end))
            if (a.no === 1 && a.wire === 2) keys.push(pbString(buf, a).toLowerCase());
      }
      if (value === '' || !attrs.every((a) => keys.includes(a))) continue;
      entries++;
      if (type === FULL) names.add(value);
      else if (type === ROOT_DOMAIN) names.addSuffix(value);
      else if (type === PLAIN) keywords.push(value);
      else if (type === REGEX) {
        try {
          regexes.push(compileUserRegex(value, false));
        } catch {
          entries--; // a pattern RE2 refuses (mihomo's Go regexp would too) is left out
        }
      }
    }
    return { names, keywords, regexes, entries };
  }
}
