/**
 * A set of domain patterns, matched by walking a name's suffixes label by label: at most one hash
 * lookup per label, whatever the set's size (a 100,000-line domestic list costs the same per flow as
 * ten lines). The four kinds are those of mihomo's `domain` rule sets:
 *   `example.com`    that name only
 *   `+.example.com`  that name and every name under it (DOMAIN-SUFFIX)
 *   `.example.com`   names under it, not itself
 *   `*.example.com`  names exactly one label under it (`*.*.example.com`: exactly two, and so on)
 * Names are compared lower-case, without a trailing dot.
 */
export class DomainSet {
  readonly #exact = new Set<string>();
  readonly #suffix = new Set<string>();
  readonly #below = new Set<string>();
  /** `*.…` patterns by how many labels their stars stand for. */
  readonly #starred = new Map<number, Set<string>>();

  get size(): number {
    let starred = 0;
    for (const set of this.#starred.values()) starred += set.size;
    return this.#exact.size + this.#suffix.size + this.#below.size + starred;
  }

  /** Adds one pattern (the forms above); false when it is not a domain pattern. */
  add(pattern: string): boolean {
    const p = normalizeName(pattern);
    if (p.startsWith('+.')) return addTo(this.#suffix, p.slice(2));
    if (p.startsWith('*.')) {
      let stars = 0;
      let rest = p;
      while (rest.startsWith('*.')) {
        stars++;
        rest = rest.slice(2);
      }
      let set = this.#starred.get(stars);
      if (!set) this.#starred.set(stars, (set = new Set()));
      return addTo(set, rest);
    }
    if (p.startsWith('.')) return addTo(this.#below, p.slice(1));
    return addTo(this.#exact, p);
  }

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
    return false;
  }
}

const LABELS = /^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** True for what may be a DNS name (letters, digits, `-` and `_` in labels of ≤ 63, ≤ 253 in all). */
export function isDomainName(s: string): boolean {
  return LABELS.test(s);
}

export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

function addTo(set: Set<string>, domain: string): boolean {
  if (!isDomainName(domain)) return false;
  set.add(domain);
  return true;
}
