/**
 * DOMAIN-WILDCARD's patterns as mihomo matches them: `*` any run of characters (none, and dots
 * too: `*.example.com` matches `a.b.example.com`), `?` exactly one character, everything else
 * itself. Matched without backtracking beyond the last `*` (the classic two-pointer walk), so a
 * name costs at most its length times the pattern's.
 */
export function globMatch(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let starP = -1;
  let starN = 0;
  while (n < name.length) {
    const c = pattern[p];
    if (c === '*') {
      starP = p++;
      starN = n;
    } else if (c !== undefined && (c === '?' || c === name[n])) {
      p++;
      n++;
    } else if (starP >= 0) {
      p = starP + 1;
      n = ++starN;
    } else return false;
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}
