import { parse as parseYaml } from 'yaml';
import { LOGIC_TYPES, splitLogic } from './logic-rule.js';
import { RuleParseError } from './rule-error.js';
import type { RouteMode, RouteTarget } from './types.js';

/** A Clash config this large is refused (the largest published ones are a few MiB). */
export const MAX_CLASH_CONFIG_BYTES = 16 * 1024 * 1024;

/** A rule provider as Gatehop's config takes it (http only: a `file` or `inline` one has no source here). */
export interface ImportedProvider {
  type: 'http';
  behavior: 'domain' | 'ipcidr' | 'classical';
  url: string;
  interval?: number;
  format?: 'yaml' | 'text' | 'mrs';
}

/** A name the rules send flows to, what Gatehop guesses it means, and why. */
export interface ImportedTarget {
  name: string;
  guess: RouteTarget;
  why: 'builtin' | 'all-direct' | 'all-reject' | 'first-member' | 'has-proxies' | 'a-proxy' | 'unknown';
  /** How many rule lines (sub-rules included) name it. */
  rules: number;
}

export interface ClashImport {
  mode: RouteMode | null;
  rules: string[];
  subRules: Record<string, string[]>;
  ruleProviders: Record<string, ImportedProvider>;
  /** Every target the rules name, Gatehop's own (DIRECT, REJECT) included, in order of first use. */
  targets: ImportedTarget[];
  /** What the file has that Gatehop leaves out, and why (its proxies are never used). */
  skipped: Array<{ what: string; why: string }>;
}

const BUILTIN: Readonly<Record<string, RouteTarget>> = {
  DIRECT: 'DIRECT',
  REJECT: 'REJECT',
  'REJECT-DROP': 'REJECT',
  COMPATIBLE: 'DIRECT',
  TUNNEL: 'TUNNEL',
  GATEHOP: 'TUNNEL',
};

interface Group {
  type: string;
  members: string[];
  /** `use:` providers or `include-all`: proxies not listed by name. */
  pulls: boolean;
}

/**
 * Reads a mihomo/Clash config's routing: `rules`, `sub-rules`, `rule-providers` and `mode`. Its
 * proxies are never used; its group names are listed with a guess of what each means here:
 * `DIRECT`/`REJECT` as themselves, a group whose members all lead to DIRECT (or REJECT) as that, a
 * `select` group as its first member (what Clash selects until the user picks), any other group
 * with a proxy in it, and a proxy named directly, as the tunnel. Throws RuleParseError when the
 * text is not such a config.
 */
