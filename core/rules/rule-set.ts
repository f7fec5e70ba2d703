import { parse as parseYaml } from 'yaml';
import { CidrSet } from './cidr-set.js';
import { DomainSet } from './domain-set.js';
import { readMrs } from './mrs.js';
import { MAX_RULE_SET_ENTRIES } from './rule-set-limits.js';
import { addressOf, nameOf } from './flow-facts.js';
import { parseClassicalLine, RuleParseError, type Condition, type MatchContext, type RuleSetMatcher } from './rules.js';
import type { Flow, Need } from './types.js';

export type RuleSetBehavior = 'domain' | 'ipcidr' | 'classical';
export type RuleSetFormat = 'yaml' | 'text' | 'mrs';

/** A line a rule set could not take: where, what, why. The rest of the set still loads. */
export interface RuleSetError {
  line: number;
  text: string;
  message: string;
}

/** Errors kept per set (a file of garbage need not be repeated back line by line). */
const MAX_ERRORS_KEPT = 20;

/**
 * One rule set (a mihomo rule-provider's content), parsed: `domain` sets into a DomainSet,
 * `ipcidr` sets into a CidrSet, `classical` sets into conditions tried in order. Bad lines are
 * counted and named (the first 20), never fatal; a set with no good line at all is refused.
 */
export class RuleSet implements RuleSetMatcher {
  readonly #domains = new DomainSet();
  readonly #cidrs = new CidrSet();
  readonly #conditions: Condition[] = [];
  readonly errors: RuleSetError[] = [];
  badLines = 0;
  /** A classical set with a GEOIP line other than LAN: the table needs GeoIP loaded. */
  namesCountries = false;
  /** A classical set with a GEOSITE line: the table needs the domain lists loaded. */
  namesSites = false;
  /** A classical set with an IP-ASN line: the table needs the ASN data loaded. */
  namesAsns = false;

  constructor(
    readonly behavior: RuleSetBehavior,
    private readonly context: () => MatchContext,
  ) {}

  get size(): number {
    return this.behavior === 'domain'
      ? this.#domains.size
      : this.behavior === 'ipcidr'
        ? this.#cidrs.size
        : this.#conditions.length;
  }

