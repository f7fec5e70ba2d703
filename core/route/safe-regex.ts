/**
 * DOMAIN-REGEX patterns come from rule sets anyone may publish, and JavaScript's regex engine
 * backtracks: `(a+)+$` against a long name can take seconds per flow. Only patterns whose matching
 * stays bounded on a name (≤ 253 characters) are taken:
 *   - no back-references and no lookaround;
 *   - no quantifier on a group (`(…)*`, `(…)+`, `(…){2,}`), the shape of every catastrophic case;
 *   - the quantifiers' ways to split a name, multiplied, at most 254² (two `.*`): each unbounded
 *     one (`*`, `+`, `{m,}`) counts 254, `?` 2 and `{m,n}` n − m + 1. Counting only the unbounded
 *     ones let polynomial patterns through: twenty `a?` before twenty `a` are 2²⁰ ways, and such a
 *     37-character pattern took 2.5 s per name on the main loop (#45);
 *   - at most 512 characters.
 * Anything else is refused with the reason, never run. Returns null when the pattern is safe.
 */
const NAME_WAYS = 254;
const BUDGET = NAME_WAYS * NAME_WAYS;

export function unsafeRegexReason(source: string): string | null {
  if (source.length > 512) return 'longer than 512 characters';
  if (/\\[1-9]|\\k</.test(source)) return 'back-references can backtrack without bound';
  if (/\(\?<?[=!]/.test(source)) return 'lookaround is not allowed';
  let ways = 1;
  let unbounded = 0;
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (/^[*+?{]/.test(source.slice(i + 1))) return 'a quantified group can backtrack without bound';
    } else if (c === '*' || c === '+') {
      unbounded++;
      ways *= NAME_WAYS;
    } else if (c === '?' && source[i - 1] !== '(') ways *= source[i - 1] === '*' || source[i - 1] === '+' ? 1 : 2;
    else if (c === '{') {
      const q = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i));
      if (!q) continue;
      if (q[2] === undefined) continue; // {n}: one way
      if (q[3] === '') {
        unbounded++;
        ways *= NAME_WAYS;
      } else ways *= Math.max(1, Number(q[3]) - Number(q[1]) + 1);
    }
  }
  if (depth !== 0) return 'unbalanced parentheses';
  if (unbounded > 2) return 'more than two unbounded quantifiers';
  if (ways > BUDGET) return 'its quantifiers together can backtrack too long on a name';
  return null;
}
