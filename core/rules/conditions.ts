import { CidrSet } from './cidr-set.js';
import { DomainSet, isDomainName, normalizeName } from './domain-set.js';
import { ipMatch, isLan, nameOf } from './flow-facts.js';
import { globMatch } from './glob.js';
import { ipSuffixMatcher } from './ip-suffix.js';
import { RuleParseError } from './rule-error.js';
import type { Condition } from './match-types.js';
import { compileUserRegex } from './user-regex.js';
import type { Flow, Need } from './types.js';

/**
 * mihomo's rule types that Gatehop cannot express, with why: named when a line uses one, and the
 * line left out (never fatal).
 */
const NOT_EXPRESSIBLE: Readonly<Record<string, string>> = {
  DSCP: 'Gatehop does not read the DSCP field of the packets it proxies',
  UID: 'Gatehop does not look up which user owns a connection',
  'IN-NAME': 'Gatehop has one listener, unnamed',
};

const IN_TYPES = new Set(['SOCKS5', 'HTTP', 'HTTPS', 'MIXED', 'TUN']);

function domain(payload: string): string {
  const d = normalizeName(payload);
  if (!isDomainName(d)) throw new RuleParseError(`"${payload}" is not a domain name`);
  return d;
}

/** A condition on the client's address (SRC-IP-CIDR, SRC-IP-SUFFIX): false when the front end gave none. */
function srcMatch(flow: Flow, test: (ip: string) => boolean): boolean {
  return flow.src !== undefined && test(flow.src.ip);
}

