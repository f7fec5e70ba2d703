import type { DialVia } from '../reach/index.js';

/**
 * Where a node list can come from: the official endpoints (or the `--api` ones that replace
 * them), mirrors found on directory pages, and sources the user added (community copies of the
 * CSV). An imported file and the cache are not fetched and so are not sources here.
 */
export type SourceKind = 'official' | 'api' | 'mirror' | 'user';

export interface ListSource {
  readonly url: string;
  readonly kind: SourceKind;
}

/** What Gatehop remembers of a source (the store keeps it across starts). */
export interface SourceRecord extends ListSource {
  /** When it was first known (a mirror: when a directory listed it). */
  foundAt: number;
  /** The directory page that listed a mirror. */
  foundFrom: string | null;
  lastOkAt: number | null;
  lastFailAt: number | null;
  lastError: string | null;
  /** How the last attempt went out. */
  lastVia: DialVia | null;
  /** Nodes in its last good list. */
  lastNodes: number | null;
}

/** A source that failed is tried after the others for this long (junk, a stall, a refusal). */
export const DEMOTE_MS = 60 * 60_000;
/** Mirrors not heard from for this long are forgotten (volunteer PCs come and go). */
export const FORGET_MIRROR_MS = 30 * 24 * 3600_000;

const KIND_ORDER: Record<SourceKind, number> = { official: 0, api: 0, user: 1, mirror: 2 };

/**
 * The order one refresh tries its sources in, fastest first:
 *   1. not demoted before demoted (a source that failed within DEMOTE_MS and has not worked since);
 *   2. the one that delivered most recently first (so a mirror that worked is used first next start);
 *   3. official or --api endpoints, then the user's sources, then mirrors;
 *   4. as configured (mirrors: as found).
 * Pure: `now` and the records are all it reads.
 */
export function orderSources(
  candidates: readonly ListSource[],
  records: ReadonlyMap<string, SourceRecord>,
  now: number,
): ListSource[] {
  const demoted = (s: ListSource): boolean => {
    const r = records.get(s.url);
    return (
      !!r &&
      r.lastFailAt !== null &&
      now - r.lastFailAt < DEMOTE_MS &&
      (r.lastOkAt === null || r.lastOkAt < r.lastFailAt)
    );
  };
  return candidates
    .map((s, i) => ({ s, i, demoted: demoted(s), ok: records.get(s.url)?.lastOkAt ?? -1 }))
    .sort(
      (a, b) =>
        Number(a.demoted) - Number(b.demoted) ||
        b.ok - a.ok ||
        KIND_ORDER[a.s.kind] - KIND_ORDER[b.s.kind] ||
        a.i - b.i,
    )
    .map((x) => x.s);
}

/** The candidates of one refresh: configured endpoints, the user's sources, remembered mirrors; one entry per URL. */
export function candidateSources(
  endpoints: readonly ListSource[],
  userSources: readonly string[],
  mirrors: readonly SourceRecord[],
): ListSource[] {
  const seen = new Set<string>();
  const out: ListSource[] = [];
  for (const s of [
    ...endpoints,
    ...userSources.map((url) => ({ url, kind: 'user' as const })),
    ...mirrors.map((m) => ({ url: m.url, kind: 'mirror' as const })),
  ]) {
    if (seen.has(s.url)) continue;
    seen.add(s.url);
    out.push(s);
  }
  return out;
}
