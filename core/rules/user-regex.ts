import { RE2JS } from 're2js';
import { RuleParseError } from './rule-error.js';

/** The longest pattern taken (no rule anyone writes comes near; it bounds compile time and memory). */
export const MAX_REGEX_LENGTH = 1024;

/** A compiled user pattern: true when it matches anywhere in the input, as Go's MatchString. */
export interface UserRegex {
  test(input: string): boolean;
}

/**
 * A pattern from a rule or a rule set (DOMAIN-REGEX, PROCESS-NAME-REGEX, PROCESS-PATH-REGEX),
 * compiled by RE2JS, a port of RE2: matching is linear in the input whatever the pattern, so a
 * pattern such as `(a+)+$` cannot hold the main loop (JavaScript's own engine backtracks; a
 * 37-character pattern took 2.5 s per name with it, #45). RE2's syntax is Go's, which mihomo uses,
 * so a pattern means here what it means there; what RE2 does not have (back-references,
 * lookaround) is refused with RE2's reason, as mihomo refuses it. `caseless` for names.
 */
export function compileUserRegex(source: string, caseless: boolean): UserRegex {
  if (source === '') throw new RuleParseError('an empty regex');
  if (source.length > MAX_REGEX_LENGTH) throw new RuleParseError(`a regex longer than ${MAX_REGEX_LENGTH} characters`);
  try {
    const re = RE2JS.compile(source, caseless ? RE2JS.CASE_INSENSITIVE : 0);
    return { test: (input) => re.test(input) };
  } catch (err) {
    throw new RuleParseError(`regex "${source.slice(0, 80)}": ${(err as Error).message}`);
  }
}
