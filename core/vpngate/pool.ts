import type { VpnGateNode } from './node.js';

/** A node the pool remembers, with when it was first and last listed. */
export interface PoolEntry {
  node: VpnGateNode;
  firstSeen: number;
  lastListed: number;
}

/**
 * The pool that remembers: the list endpoint returns only part of all servers, and a different
 * part each time, so every node listed within `keepMs` is kept. A node absent from the latest list
 * is still a candidate (the selector weighs how recently it was listed). Newer listings replace a
 * node's figures and profile; a node not listed for `keepMs` is dropped.
 */
export class NodePool {
  readonly #entries = new Map<string, PoolEntry>();

  constructor(entries: readonly PoolEntry[] = []) {
    for (const e of entries) this.#entries.set(e.node.id, e);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Adds or refreshes the nodes of a list seen at `at`. */
  merge(nodes: readonly VpnGateNode[], at: number): void {
    for (const n of nodes) {
      const had = this.#entries.get(n.id);
      const lastListed = Math.max(at, had?.lastListed ?? 0);
      this.#entries.set(n.id, {
        node: { ...n, lastListedAt: lastListed },
        firstSeen: had ? Math.min(had.firstSeen, at) : at,
        lastListed,
      });
    }
  }

  /** Drops nodes last listed before `before`; returns their ids. */
  prune(before: number): string[] {
    const gone: string[] = [];
    for (const [id, e] of this.#entries) {
      if (e.lastListed < before) {
        this.#entries.delete(id);
        gone.push(id);
      }
    }
    return gone;
  }

  entry(id: string): PoolEntry | undefined {
    return this.#entries.get(id);
  }

  /** Every node, most recently listed first (ties by id, so the order is stable). */
  nodes(): VpnGateNode[] {
    return [...this.#entries.values()]
      .sort((a, b) => b.lastListed - a.lastListed || a.node.id.localeCompare(b.node.id))
      .map((e) => e.node);
  }
}
