import type { FailFilter, Ranking } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';

export interface CandidateInput {
  pool: readonly VpnGateNode[];
  ranking: Ranking;
  activeId: string | null;
  failFilter: FailFilter;
  /** The node whose active tunnel died in the last minute, if any. */
  died: string | null;
  isMember: (nodeId: string) => boolean;
  mode: 'auto' | 'manual';
  pinned: string | null;
  fallbackWhenPinnedFails: boolean;
  /** Found to tamper (core/honesty): never a candidate of automatic selection. */
  flagged?: (nodeId: string) => boolean;
  /** Found to tamper and not accepted by the user: not even as the pin. */
  pinBlocked?: (nodeId: string) => boolean;
}

/** Why a pin (or pick) of a node found to tamper is not used until the user accepts it. */
export const PIN_TAMPERS = 'it was found to tamper with traffic (pick it again to use it anyway)';

/**
 * The nodes a switch tries, best first, never the active one (pure). Ranked order, with balance
 * members' nodes after the rest (a member taken over leaves a gap; but one beats no tunnel) and
 * the node whose tunnel just died last of all (often up again at once, a crashed worker or a
 * blip, but a server that killed its tunnel may do it again); a node found to tamper never. In
 * manual mode the pin comes first (a tampering one only if the user accepted it), and the rest
 * only with fallbackWhenPinnedFails; a pin that cannot be tried says why.
 */
export function orderCandidates(i: CandidateInput): { nodes: VpnGateNode[]; pinProblem: string | null } {
  const flagged = i.flagged ?? (() => false);
  // The ranking may predate a verdict: a node flagged since is left out here too.
  const usable = i.ranking.ranked
    .map((r) => r.node)
    .filter((n) => n.id !== i.activeId && i.failFilter.allows(n.id) && !flagged(n.id));
  const tier = (n: VpnGateNode): number => (n.id === i.died ? 2 : i.isMember(n.id) ? 1 : 0);
  const ranked = [0, 1, 2].flatMap((t) => usable.filter((n) => tier(n) === t));
  const pinned = i.pinned;
  if (i.mode !== 'manual' || !pinned || pinned === i.activeId) return { nodes: ranked, pinProblem: null };
  const pin = i.pool.find((n) => n.id === pinned);
  const blocked = !!pin && (i.pinBlocked?.(pinned) ?? false);
  const pinUsable = pin && !blocked && !i.ranking.excluded.some((e) => e.nodeId === pinned && e.reason === 'backoff');
  const rest = i.fallbackWhenPinnedFails ? ranked.filter((n) => n.id !== pinned) : [];
  if (pin && pinUsable) return { nodes: [pin, ...rest], pinProblem: null };
  return {
    nodes: rest,
    pinProblem: !pin ? 'it is not in the node list' : blocked ? PIN_TAMPERS : 'it is backing off after failures',
  };
}
