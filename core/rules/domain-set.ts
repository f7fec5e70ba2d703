import { WildcardTrie } from './wildcard-trie.js';

/**
 * A set of domain patterns with the meaning mihomo's domain trie gives them:
 *   `example.com`        that name only
 *   `+.example.com`      that name and every name under it (DOMAIN-SUFFIX)
 *   `.example.com`       names under it, not itself
 *   `*.example.com`      names exactly one label under it (`*.*.example.com`: exactly two)
 *   `test.*.baidu.com`, `www.baidu.*`, `+.stun.*.*`, `.apple.*`: `*` stands for one label anywhere
 * A name is in the set when any pattern matches it (mihomo's search tries every path; its order of
 * preference matters only for tries that map names to data, not for a set).
 *
 * The forms every published list is made of (no `*`, or `*` only as leading labels) are hash sets
 * walked by suffix, one lookup per label whatever the set's size; a `*` anywhere else goes to a
 * small label trie. Names are compared lower-case; a lookup ignores a trailing dot.
 */
export class DomainSet {
  readonly #exact = new Set<string>();
  readonly #suffix = new Set<string>();
  readonly #below = new Set<string>();
  /** Leading `*.` patterns by how many labels their stars stand for. */
  readonly #starred = new Map<number, Set<string>>();
  /** Patterns with a `*` label other than leading ones (`test.*.baidu.com`, `.apple.*`). */
  readonly #wild = new WildcardTrie();

  get size(): number {
    let starred = 0;
    for (const set of this.#starred.values()) starred += set.size;
    return this.#exact.size + this.#suffix.size + this.#below.size + starred + this.#wild.size;
  }

  /** Adds one pattern (the forms above); false when mihomo would refuse it too (see domainPatternError). */
  add(pattern: string): boolean {
    if (domainPatternError(pattern) !== null) return false;
    const p = pattern.toLowerCase();
    if (p.startsWith('+.')) {
      const rest = p.slice(2);
      if (hasStar(rest)) return this.#wild.add(rest) && this.#wild.add('.' + rest);
      return addTo(this.#suffix, rest);
    }
    if (p.startsWith('.')) {
      const rest = p.slice(1);
      return hasStar(rest) ? this.#wild.add(p) : addTo(this.#below, rest);
    }
    let stars = 0;
    let rest = p;
    while (rest.startsWith('*.')) {
      stars++;
      rest = rest.slice(2);
    }
    if (hasStar(rest)) return this.#wild.add(p);
    if (stars === 0) return addTo(this.#exact, rest);
    let set = this.#starred.get(stars);
    if (!set) this.#starred.set(stars, (set = new Set()));
    return addTo(set, rest);
  }

  /** A DOMAIN-SUFFIX: the name and every name under it, `*` taken literally as mihomo's rule does. */
  addSuffix(domain: string): boolean {
    return addTo(this.#suffix, normalizeName(domain));
  }

  has(name: string): boolean {
    const n = normalizeName(name);
    if (n === '') return false;
    if (this.#exact.has(n) || this.#suffix.has(n)) return true;
    // Walk the parents: "a.b.example.com" → "b.example.com" → "example.com" → "com".
    let depth = 1;
    for (let i = n.indexOf('.'); i >= 0; i = n.indexOf('.', i + 1), depth++) {
      const parent = n.slice(i + 1);
      if (this.#suffix.has(parent) || this.#below.has(parent)) return true;
      if (this.#starred.get(depth)?.has(parent)) return true;
    }
    return this.#wild.size > 0 && this.#wild.has(n);
  }
}

/** The longest pattern or name a set takes (DNS names are at most 253; a little room for `+.`). */
const MAX_PATTERN = 255;

/**
 * Why mihomo's trie would refuse `pattern` (null: it takes it): empty, a trailing dot, space at
 * either end, or an empty label other than a leading one (`.example.com`). Labels may hold any
 * other character: vendors' sets list names such as `Mijia Cloud`. Control characters,
 * ASCII punctuation other than `-`, `_`, `*`, `+` and `.`, and patterns over 255 characters are
 * refused here though mihomo takes them (no name carries them; such a line is a broken one).
 */
export function domainPatternError(pattern: string): string | null {
  if (pattern === '') return 'empty';
  if (pattern.length > MAX_PATTERN) return `longer than ${MAX_PATTERN} characters`;
  if (pattern.endsWith('.')) return 'ends with a dot';
  if (/^\s|\s$/.test(pattern)) return 'space at an end';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(pattern)) return 'a control character';
  // mihomo would take these too and never match a name with them: naming them finds broken lines.
  if (/[!"#$%&'()/:;<=>?@[\\\]^`{|}~,]/.test(pattern)) return 'a character no name has';
  const labels = pattern.split('.');
  if (labels.slice(1).some((l) => l === '')) return 'an empty label';
  if (labels.length === 1 && labels[0] === '') return 'empty';
  return null;
}

const LABELS = /^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** True for what may be a DNS name (letters, digits, `-` and `_` in labels of ≤ 63, ≤ 253 in all). */
export function isDomainName(s: string): boolean {
  return LABELS.test(s);
}

export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

function hasStar(rest: string): boolean {
  return rest === '*' || rest.startsWith('*.') || rest.endsWith('.*') || rest.includes('.*.');
}

function addTo(set: Set<string>, domain: string): boolean {
  if (domainPatternError(domain) !== null || domain.startsWith('.')) return false;
  set.add(domain);
  return true;
}
