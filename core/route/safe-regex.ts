/**
 * DOMAIN-REGEX patterns come from rule sets anyone may publish, and JavaScript's regex engine
 * backtracks: `(a+)+$` against a long name can take seconds per flow. Only patterns whose matching
 * stays near-linear on a name (≤ 253 characters) are taken:
 *   - no back-references and no lookaround;
 *   - no quantifier on a group (`(…)*`, `(…)+`, `(…){2,}`), the shape of every catastrophic case;
 *   - at most two unbounded quantifiers in all (two `.*` cost at most 253² steps);
 *   - at most 512 characters.
 * Anything else is refused with the reason, never run. Returns null when the pattern is safe.
 */
export function unsafeRegexReason(source: string): string | null {
  if (source.length > 512) return 'longer than 512 characters';
  if (/\\[1-9]|\\k</.test(source)) return 'back-references can backtrack without bound';
  if (/\(\?<?[=!]/.test(source)) return 'lookaround is not allowed';
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
    } else if (c === '*' || c === '+') unbounded++;
    else if (c === '{' && /^\{\d+,\}/.test(source.slice(i))) unbounded++;
  }
  if (depth !== 0) return 'unbalanced parentheses';
  if (unbounded > 2) return 'more than two unbounded quantifiers';
  return null;
}