export function readClashConfig(text: string): ClashImport {
  if (text.length > MAX_CLASH_CONFIG_BYTES) throw new RuleParseError(`larger than ${MAX_CLASH_CONFIG_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new RuleParseError(`not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new RuleParseError('not a Clash config (no mapping)');
  const d = doc as Record<string, unknown>;
  const listed = strings(d.rules);
  if (listed === null || listed.length === 0) throw new RuleParseError('no rules: list in it');
  const skipped: ClashImport['skipped'] = [];
  const rules = withoutPass(listed, 'rules', skipped);
  const subRules: Record<string, string[]> = {};
  if (d['sub-rules'] && typeof d['sub-rules'] === 'object')
    for (const [name, lines] of Object.entries(d['sub-rules'] as Record<string, unknown>)) {
      const l = strings(lines);
      if (l) subRules[name] = withoutPass(l, `sub-rules.${name}`, skipped);
      else skipped.push({ what: `sub-rules.${name}`, why: 'not a list of rules' });
    }
  const ruleProviders = providers(d['rule-providers'], skipped);
  const mode =
    typeof d.mode === 'string' && ['rule', 'global', 'direct'].includes(d.mode.toLowerCase())
      ? (d.mode.toLowerCase() as RouteMode)
      : null;
  const groups = groupsOf(d['proxy-groups']);
  const proxies = new Set(
    (Array.isArray(d.proxies) ? d.proxies : [])
      .map((p: unknown) => (p && typeof p === 'object' ? (p as { name?: unknown }).name : undefined))
      .filter((n): n is string => typeof n === 'string'),
  );
  const counts = new Map<string, number>();
  for (const line of [...rules, ...Object.values(subRules).flat()]) {
    const t = ruleTarget(line);
    if (t !== null) counts.set(t.target, (counts.get(t.target) ?? 0) + 1);
  }
  const targets = [...counts].map(([name, n]) => ({ name, rules: n, ...guess(name, groups, proxies) }));
  if (Array.isArray(d.proxies) && d.proxies.length)
    skipped.push({
      what: `proxies (${d.proxies.length})`,
      why: 'Gatehop uses VPN Gate nodes, never a config’s proxies',
    });
  return { mode, rules, subRules, ruleProviders, targets, skipped };
}

/**
 * The lines of `list` less those whose target is PASS: in mihomo a rule that sends a flow to PASS
 * decides nothing, and matching goes on with the next rule (tunnel.go's match); leaving the line
 * out does just that. It was read as DIRECT, which sent what the next rules would have proxied
 * out directly (#59). Said in `skipped`.
 */
function withoutPass(list: readonly string[], where: string, skipped: ClashImport['skipped']): string[] {
  const kept = list.filter((line) => ruleTarget(line)?.target.toUpperCase() !== 'PASS');
  const dropped = list.length - kept.length;
  if (dropped > 0)
    skipped.push({
      what: `${where}: ${dropped} ${dropped === 1 ? 'rule' : 'rules'} with the target PASS`,
      why: 'in mihomo PASS decides nothing and matching goes on with the next rule; without the line, it does the same here',
    });
  return kept;
}

/**
 * The rule lines with each target mapped (`PROXY` → `TUNNEL`, `🎯 Direct` → `DIRECT`); a name
 * the mapping lacks stays as written (the table will name it). SUB-RULE lines name a list, not a
 * target, and stay as they are.
 */
export function retarget(lines: readonly string[], mapping: Readonly<Record<string, RouteTarget>>): string[] {
  return lines.map((line) => {
    const t = ruleTarget(line);
    if (t === null) return line;
    const to = mapping[t.target];
    return to === undefined ? line : `${line.slice(0, t.start)}${to}${line.slice(t.end)}`;
  });
}

/** Where a rule line's target is (`start`..`end`), or null for comments, SUB-RULE and what cannot be read. */
export function ruleTarget(line: string): { target: string; start: number; end: number } | null {
  const text = line.trim();
  if (text === '' || text.startsWith('#')) return null;
  const lead = line.indexOf(text);
  const type = (text.split(',')[0] ?? '').trim().toUpperCase();
  if (type === 'SUB-RULE') return null;
  let from: number;
  if (LOGIC_TYPES.has(type)) {
    try {
      const { payload } = splitLogic(text);
      from = text.indexOf(payload) + payload.length + 1;
    } catch {
      return null;
    }
  } else {
    const skip = type === 'MATCH' || type === 'FINAL' ? 1 : 2;
    from = 0;
    for (let i = 0; i < skip; i++) {
      const c = text.indexOf(',', from);
      if (c < 0) return null;
      from = c + 1;
    }
  }
  if (from > text.length) return null;
  const comma = text.indexOf(',', from);
  const raw = text.slice(from, comma < 0 ? text.length : comma);
  const target = raw.trim();
  if (target === '') return null;
  const start = lead + from + raw.indexOf(target);
  return { target, start, end: start + target.length };
}

function guess(
  name: string,
  groups: ReadonlyMap<string, Group>,
  proxies: ReadonlySet<string>,
): Pick<ImportedTarget, 'guess' | 'why'> {
  const builtin = BUILTIN[name.toUpperCase()];
  if (builtin) return { guess: builtin, why: 'builtin' };
  if (!groups.has(name))
    return proxies.has(name) ? { guess: 'TUNNEL', why: 'a-proxy' } : { guess: 'TUNNEL', why: 'unknown' };
  const leads = new Set<string>();
  const walk = (n: string, seen: Set<string>): void => {
    const b = BUILTIN[n.toUpperCase()];
    if (b) return void leads.add(b);
    const g = groups.get(n);
    if (!g || seen.has(n)) return void leads.add('TUNNEL');
    seen.add(n);
    if (g.pulls) leads.add('TUNNEL');
    for (const m of g.members) walk(m, seen);
  };
  walk(name, new Set());
  if (leads.size === 1 && leads.has('DIRECT')) return { guess: 'DIRECT', why: 'all-direct' };
  if (leads.size === 1 && leads.has('REJECT')) return { guess: 'REJECT', why: 'all-reject' };
  const g = groups.get(name)!;
  if (g.type === 'select' && g.members[0] !== undefined) {
    const first = guess(g.members[0], new Map([...groups].filter(([k]) => k !== name)), proxies);
    return { guess: first.guess, why: 'first-member' };
  }
  return { guess: 'TUNNEL', why: 'has-proxies' };
}

function groupsOf(raw: unknown): Map<string, Group> {
  const out = new Map<string, Group>();
  if (!Array.isArray(raw)) return out;
  for (const g of raw as unknown[]) {
    if (!g || typeof g !== 'object') continue;
    const o = g as Record<string, unknown>;
    if (typeof o.name !== 'string') continue;
    out.set(o.name, {
      type: typeof o.type === 'string' ? o.type.toLowerCase() : 'select',
      members: strings(o.proxies) ?? [],
      pulls:
        (Array.isArray(o.use) && o.use.length > 0) || o['include-all'] === true || o['include-all-proxies'] === true,
    });
  }
  return out;
}

function providers(raw: unknown, skipped: ClashImport['skipped']): Record<string, ImportedProvider> {
  const out: Record<string, ImportedProvider> = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const [name, v] of Object.entries(raw as Record<string, unknown>)) {
    const p = (v ?? {}) as Record<string, unknown>;
    const behavior = typeof p.behavior === 'string' ? p.behavior.toLowerCase() : '';
    const format = typeof p.format === 'string' ? p.format.toLowerCase() : undefined;
    const why =
      p.type !== 'http'
        ? `a ${String(p.type)} rule set has no source Gatehop can reach (http sets only)`
        : !['domain', 'ipcidr', 'classical'].includes(behavior)
          ? `behavior "${String(p.behavior)}" is not domain, ipcidr or classical`
          : typeof p.url !== 'string' || !/^https?:\/\//i.test(p.url)
            ? 'no http(s) url'
            : format !== undefined && !['yaml', 'text', 'mrs'].includes(format)
              ? `format "${format}" is not yaml, text or mrs`
              : !/^[A-Za-z0-9_.-]{1,64}$/.test(name)
                ? 'a name with characters Gatehop keeps out of file names'
                : null;
    if (why) {
      skipped.push({ what: `rule-providers.${name}`, why });
      continue;
    }
    const interval =
      typeof p.interval === 'number' ? Math.min(Math.max(Math.round(p.interval), 60), 30 * 86_400) : undefined;
    out[name] = {
      type: 'http',
      behavior: behavior as ImportedProvider['behavior'],
      url: p.url as string,
      ...(interval !== undefined ? { interval } : {}),
      ...(format !== undefined ? { format: format as ImportedProvider['format'] } : {}),
    };
  }
  return out;
}

function strings(v: unknown): string[] | null {
  if (!Array.isArray(v)) return null;
  return v.filter((x): x is string => typeof x === 'string').map((x) => x.trim());
}
