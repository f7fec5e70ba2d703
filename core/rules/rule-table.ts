import {
  parseRule,
  RuleParseError,
  type Condition,
  type CountryLookup,
  type MatchContext,
  type Rule,
  type AsnLookup,
  type RuleSetMatcher,
  type SiteLookup,
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
  geosite?: SiteLookup | null;
  asn?: AsnLookup | null;
  /** Named rule lists that SUB-RULE lines hand a flow to (config `subRules`, mihomo's `sub-rules`). */
  subRules?: Readonly<Record<string, readonly string[]>>;
}

/** Where the table stopped: the rule's index, and inside a SUB-RULE the index in its list, and so on. */
export type RulePath = readonly number[];

/**
 * What the table answered: a decision, or what the flow must carry before it can decide and the
 * rule that asked (`at`): the caller asks again from there, never from the first rule.
 */
export type Answer = { decision: Decision } | { need: Need; at: RulePath };

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
  /** The SUB-RULE lists by name, parsed (a list a SUB-RULE names but the config lacks is an error). */
  readonly subRules: ReadonlyMap<string, readonly Rule[]>;
  /** Every condition of the table, those inside logic rules and sub-rule lists included. */
  readonly conditions: readonly Condition[];
  readonly #ctx: MatchContext;
  /**
   * Whether a flow addressed by IP should have its name read from its first bytes (SNI, Host):
   * only when some rule matches names (the default table's `localhost` and `local` rules never
   * match a name a remote server presents), and only in rule mode.
   */
  readonly sniffs: boolean;

  constructor(o: RuleTableOptions) {
    this.mode = o.mode;
    const { rules, errors } = parseRuleLines(o.rules ?? DEFAULT_RULES, o.source ?? 'rules');
    const subs = parseSubRules(o.subRules ?? {}, errors);
    this.rules = dropUnreachable(rules, subs, o.rules ?? DEFAULT_RULES, o.source ?? 'rules', errors);
    this.subRules = subs;
    this.errors = errors;
    this.#ctx = {
      ruleSets: o.ruleSets ?? new Map(),
      geoip: o.geoip ?? null,
      geosite: o.geosite ?? null,
      asn: o.asn ?? null,
    };
    // A logic rule needs what its conditions need; a SUB-RULE what its list needs.
    const all = [...this.rules, ...[...subs.values()].flat()].flatMap(withSubs);
    this.conditions = all;
    this.sniffs =
      o.mode === 'rule' &&
      all.some(
        (r) =>
          (r.type.startsWith('DOMAIN') || r.type === 'RULE-SET' || r.type === 'GEOSITE') &&
          !(r.type === 'DOMAIN-SUFFIX' && (r.payload === 'localhost' || r.payload === 'local')),
      );
  }

  get context(): MatchContext {
    return this.#ctx;
  }

  /**
   * Where `flow` goes. In `global` mode everything goes through the tunnel, in `direct` mode nothing
   * does; in `rule` mode the first rule that matches decides, and a rule that must know the flow's
   * address (or program) first answers `need` with where it stopped (`at`: the caller finds it
   * out and asks again `from` there). One pass, in order, as mihomo evaluates: a rule passed before the address
   * was known is never asked again with it, so a `no-resolve` rule above a resolving one never
   * matches a named flow by the address a later rule had resolved (#45).
   */
  decide(flow: Flow, from: RulePath = []): Answer {
    if (this.mode === 'global') return { decision: { target: 'TUNNEL', rule: 'GLOBAL', payload: '' } };
    if (this.mode === 'direct') return { decision: { target: 'DIRECT', rule: 'DIRECT', payload: '' } };
    return this.#walk(this.rules, flow, from) ?? { decision: FINAL };
  }

  /**
   * First match in `rules` from `from`; null when none matches. A SUB-RULE whose condition matches
   * hands the flow to its list; when nothing there matches the walk goes on after it. Resuming
   * inside a list (`from` longer than one) skips the condition, which had already matched.
   */
  #walk(rules: readonly Rule[], flow: Flow, from: RulePath): Answer | null {
    const start = from[0] ?? 0;
    for (let i = start; i < rules.length; i++) {
      const r = rules[i]!;
      const inner = i === start ? from.slice(1) : [];
      if (inner.length === 0) {
        const m = r.match(flow, this.#ctx);
        if (m === false) continue;
        if (m !== true) return { need: m, at: [i] };
        if (r.sub === undefined) return { decision: { target: r.target, rule: r.type, payload: r.payload } };
      }
      const a = this.#walk(this.subRules.get(r.sub!) ?? [], flow, inner);
      if (a === null) continue;
      return 'need' in a ? { need: a.need, at: [i, ...a.at] } : a;
    }
    return null;
  }
}

/** Sub-rule lists nested deeper than this are refused (mihomo has no bound; a loop would never end). */
const MAX_SUB_DEPTH = 8;

function parseSubRules(lists: Readonly<Record<string, readonly string[]>>, errors: RuleError[]): Map<string, Rule[]> {
  const out = new Map<string, Rule[]>();
  for (const [name, lines] of Object.entries(lists)) {
    const parsed = parseRuleLines(lines, `subRules.${name}`);
    errors.push(...parsed.errors);
    out.set(name, parsed.rules);
  }
  for (const [name, rules] of out)
    out.set(name, dropUnreachable(rules, out, lists[name] ?? [], `subRules.${name}`, errors));
  return out;
}

/**
 * SUB-RULE lines whose list is missing, or that lead back to themselves or deeper than
 * MAX_SUB_DEPTH, are named and left out: the rest of the table still loads.
 */
function dropUnreachable(
  rules: Rule[],
  lists: ReadonlyMap<string, readonly Rule[]>,
  lines: readonly string[],
  source: string,
  errors: RuleError[],
): Rule[] {
  const depth = (name: string, seen: readonly string[]): number => {
    if (seen.includes(name)) return Infinity;
    let d = 1;
    for (const r of lists.get(name) ?? []) if (r.sub !== undefined) d = Math.max(d, 1 + depth(r.sub, [...seen, name]));
    return d;
  };
  return rules.filter((r) => {
    if (r.sub === undefined) return true;
    let message: string | null = null;
    if (!lists.has(r.sub)) message = `no sub-rule list named "${r.sub}" (subRules)`;
    else if (depth(r.sub, []) > MAX_SUB_DEPTH)
      message = `sub-rule "${r.sub}" loops back or nests deeper than ${MAX_SUB_DEPTH}`;
    if (message === null) return true;
    errors.push({ source, line: lines.findIndex((l) => l.trim() === r.text) + 1, text: r.text.slice(0, 200), message });
    return false;
  });
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
