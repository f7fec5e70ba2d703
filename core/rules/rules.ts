import { parseCondition } from './conditions.js';
import { LOGIC_TYPES, logicCondition, matchingParen, splitLogic } from './logic-rule.js';
import { RuleParseError } from './rule-error.js';
import type { Condition } from './match-types.js';
import type { RouteTarget } from './types.js';

export type { AsnLookup, Condition, CountryLookup, MatchContext, RuleSetMatcher, SiteLookup } from './match-types.js';

export interface Rule extends Condition {
  /** Where a match sends the flow (a SUB-RULE's is unused: its sub-rules decide). */
  readonly target: RouteTarget;
  /** SUB-RULE: the name of the `subRules` list asked when the condition matches. */
  readonly sub?: string;
  /** The rule as written (for `GET /rules`, errors and logs). */
  readonly text: string;
}

export { RuleParseError, parseCondition };

/** Names the rule tables accept for the tunnel besides `TUNNEL` (what pasted Clash rules call it). */
const TUNNEL_ALIASES = new Set(['TUNNEL', 'PROXY', 'GATEHOP']);

export function parseTarget(raw: string): RouteTarget {
  const t = raw.trim().toUpperCase();
  if (t === 'DIRECT') return 'DIRECT';
  if (t === 'REJECT' || t === 'REJECT-DROP') return 'REJECT';
  if (TUNNEL_ALIASES.has(t)) return 'TUNNEL';
  throw new RuleParseError(`unknown target "${raw.trim()}" (DIRECT, REJECT or TUNNEL)`);
}

/**
 * One rule line as a user pastes it: `DOMAIN-SUFFIX,ir,DIRECT`, `IP-CIDR,10.0.0.0/8,DIRECT,no-resolve`,
 * `MATCH,TUNNEL`. Throws RuleParseError naming the problem.
 */
export function parseRule(line: string): Rule {
  const text = line.trim();
  const parts = text.split(',');
  const type = (parts[0] ?? '').trim().toUpperCase();
  if (LOGIC_TYPES.has(type)) {
    const { payload, subs, after } = splitLogic(text);
    if (after.length === 0) throw new RuleParseError(`a logic rule is ${type},((CONDITION),(CONDITION)),TARGET`);
    const condition = logicCondition(
      type,
      payload,
      subs.map((t) => conditionOf(t, false)),
    );
    return { ...condition, target: parseTarget(after[0]!), text };
  }
  if (type === 'SUB-RULE') return parseSubRule(text);
  if (type === 'MATCH' || type === 'FINAL') {
    if (parts.length !== 2) throw new RuleParseError('MATCH takes one target: MATCH,TARGET');
    const target = parseTarget(parts[1]!);
    return { type: 'MATCH', payload: '', noResolve: false, target, text, match: () => true };
  }
  if (parts.length < 3) throw new RuleParseError('a rule is TYPE,PAYLOAD,TARGET');
  const target = parseTarget(parts[2]!);
  const condition =
    type === 'RULE-SET' ? ruleSetCondition(parts[1]!, parts.slice(3)) : parseCondition(type, parts[1]!, parts.slice(3));
  return { ...condition, target, text };
}

/**
 * `SUB-RULE,(CONDITION),NAME`: when the condition matches, the `subRules` list NAME decides, first
 * match wins; when nothing in it matches, the table goes on after this rule (mihomo's semantics).
 */
function parseSubRule(text: string): Rule {
  const start = text.indexOf(',') + 1;
  const open = text.indexOf('(', start);
  if (open < 0 || text.slice(start, open).trim() !== '')
    throw new RuleParseError('a sub-rule is SUB-RULE,(CONDITION),NAME');
  const close = matchingParen(text, open);
  const rest = text.slice(close + 1).trim();
  const name = rest.startsWith(',') ? rest.slice(1).trim() : '';
  if (name === '' || name.includes(',')) throw new RuleParseError('a sub-rule is SUB-RULE,(CONDITION),NAME');
  const condition = conditionOf(text.slice(open + 1, close).trim(), false);
  return { ...condition, type: 'SUB-RULE', payload: text.slice(open, close + 1), target: 'TUNNEL', sub: name, text };
}

/** `RULE-SET,NAME`: the set's matcher, found by name when a flow is matched (sets reload apart). */
function ruleSetCondition(payload: string, options: readonly string[]): Condition {
  const p = payload.trim();
  if (p === '') throw new RuleParseError('a rule set needs a name');
  const noResolve = options.some((o) => o.trim().toLowerCase() === 'no-resolve');
  return {
    type: 'RULE-SET',
    payload: p,
    noResolve,
    match: (f, ctx) => {
      const set = ctx.ruleSets.get(p);
      return set ? set.match(f, !noResolve) : false;
    },
  };
}

/** A classical rule set's line: `TYPE,PAYLOAD[,no-resolve]` (no target). */
export function parseClassicalLine(line: string): Condition {
  return conditionOf(line.trim(), true);
}

/**
 * A condition without a target: `TYPE,PAYLOAD[,no-resolve]`, or a logic one (a rule set's line, or
 * a condition of a logic rule; there a RULE-SET is allowed, in a rule set it is not).
 */
function conditionOf(text: string, inRuleSet: boolean): Condition {
  const parts = text.split(',');
  const head = (parts[0] ?? '').trim().toUpperCase();
  if (LOGIC_TYPES.has(head)) {
    const { payload, subs, after } = splitLogic(text);
    if (after.length > 0) throw new RuleParseError(`"${text.slice(0, 60)}": a condition has no target`);
    return logicCondition(
      head,
      payload,
      subs.map((t) => conditionOf(t, inRuleSet)),
    );
  }
  if (parts.length < 2) throw new RuleParseError(`a ${inRuleSet ? 'rule-set line' : 'condition'} is TYPE,PAYLOAD`);
  const type = parts[0]!.trim().toUpperCase();
  if (type === 'MATCH' || type === 'SUB-RULE' || (inRuleSet && type === 'RULE-SET'))
    throw new RuleParseError(`${type} cannot appear inside a ${inRuleSet ? 'rule set' : 'logic rule'}`);
  if (type === 'RULE-SET') return ruleSetCondition(parts[1]!, parts.slice(2));
  return parseCondition(type, parts[1]!, parts.slice(2));
}
