import type { NodeHistory } from '../store/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import type { SelectorOptions } from './options.js';

export interface PriorTerms {
  score: number;
  speed: number;
  sessions: number;
  uptime: number;
  /** How recently a list named it (the pool remembers nodes absent from the latest list). */
  freshness: number;
  /** A tunnel to it worked within the last week. */
  worked: number;
  countryPenalty: number;
  protocolPenalty: number;
  prior: number;
}

const WORKED_WITHIN_MS = 7 * 24 * 3600_000;

/** Min-max on a log scale (the list's figures span orders of magnitude); 0.5 when unknown or flat. */
function normalizer(values: Array<number | null>): (v: number | null) => number {
  const logs = values.filter((v): v is number => v !== null).map((v) => Math.log1p(v));
  if (logs.length === 0) return () => 0.5;
  const lo = Math.min(...logs);
  const hi = Math.max(...logs);
  return (v) => (v === null ? 0.5 : hi === lo ? 1 : (Math.log1p(v) - lo) / (hi - lo));
}

/**
 * Stage one: cheap priors from the list's own figures and the pool's memory.
 *   prior = w1·norm(Score) + w2·norm(Speed) + w3·1/(1+NumVpnSessions) + w4·norm(Uptime)
 *         + w5·0.5^(age since last listed / half-life) + w6·[worked within a week] − penalties
 * A node the latest list names has its full freshness; one the pool remembers from days ago still
 * competes, on what it offered and whether it worked. Denied countries are left out entirely.
 */
export function computePriors(
  nodes: readonly VpnGateNode[],
  opts: SelectorOptions,
  ctx: { now?: number; history?: (nodeId: string) => NodeHistory } = {},
): Map<string, PriorTerms> {
  const now = ctx.now ?? Date.now();
  const eligible = nodes.filter((n) => !opts.countryDeny.includes(n.countryShort));
  const nScore = normalizer(eligible.map((n) => n.score));
  const nSpeed = normalizer(eligible.map((n) => n.speedBps));
  const nUptime = normalizer(eligible.map((n) => n.uptimeMs));
  const w = opts.weights;
  const out = new Map<string, PriorTerms>();
  for (const n of eligible) {
    const score = w.score * nScore(n.score);
    const speed = w.speed * nSpeed(n.speedBps);
    const sessions = w.sessions * (n.numVpnSessions === null ? 0.5 : 1 / (1 + n.numVpnSessions));
    const uptime = w.uptime * nUptime(n.uptimeMs);
    const listedAgo = n.lastListedAt == null ? 0 : Math.max(0, now - n.lastListedAt);
    const freshness = w.freshness * 0.5 ** (listedAgo / opts.freshnessHalfLifeMs);
    const lastOk = ctx.history?.(n.id).lastSuccessAt ?? null;
    const worked = lastOk !== null && now - lastOk < WORKED_WITHIN_MS ? w.worked : 0;
    const countryPenalty =
      opts.countryAllow.length > 0 && !opts.countryAllow.includes(n.countryShort) ? opts.countryPenalty : 0;
    const protocolPenalty = opts.preferProto !== 'any' && n.proto !== opts.preferProto ? opts.protocolPenalty : 0;
    out.set(n.id, {
      score,
      speed,
      sessions,
      uptime,
      freshness,
      worked,
      countryPenalty,
      protocolPenalty,
      prior: score + speed + sessions + uptime + freshness + worked - countryPenalty - protocolPenalty,
    });
  }
  return out;
}

/** The K nodes with the best prior (ties by id, so the order is deterministic). */
export function topK(nodes: readonly VpnGateNode[], priors: Map<string, PriorTerms>, k: number): VpnGateNode[] {
  return nodes
    .filter((n) => priors.has(n.id))
    .sort((a, b) => priors.get(b.id)!.prior - priors.get(a.id)!.prior || a.id.localeCompare(b.id))
    .slice(0, k);
}