  /** Adds one entry; false (and an error) when it is not one this behaviour takes. */
  add(entry: string, line: number): boolean {
    try {
      if (this.behavior === 'domain') {
        if (!this.#domains.add(entry)) throw new RuleParseError(`"${entry}" is not a domain pattern`);
      } else if (this.behavior === 'ipcidr') {
        if (!this.#cidrs.add(entry)) throw new RuleParseError(`"${entry}" is not an IP network`);
      } else {
        const c = parseClassicalLine(entry);
        if (c.type === 'GEOIP' && c.payload !== 'LAN') this.namesCountries = true;
        if (c.type === 'GEOSITE') this.namesSites = true;
        if (c.type === 'IP-ASN' || c.type === 'SRC-IP-ASN') this.namesAsns = true;
        this.#conditions.push(c);
      }
      return true;
    } catch (err) {
      this.badLines++;
      if (this.errors.length < MAX_ERRORS_KEPT)
        this.errors.push({ line, text: entry.slice(0, 200), message: (err as Error).message });
      return false;
    }
  }

  /** An ipcidr set's range from mrs: two 16-byte addresses (IPv4 mapped), both of one family. */
  addRange(from: Uint8Array, to: Uint8Array, line: number): boolean {
    if (this.#cidrs.addRange(from, to)) return true;
    this.badLines++;
    if (this.errors.length < MAX_ERRORS_KEPT)
      this.errors.push({ line, text: 'range', message: 'a range of two address families, or backwards' });
    return false;
  }

  match(flow: Flow, resolve: boolean): boolean | Need {
    if (this.behavior === 'domain') {
      const n = nameOf(flow);
      return n !== null && this.#domains.has(n);
    }
    if (this.behavior === 'ipcidr') {
      const ip = addressOf(flow);
      if (ip === undefined) return resolve ? 'address' : false;
      return ip !== null && this.#cidrs.has(ip);
    }
    const ctx = this.context();
    let need: Need | null = null;
    for (const c of this.#conditions) {
      const m = c.match(flow, ctx);
      if (m === true) return true;
      // A line that needs the address under no-resolve does not ask for it.
      if (m !== false && !(m === 'address' && (c.noResolve || !resolve))) need ??= m;
    }
    return need ?? false;
  }
}

/**
 * Parses a rule set's text: `yaml` (a `payload:` list, as mihomo's providers publish them) or
 * `text` (one entry per line, `#` comments). Throws RuleParseError when nothing usable is in it.
 */
export function parseRuleSet(
  text: string,
  behavior: RuleSetBehavior,
  format: RuleSetFormat,
  context: () => MatchContext,
): RuleSet {
  const steps = parseSteps(text, behavior, format, context, Infinity);
  for (let s = steps.next(); ; s = steps.next()) if (s.done) return s.value;
}

/** Entries parsed between yields to the event loop by parseRuleSetAsync (~10 ms of work here). */
export const ENTRIES_PER_TURN = 20_000;

/**
 * parseRuleSet a slice at a time, yielding to the event loop between slices: what a running core
 * uses for a set it fetched, so a 32 MiB list does not hold every flow for the seconds it takes
 * (#45). `slices` tells how many turns it took.
 */
export async function parseRuleSetAsync(
  text: string,
  behavior: RuleSetBehavior,
  format: RuleSetFormat,
  context: () => MatchContext,
  perTurn = ENTRIES_PER_TURN,
): Promise<{ set: RuleSet; slices: number }> {
  const steps = parseSteps(text, behavior, format, context, perTurn);
  let slices = 1;
  for (let s = steps.next(); ; s = steps.next()) {
    if (s.done) return { set: s.value, slices };
    slices++;
    await new Promise<void>((r) => setImmediate(r));
  }
}

function* parseSteps(
  text: string,
  behavior: RuleSetBehavior,
  format: RuleSetFormat,
  context: () => MatchContext,
  perTurn: number,
): Generator<void, RuleSet> {
  if (/^\s*</.test(text)) throw new RuleParseError('an HTML page, not a rule set');
  const set = new RuleSet(behavior, context);
  const entries = format === 'yaml' ? yamlPayload(text) : textEntries(text);
  let n = 0;
  for (const { line, value } of entries) {
    if (++n > MAX_RULE_SET_ENTRIES) throw new RuleParseError(`more than ${MAX_RULE_SET_ENTRIES} entries`);
    set.add(value, line);
    if (n % perTurn === 0) yield;
  }
  if (set.size === 0)
    throw new RuleParseError(
      set.errors.length ? `no usable entry (line ${set.errors[0]!.line}: ${set.errors[0]!.message})` : 'no entry in it',
    );
  return set;
}

/**
 * A mihomo binary rule set (`format: mrs`; domain and ipcidr behaviours only, as mihomo writes
 * them). Throws RuleParseError when it is not one, or not of the behaviour the config says.
 */
export function parseMrsRuleSet(bytes: Uint8Array, behavior: RuleSetBehavior, context: () => MatchContext): RuleSet {
  if (behavior === 'classical')
    throw new RuleParseError('mrs rule sets hold domain or ipcidr sets, not classical ones');
  // readMrs refuses a set over MAX_RULE_SET_ENTRIES (or its names over MAX_RULE_SET_NAME_BYTES) by its
  // counts, before it builds an entry.
  const read = readMrs(bytes, behavior);
  const set = new RuleSet(behavior, context);
  if ('domains' in read) read.domains.forEach((d, i) => set.add(d, i + 1));
  else read.ranges.forEach(([from, to], i) => set.addRange(from, to, i + 1));
  if (set.size === 0) throw new RuleParseError('no entry in it');
  return set;
}

function* textEntries(text: string): Generator<{ line: number; value: string }> {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const v = lines[i]!.trim();
    if (v === '' || v.startsWith('#') || v.startsWith('//')) continue;
    yield { line: i + 1, value: v };
  }
}

/**
 * The `payload:` list of a YAML rule set. The shape every provider publishes (`payload:` then one
 * `- item` per line) is read line by line, which keeps a 100,000-line set off the YAML parser; any
 * other YAML goes through the parser.
 */
function* yamlPayload(text: string): Generator<{ line: number; value: string }> {
  const lines = text.split(/\r?\n/);
  let i = 0;
  while (i < lines.length && /^\s*(#.*)?$/.test(lines[i]!)) i++;
  if (/^payload:\s*(#.*)?$/.test(lines[i] ?? '')) {
    let simple = true;
    const out: Array<{ line: number; value: string }> = [];
    for (let j = i + 1; j < lines.length; j++) {
      const l = lines[j]!;
      if (/^\s*(#.*)?$/.test(l)) continue;
      const m = /^\s+-\s+(.*?)\s*$/.exec(l) ?? /^-\s+(.*?)\s*$/.exec(l);
      if (!m) {
        simple = false;
        break;
      }
      out.push({ line: j + 1, value: unquote(m[1]!) });
    }
    if (simple) {
      yield* out;
      return;
    }
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 0 });
  } catch (err) {
    throw new RuleParseError(`not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const payload = (doc as { payload?: unknown } | null)?.payload;
  if (!Array.isArray(payload)) throw new RuleParseError('no payload: list in it');
  for (let k = 0; k < payload.length; k++) {
    const v: unknown = payload[k];
    if (typeof v === 'string') yield { line: k + 1, value: v.trim() };
  }
}

function unquote(s: string): string {
  const v = s.replace(/\s+#.*$/, '');
  if ((v.startsWith("'") && v.endsWith("'")) || (v.startsWith('"') && v.endsWith('"'))) return v.slice(1, -1);
  return v;
}
