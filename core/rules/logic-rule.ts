/**
 * mihomo's logic rules: `AND,((DOMAIN,baidu.com),(NETWORK,TCP)),REJECT`, `OR,(…)`, `NOT,((…))`,
 * nested to any depth (`OR,((AND,((…),(…))),(DOMAIN,x)),DIRECT`). The payload is a parenthesised
 * list of conditions, each itself in parentheses; commas inside them do not end the payload.
 */
import { RuleParseError } from './rule-error.js';
import type { Condition, MatchContext } from './match-types.js';
import type { Flow, Need } from './types.js';

export const LOGIC_TYPES = new Set(['AND', 'OR', 'NOT']);

/** Deeper nesting than this is refused (no rule anyone writes comes near; it bounds the recursion). */
const MAX_DEPTH = 16;

/**
 * `TYPE,((A),(B)),REST…` → the payload `((A),(B))`, the condition texts `A`, `B` and what follows (`REST…`,
 * split at commas: the target and options of a rule, nothing for a condition inside another).
 * mihomo also takes the conditions unwrapped, `TYPE,(A),(B),REST…` (its own tests nest
 * `(AND,(DOMAIN,baidu.com),(NETWORK,TCP))` so): a run of parenthesised groups is the payload, and
 * a single group is the wrapped list.
 */
export function splitLogic(text: string): { payload: string; subs: string[]; after: string[] } {
  const start = text.indexOf(',') + 1;
  const open = start + (text.slice(start).length - text.slice(start).trimStart().length);
  if (start === 0 || text[open] !== '(')
    throw new RuleParseError(`a logic rule is ${text.split(',')[0]},((CONDITION),(CONDITION)),TARGET`);
  // The run of top-level groups: `(A)`, `,(B)`, … up to the first part that is not one.
  const groups: Array<[number, number]> = [];
  let at = open;
  for (;;) {
    const close = matchingParen(text, at);
    groups.push([at, close]);
    const next = /^\s*,\s*\(/.exec(text.slice(close + 1));
    if (!next) break;
    at = close + next[0].length;
  }
  const end = groups[groups.length - 1]![1];
  const inner =
    groups.length === 1 ? topLevel(text.slice(open + 1, end)) : groups.map(([a, b]) => text.slice(a, b + 1));
  const subs = inner.map((s) => {
    const t = s.trim();
    if (!t.startsWith('(') || matchingParen(t, 0) !== t.length - 1)
      throw new RuleParseError(`"${t.slice(0, 60)}": each condition of a logic rule is in parentheses`);
    return t.slice(1, -1).trim();
  });
  if (subs.length === 0 || subs.some((s) => s === '')) throw new RuleParseError('an empty condition in a logic rule');
  const rest = text.slice(end + 1).trim();
  if (rest !== '' && !rest.startsWith(','))
    throw new RuleParseError(`"${rest.slice(0, 60)}" after a logic rule's conditions`);
  return { payload: text.slice(open, end + 1), subs, after: rest === '' ? [] : rest.slice(1).split(',') };
}

/** The index of the parenthesis that closes the one at `open`. */
export function matchingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') {
      if (++depth > MAX_DEPTH + 1) throw new RuleParseError(`logic rules nested deeper than ${MAX_DEPTH}`);
    } else if (text[i] === ')' && --depth === 0) return i;
  }
  throw new RuleParseError('unbalanced parentheses in a logic rule');
}

/** `(A),(B,c),(C)` split at the commas outside parentheses. */
function topLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      out.push(text.slice(from, i));
      from = i + 1;
    }
  }
  out.push(text.slice(from));
  return out.filter((s) => s.trim() !== '');
}

/**
 * The logic condition over `subs`. A sub-condition that cannot tell yet (it needs the flow's
 * address or program) makes the whole one wait only when the others cannot settle it without it:
 * a false in an AND, a true in an OR decides at once, as mihomo's evaluation does.
 */
export function logicCondition(type: string, payload: string, subs: Condition[]): Condition {
  if (type === 'NOT' && subs.length !== 1) throw new RuleParseError('NOT takes one condition: NOT,((CONDITION))');
  const match = (flow: Flow, ctx: MatchContext): boolean | Need => {
    let need: Need | null = null;
    for (const s of subs) {
      const m = s.match(flow, ctx);
      if (type === 'NOT') return m === true ? false : m === false ? true : m;
      if (m === (type === 'OR')) return m;
      if (m !== true && m !== false) need ??= m;
    }
    return need ?? type === 'AND';
  };
  return { type, payload, noResolve: subs.every((s) => s.noResolve), subs, match };
}
