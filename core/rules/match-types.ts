/**
 * What a rule is and what it matches against, apart from how rules are parsed (rules.ts): the
 * condition parsers and logic rules import these without importing the parser that imports them.
 */
import type { Flow, Need } from './types.js';

/** What a rule set looks like to the table: a matcher over flows, by name. */
export interface RuleSetMatcher {
  readonly behavior: 'domain' | 'ipcidr' | 'classical';
  /** Whether the set matches; `need` when it must know the flow's address or program first. */
  match(flow: Flow, resolve: boolean): boolean | Need;
}

/** Where a GEOIP rule finds a country: ISO code of an address, or null when unknown. */
export interface CountryLookup {
  country(ip: string): string | null;
}

/** Where an IP-ASN rule finds an address's autonomous system (null: unknown). */
export interface AsnLookup {
  asn(ip: string): number | null;
}

/** Where a GEOSITE rule finds its list: whether `name` is in the list `code` (`cn`, `google@cn`). */
export interface SiteLookup {
  matches(code: string, name: string): boolean;
}

export interface MatchContext {
  readonly ruleSets: ReadonlyMap<string, RuleSetMatcher>;
  readonly geoip: CountryLookup | null;
  readonly geosite?: SiteLookup | null;
  readonly asn?: AsnLookup | null;
}

/** One parsed rule without its target (a classical rule set's lines have none). */
export interface Condition {
  readonly type: string;
  readonly payload: string;
  /** IP rules: do not resolve a named destination to try this rule (mihomo's `no-resolve`). */
  readonly noResolve: boolean;
  /** True, false, or what the flow must carry before the rule can tell. */
  match(flow: Flow, ctx: MatchContext): boolean | Need;
  /** A logic rule's conditions (AND, OR, NOT): what the table looks into for what rules need. */
  readonly subs?: readonly Condition[];
}
