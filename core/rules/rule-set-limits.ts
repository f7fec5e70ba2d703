/**
 * What one rule set may hold, whatever its format: counted from a set's own shape before anything
 * is built for its entries, so a small file that describes a huge set (an mrs trie whose leaves
 * share long paths, a zstd bomb) is refused by its sizes, not by running out of memory.
 */

/** Entries one rule set may hold (the largest maintained domestic lists are ~120,000). */
export const MAX_RULE_SET_ENTRIES = 500_000;

/**
 * Bytes of names one domain set may spell out, all its entries together: 500,000 names of 64
 * bytes. A name is at most 253 bytes, so a set at the entry cap of typical names (20–30 bytes)
 * is well inside it, while a trie whose half-million leaves each read 512 bytes is not.
 */
export const MAX_RULE_SET_NAME_BYTES = 32 * 1024 * 1024;
