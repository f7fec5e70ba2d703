/**
 * Domain patterns with `*` labels anywhere (`test.*.baidu.com`, `www.baidu.*`, `.apple.*`), as
 * mihomo's domain trie stores them: labels from the right, `*` a child that takes any one label,
 * and a leading `.` an end that takes one or more labels still left. Few patterns are of this kind;
 * the common forms stay in DomainSet's hash sets.
 *
 * A lookup follows every path that fits (a static child and a `*` child can both fit a label);
 * each node sits at one depth, so it is visited at most once and a lookup costs at most the trie's
 * size, whatever the patterns.
 */
interface TrieNode {
  children: Map<string, TrieNode> | null;
  /** A pattern ends here: the labels consumed so far are the whole name. */
  end: boolean;
  /** A `.`-pattern ends here: one or more labels may be left. */
  below: boolean;
}

const STAR = '*';

export class WildcardTrie {
  readonly #root: TrieNode = newNode();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds a pattern already validated and lower-cased (a leading `.` for "one or more labels under"). */
  add(pattern: string): boolean {
    const below = pattern.startsWith('.');
    const labels = (below ? pattern.slice(1) : pattern).split('.');
    let node = this.#root;
    for (let i = labels.length - 1; i >= 0; i--) {
      const label = labels[i]!;
      node.children ??= new Map();
      let next = node.children.get(label);
      if (!next) node.children.set(label, (next = newNode()));
      node = next;
    }
    const had = below ? node.below : node.end;
    if (below) node.below = true;
    else node.end = true;
    if (!had) this.#size++;
    return true;
  }

  has(name: string): boolean {
    const labels = name.split('.');
    const search = (node: TrieNode, left: number): boolean => {
      if (left === 0) return node.end;
      if (node.below) return true;
      const label = labels[left - 1]!;
      const exact = node.children?.get(label);
      if (exact && search(exact, left - 1)) return true;
      const star = label === STAR ? undefined : node.children?.get(STAR);
      return star !== undefined && search(star, left - 1);
    };
    return search(this.#root, labels.length);
  }
}

function newNode(): TrieNode {
  return { children: null, end: false, below: false };
}
