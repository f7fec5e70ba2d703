import type { VpnGateNode } from './node.js';
import { profileCaKey } from './profile-ca.js';

/** A node the pool remembers, with when it was first and last listed. */
export interface PoolEntry {
  node: VpnGateNode;
  firstSeen: number;
  lastListed: number;
}

/** What one merge did: the nodes as kept, and the ones whose row was not taken. */
export interface MergeResult {
  /** The listed nodes as the pool now holds them (saved as such). */
  kept: VpnGateNode[];
  /**
   * Nodes a list fetched in clear gave another CA than the one an HTTPS list or the user's file
   * vouched for: the vouched row is kept (#59: a row in clear cannot take over a node's trust).
   */
  refused: string[];
  /**
   * Nodes the pool knew whose row now names another CA (an HTTPS list said so, or nothing vouched
   * for either row): another key, perhaps another machine. What was learnt of them (a verdict,
   * the user's consent to a flagged node) belongs to the old identity (#59).
   */
  rekeyed: string[];
}

/**
 * The pool that remembers: the list endpoint returns only part of all servers, and a different
 * part each time, so every node listed within `keepMs` is kept. A node absent from the latest list
 * is still a candidate (the selector weighs how recently it was listed). Newer listings replace a
 * node's figures and profile, except that a row fetched in clear never replaces the CA of a node
 * an HTTPS list or a file vouched for (it keeps the vouching when it names the same CA); a node
 * not listed for `keepMs` is dropped.
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
  merge(nodes: readonly VpnGateNode[], at: number): MergeResult {
    const kept: VpnGateNode[] = [];
    const refused: string[] = [];
    const rekeyed: string[] = [];
    for (const n of nodes) {
      const had = this.#entries.get(n.id);
      const lastListed = Math.max(at, had?.lastListed ?? 0);
      let node: VpnGateNode = n;
      const vouched = had?.node.caVouchedBy;
      if (!n.caVouchedBy && vouched) {
        if (profileCaKey(n.profile) === profileCaKey(had.node.profile)) node = { ...n, caVouchedBy: vouched };
        else {
          node = had.node;
          refused.push(n.id);
        }
      }
      if (had && node !== had.node && profileCaKey(node.profile) !== profileCaKey(had.node.profile)) rekeyed.push(n.id);
      node = { ...node, lastListedAt: lastListed };
      this.#entries.set(n.id, { node, firstSeen: had ? Math.min(had.firstSeen, at) : at, lastListed });
      kept.push(node);
    }
    return { kept, refused, rekeyed };
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
