import { classifyAddress } from '../common/index.js';
import { CidrSet } from './cidr-set.js';
import { DomainSet, isDomainName, normalizeName } from './domain-set.js';
import { LOGIC_TYPES, logicCondition, splitLogic } from './logic-rule.js';
import { RuleParseError } from './rule-error.js';
import { unsafeRegexReason } from './safe-regex.js';
import type { Flow, Need, RouteTarget } from './types.js';

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

export interface MatchContext {
  readonly ruleSets: ReadonlyMap<string, RuleSetMatcher>;
  readonly geoip: CountryLookup | null;
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

export interface Rule extends Condition {
  readonly target: RouteTarget;
  /** The rule as written (for `GET /rules`, errors and logs). */
  readonly text: string;
}

export { RuleParseError };

/** Names the rule tables accept for the tunnel besides `TUNNEL` (what pasted Clash rules call it). */
const TUNNEL_ALIASES = new Set(['TUNNEL', 'PROXY', 'GATEHOP']);

export function parseTarget(raw: string): RouteTarget {
  const t = raw.trim().toUpperCase();
  if (t === 'DIRECT') return 'DIRECT';
  if (t === 'REJECT' || t === 'REJECT-DROP') return 'REJECT';
  if (TUNNEL_ALIASES.has(t)) return 'TUNNEL';
  throw new RuleParseError(`unknown target "${raw.trim()}" (DIRECT, REJECT or TUNNEL)`);
}

/** The name domain rules see: the destination's name, or the one its first bytes announced. */
export function nameOf(flow: Flow): string | null {
  if (classifyAddress(flow.host) === null) return normalizeName(flow.host);
  return flow.sniffedName ? normalizeName(flow.sniffedName) : null;
}

/** The address IP rules see: undefined when a name was not resolved yet, null when it cannot be. */
export function addressOf(flow: Flow): string | null | undefined {
  if (classifyAddress(flow.host) !== null) return flow.host;
  return flow.ip;
}

/** An IP condition: the address, or the need to resolve it (unless no-resolve). */
function ipMatch(flow: Flow, noResolve: boolean, test: (ip: string) => boolean): boolean | Need {
  const ip = addressOf(flow);
  if (ip === undefined) return noResolve ? false : 'address';
  return ip !== null && test(ip);
}

function domain(payload: string): string {
  const d = normalizeName(payload);
  if (!isDomainName(d)) throw new RuleParseError(`"${payload}" is not a domain name`);
  return d;
}

/**
 * Parses one condition in mihomo's syntax, `TYPE,PAYLOAD[,…]` (the parts after the target, such as
 * `no-resolve`, come in `options`). Throws RuleParseError naming what is wrong.
 */
export function parseCondition(type: string, payload: string, options: readonly string[]): Condition {
  const t = type.trim().toUpperCase();
  const p = payload.trim();
  const noResolve = options.some((o) => o.trim().toLowerCase() === 'no-resolve');
  const make = (match: Condition['match']): Condition => ({ type: t, payload: p, noResolve, match });
  switch (t) {
    case 'DOMAIN': {
      const d = domain(p);
      return make((f) => nameOf(f) === d);
    }
    case 'DOMAIN-SUFFIX': {
      const set = new DomainSet();
      set.addSuffix(domain(p));
      return make((f) => {
        const n = nameOf(f);
        return n !== null && set.has(n);
      });
    }
    case 'DOMAIN-KEYWORD': {
      const k = p.toLowerCase();
      if (k === '' || k.length > 253) throw new RuleParseError('an empty or too long keyword');
      return make((f) => nameOf(f)?.includes(k) ?? false);
    }
    case 'DOMAIN-REGEX': {
      const why = unsafeRegexReason(p);
      if (why) throw new RuleParseError(`regex "${p}" refused: ${why}`);
      let re: RegExp;
      try {
        re = new RegExp(p, 'i');
      } catch (err) {
        throw new RuleParseError(`regex "${p}": ${(err as Error).message}`);
      }
      return make((f) => {
        const n = nameOf(f);
        return n !== null && re.test(n);
      });
    }
    case 'IP-CIDR':
    case 'IP-CIDR6': {
      const set = new CidrSet();
      if (!set.add(p)) throw new RuleParseError(`"${p}" is not an IP network`);
      return make((f) => ipMatch(f, noResolve, (ip) => set.has(ip)));
    }
    case 'GEOIP': {
      const code = p.toUpperCase();
      if (!/^[A-Z]{2}$/.test(code) && code !== 'LAN') throw new RuleParseError(`"${p}" is not a country code or LAN`);
      return {
        type: t,
        payload: code,
        noResolve,
        match: (f, ctx) =>
          ipMatch(f, noResolve, (ip) => {
            if (code === 'LAN') return isLan(ip);
            return ctx.geoip?.country(ip) === code;
          }),
      };
    }
    case 'DST-PORT': {
      const test = parsePorts(p);
      return make((f) => test(f.port));
    }
    case 'NETWORK': {
      const n = p.toLowerCase();
      if (n !== 'tcp' && n !== 'udp') throw new RuleParseError(`network "${p}" is not tcp or udp`);
      return make((f) => f.network === n);
    }
    case 'PROCESS-NAME':
    case 'PROCESS-PATH': {
      if (p === '') throw new RuleParseError('an empty program');
      const want = p.toLowerCase();
      return make((f) => {
        if (f.process === undefined) return 'process';
        if (f.process === null) return false;
        return (t === 'PROCESS-NAME' ? f.process.name : f.process.path).toLowerCase() === want;
      });
    }
    case 'RULE-SET': {
      if (p === '') throw new RuleParseError('a rule set needs a name');
      return make((f, ctx) => {
        const set = ctx.ruleSets.get(p);
        return set ? set.match(f, !noResolve) : false;
      });
    }
    default:
      throw new RuleParseError(`unknown rule type "${type.trim()}"`);
  }
}

/** LAN for GEOIP: private, loopback, link-local and unspecified addresses (and multicast/broadcast on the link). */
export function isLan(ip: string): boolean {
  const c = classifyAddress(ip);
  return c !== null && c !== 'public' && c !== 'reserved';
}

function parsePorts(p: string): (port: number) => boolean {
  const parts = p.split('/').map((x) => x.trim());
  const ranges: Array<[number, number]> = [];
  for (const part of parts) {
    const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(part);
    const lo = m ? Number(m[1]) : NaN;
    const hi = m?.[2] !== undefined ? Number(m[2]) : lo;
    if (!(lo >= 0 && hi <= 65535 && lo <= hi)) throw new RuleParseError(`"${p}" is not a port, range or list of them`);
    ranges.push([lo, hi]);
  }
  return (port) => ranges.some(([lo, hi]) => port >= lo && port <= hi);
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
  if (type === 'MATCH' || type === 'FINAL') {
    if (parts.length !== 2) throw new RuleParseError('MATCH takes one target: MATCH,TARGET');
    const target = parseTarget(parts[1]!);
    return { type: 'MATCH', payload: '', noResolve: false, target, text, match: () => true };
  }
  if (parts.length < 3) throw new RuleParseError('a rule is TYPE,PAYLOAD,TARGET');
  const target = parseTarget(parts[2]!);
  const condition = parseCondition(type, parts[1]!, parts.slice(3));
  return { ...condition, target, text };
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
  if (type === 'MATCH' || (inRuleSet && type === 'RULE-SET'))
    throw new RuleParseError(`${type} cannot appear inside a ${inRuleSet ? 'rule set' : 'logic rule'}`);
  return parseCondition(type, parts[1]!, parts.slice(2));
}
