import {
  parseRule,
  RuleParseError,
  type Condition,
  type CountryLookup,
  type MatchContext,
  type Rule,
  type RuleSetMatcher,
} from './rules.js';
import type { Decision, Flow, Need, RouteMode } from './types.js';

/**
 * The table a fresh install uses (a user's `rules` replace it whole, as in Clash): names that mean
 * this machine or the local link, and private, loopback and link-local addresses, go direct
 * (`no-resolve`: a name is never resolved just to find out); everything else through the tunnel.
 */
export const DEFAULT_RULES: readonly string[] = [
  'DOMAIN-SUFFIX,localhost,DIRECT',
  'DOMAIN-SUFFIX,local,DIRECT',
  'GEOIP,LAN,DIRECT,no-resolve',
  'MATCH,TUNNEL',
];

/** A rule line that did not parse: which line of which source, and why. */
export interface RuleError {
  source: string;
  line: number;
  text: string;
  message: string;
}

export interface RuleTableOptions {
  mode: RouteMode;
  /** Rule lines in mihomo's syntax; default DEFAULT_RULES. */
  rules?: readonly string[];
  /** Where the rules came from, for errors (`config rules`, a file name). */
  source?: string;
  ruleSets?: ReadonlyMap<string, RuleSetMatcher>;
  geoip?: CountryLookup | null;
}

/**
 * What the table answered: a decision, or what the flow must carry before it can decide and the
 * rule that asked (`at`): the caller asks again from there, never from the first rule.
 */
export type Answer = { decision: Decision } | { need: Need; at: number };

const FINAL: Decision = { target: 'TUNNEL', rule: 'MATCH', payload: '' };

/**
 * First match wins. Asked once when a TCP flow opens and once per UDP packet; what it answers is the
 * flow's for life (a reload builds a new table; open flows keep their decision). A table never
 * opens anything: it names a target.
 */
export class RuleTable {
  readonly mode: RouteMode;
  readonly rules: readonly Rule[];
  readonly errors: readonly RuleError[];
  readonly #ctx: MatchContext;
  /** Whether any rule needs a flow's address (the proxy resolves a name inside the tunnel only then). */
  readonly needsAddresses: boolean;
  /** Whether any rule needs the local program (looked up only then). */
  readonly needsProcess: boolean;
  /**
   * Whether a flow addressed by IP should have its name read from its first bytes (SNI, Host):
   * only when some rule matches names (the default table's `localhost` and `local` rules never
   * match a name a remote server presents), and only in rule mode.
   */
  readonly sniffs: boolean;

  constructor(o: RuleTableOptions) {
    this.mode = o.mode;
    const { rules, errors } = parseRuleLines(o.rules ?? DEFAULT_RULES, o.source ?? 'rules');
    this.rules = rules;
    this.errors = errors;
    this.#ctx = { ruleSets: o.ruleSets ?? new Map(), geoip: o.geoip ?? null };
    // A logic rule needs what its conditions need.
    const all = rules.flatMap(withSubs);
    this.needsAddresses = all.some(
      (r) =>
        !r.noResolve && (r.type === 'IP-CIDR' || r.type === 'IP-CIDR6' || r.type === 'GEOIP' || r.type === 'RULE-SET'),
    );
    this.needsProcess = all.some((r) => r.type.startsWith('PROCESS-') || r.type === 'RULE-SET');
    this.sniffs =
      o.mode === 'rule' &&
      all.some(
        (r) =>
          (r.type.startsWith('DOMAIN') || r.type === 'RULE-SET') &&
          !(r.type === 'DOMAIN-SUFFIX' && (r.payload === 'localhost' || r.payload === 'local')),
      );
  }

  get context(): MatchContext {
    return this.#ctx;
  }

  /**
   * Where `flow` goes. In `global` mode everything goes through the tunnel, in `direct` mode nothing
   * does; in `rule` mode the first rule that matches decides, and a rule that must know the flow's
   * address (or program) first answers `need` with its index (the caller finds it out and asks
   * again `from` there). One pass, in order, as mihomo evaluates: a rule passed before the address
   * was known is never asked again with it, so a `no-resolve` rule above a resolving one never
   * matches a named flow by the address a later rule had resolved (#45).
   */
  decide(flow: Flow, from = 0): Answer {
    if (this.mode === 'global') return { decision: { target: 'TUNNEL', rule: 'GLOBAL', payload: '' } };
    if (this.mode === 'direct') return { decision: { target: 'DIRECT', rule: 'DIRECT', payload: '' } };
    for (let i = from; i < this.rules.length; i++) {
      const r = this.rules[i]!;
      const m = r.match(flow, this.#ctx);
      if (m === true) return { decision: { target: r.target, rule: r.type, payload: r.payload } };
      if (m !== false) return { need: m, at: i };
    }
    return { decision: FINAL };
  }

  /** The same table in another mode (the tray and dashboards switch modes; rules stay). */
  withMode(mode: RouteMode, rules: readonly string[], source: string): RuleTable {
    return new RuleTable({
      mode,
      rules,
      source,
      ruleSets: this.#ctx.ruleSets,
      geoip: this.#ctx.geoip,
    });
  }
}

/** A condition and, for a logic rule, every condition inside it. */
function withSubs(c: Condition): Condition[] {
  return [c, ...(c.subs ?? []).flatMap(withSubs)];
}

/** Parses rule lines; bad ones are named with their line and left out, the rest kept in order. */
export function parseRuleLines(lines: readonly string[], source: string): { rules: Rule[]; errors: RuleError[] } {
  const rules: Rule[] = [];
  const errors: RuleError[] = [];
  lines.forEach((text, i) => {
    const t = text.trim();
    if (t === '' || t.startsWith('#')) return;
    try {
      rules.push(parseRule(t));
    } catch (err) {
      if (!(err instanceof RuleParseError)) throw err;
      errors.push({ source, line: i + 1, text: t.slice(0, 200), message: err.message });
    }
  });
  return { rules, errors };
}