/**
 * Parses one condition in mihomo's syntax, `TYPE,PAYLOAD[,…]` (the parts after the target, such as
 * `no-resolve`, come in `options`). Throws RuleParseError naming what is wrong. RULE-SET, logic
 * rules and SUB-RULE are parsed by the callers, which know rule sets and sub-rules.
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
    case 'DOMAIN-WILDCARD': {
      const w = p.toLowerCase();
      if (w === '' || w.length > 255) throw new RuleParseError('an empty or too long wildcard');
      return make((f) => {
        const n = nameOf(f);
        return n !== null && globMatch(w, n);
      });
    }
    case 'DOMAIN-REGEX': {
      const re = compileUserRegex(p, true);
      return make((f) => {
        const n = nameOf(f);
        return n !== null && re.test(n);
      });
    }
    case 'GEOSITE': {
      const code = p.toLowerCase();
      if (!/^!?[a-z0-9!._-]+(@[a-z0-9!._-]*)*$/.test(code))
        throw new RuleParseError(`"${p}" is not a GEOSITE list name`);
      return {
        type: t,
        payload: code,
        noResolve,
        match: (f, ctx) => {
          const n = nameOf(f);
          return n !== null && (ctx.geosite?.matches(code, n) ?? false);
        },
      };
    }
    case 'IP-CIDR':
    case 'IP-CIDR6':
    case 'SRC-IP-CIDR': {
      const set = new CidrSet();
      if (!set.add(p)) throw new RuleParseError(`"${p}" is not an IP network`);
      if (t === 'SRC-IP-CIDR') return make((f) => srcMatch(f, (ip) => set.has(ip)));
      return make((f) => ipMatch(f, noResolve, (ip) => set.has(ip)));
    }
    case 'IP-SUFFIX':
    case 'SRC-IP-SUFFIX': {
      const test = ipSuffixMatcher(p);
      if (!test) throw new RuleParseError(`"${p}" is not ADDRESS/BITS`);
      if (t === 'SRC-IP-SUFFIX') return make((f) => srcMatch(f, test));
      return make((f) => ipMatch(f, noResolve, test));
    }
    case 'GEOIP':
    case 'SRC-GEOIP': {
      const code = p.toUpperCase();
      if (!/^[A-Z]{2}$/.test(code) && code !== 'LAN') throw new RuleParseError(`"${p}" is not a country code or LAN`);
      return {
        type: t,
        payload: code,
        noResolve,
        match: (f, ctx) => {
          const test = (ip: string): boolean => (code === 'LAN' ? isLan(ip) : ctx.geoip?.country(ip) === code);
          return t === 'SRC-GEOIP' ? srcMatch(f, test) : ipMatch(f, noResolve, test);
        },
      };
    }
    case 'IP-ASN':
    case 'SRC-IP-ASN': {
      const asns = p.split('/').map((x) => x.trim().replace(/^AS/i, ''));
      if (asns.some((x) => !/^\d{1,10}$/.test(x)))
        throw new RuleParseError(`"${p}" is not an AS number (13335, AS13335)`);
      const want = new Set(asns.map(Number));
      return {
        type: t,
        payload: p,
        noResolve,
        match: (f, ctx) => {
          const test = (ip: string): boolean => {
            const n = ctx.asn?.asn(ip);
            return n !== null && n !== undefined && want.has(n);
          };
          return t === 'SRC-IP-ASN' ? srcMatch(f, test) : ipMatch(f, noResolve, test);
        },
      };
    }
    case 'DST-PORT':
    case 'SRC-PORT':
    case 'IN-PORT': {
      const test = parsePorts(p);
      if (t === 'DST-PORT') return make((f) => test(f.port));
      if (t === 'SRC-PORT') return make((f) => f.src !== undefined && test(f.src.port));
      return make((f) => f.inPort !== undefined && test(f.inPort));
    }
    case 'NETWORK': {
      const n = p.toLowerCase();
      if (n !== 'tcp' && n !== 'udp') throw new RuleParseError(`network "${p}" is not tcp or udp`);
      return make((f) => f.network === n);
    }
    case 'IN-TYPE': {
      const types = p.toUpperCase().split('/');
      const bad = types.find((x) => !IN_TYPES.has(x));
      if (bad !== undefined) throw new RuleParseError(`inbound type "${bad}" is not SOCKS5, HTTP, HTTPS, MIXED or TUN`);
      // Gatehop's one listener is mixed: every flow came in on it.
      // MIXED is the proxy port (SOCKS5 and HTTP alike), as mihomo's mixed inbound; a captured program's flows are TUN.
      return make(
        (f) => (types.includes('MIXED') && f.inType !== 'TUN') || (f.inType !== undefined && types.includes(f.inType)),
      );
    }
    case 'IN-USER': {
      const users = p.split('/').filter((u) => u !== '');
      if (users.length === 0) throw new RuleParseError('IN-USER needs a user name');
      return make((f) => f.inUser !== undefined && users.includes(f.inUser));
    }
    case 'PROCESS-NAME':
    case 'PROCESS-PATH': {
      if (p === '') throw new RuleParseError('an empty program');
      const want = p.toLowerCase();
      return make((f) =>
        processMatch(f, (proc) => (t === 'PROCESS-NAME' ? proc.name : proc.path).toLowerCase() === want),
      );
    }
    case 'PROCESS-NAME-REGEX':
    case 'PROCESS-PATH-REGEX': {
      // Case-sensitive as mihomo's (a pattern can say `(?i)`).
      const re = compileUserRegex(p, false);
      return make((f) => processMatch(f, (proc) => re.test(t === 'PROCESS-NAME-REGEX' ? proc.name : proc.path)));
    }
    default: {
      const why = NOT_EXPRESSIBLE[t];
      if (why) throw new RuleParseError(`${t} is not supported: ${why}`);
      throw new RuleParseError(`unknown rule type "${type.trim()}"`);
    }
  }
}

function processMatch(f: Flow, test: (p: { name: string; path: string }) => boolean): boolean | Need {
  if (f.process === undefined) return 'process';
  return f.process !== null && test(f.process);
}

/** `443`, `8000-9000`, `80/443/8000-9000`: a port, a range, or a list of them. */
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
