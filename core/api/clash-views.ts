import { isLoopbackHost, unbracket } from '../common/index.js';
import { GROUP_NAME } from '../groups/index.js';
import type { AdminCore } from './admin-core.js';

/**
 * Gatehop as the Clash/mihomo external controller describes a core: one group (GATEHOP) over the
 * VPN Gate nodes, one proxy provider (the list), one rule (everything to the group). Each shape is
 * what the dashboards read (core/api/README.md has the table); nothing here is invented: a field
 * Gatehop has no value for is left out or says "none".
 */

/** The node list as a Clash proxy provider. */
export const PROVIDER_NAME = 'VPNGate';

/** Clash names for pino's levels, and back. */
const TO_CLASH: Record<string, string> = {
  trace: 'debug',
  debug: 'debug',
  info: 'info',
  warn: 'warning',
  error: 'error',
  fatal: 'error',
  silent: 'silent',
};
export const FROM_CLASH: Record<string, string> = {
  debug: 'debug',
  info: 'info',
  warning: 'warn',
  error: 'error',
  silent: 'silent',
};

export function nodeNames(core: AdminCore): string[] {
  return core.nodes?.nodes.map((n) => n.id) ?? [];
}

function history(core: AdminCore, nodeId: string): Array<{ time: string; delay: number }> {
  const d = core.controller?.urlDelays.get(nodeId);
  return d && d.ms !== null ? [{ time: new Date(d.at).toISOString(), delay: Math.round(d.ms) }] : [];
}

/** A node as a Clash proxy. `alive`: its last URL test passed, or none failed yet. */
export function proxyOf(core: AdminCore, nodeId: string) {
  const d = core.controller?.urlDelays.get(nodeId);
  const h = core.honesty?.get(nodeId);
  return {
    name: nodeId,
    type: 'OpenVPN',
    udp: true,
    xudp: false,
    tfo: false,
    alive: d ? d.ms !== null : true,
    history: history(core, nodeId),
    // Gatehop's own: what the honesty checks found (dashboards show extra fields as they are).
    extra: core.honesty
      ? { honesty: { verdict: h?.verdict ?? 'unchecked', checkedAt: h ? new Date(h.checkedAt).toISOString() : null } }
      : {},
    hidden: false,
    icon: '',
  };
}

const balancing = (core: AdminCore): boolean =>
  core.controller?.mode === 'auto' && (core.controller?.balance.tunnels ?? 1) > 1;

/**
 * The GATEHOP group. In manual mode `now` is the user's pick at once (the switch to it runs
 * make-before-break) and `fixed` names it, as mihomo's automatic groups do, so dashboards offer to
 * clear it (DELETE /proxies/GATEHOP = back to auto). LoadBalance while several tunnels balance.
 */
export function groupOf(core: AdminCore) {
  const c = core.controller;
  const pinned = c?.mode === 'manual' ? c.pinned : null;
  return {
    name: GROUP_NAME,
    type: balancing(core) ? 'LoadBalance' : 'Selector',
    udp: true,
    xudp: false,
    tfo: false,
    alive: c?.active !== null && c?.active !== undefined,
    history: [],
    extra: {},
    hidden: false,
    icon: '',
    now: pinned ?? c?.active?.node.id ?? '',
    ...(pinned ? { fixed: pinned } : {}),
    all: nodeNames(core),
    testUrl: c?.urlTestUrl ?? '',
  };
}

export function proxiesOf(core: AdminCore): Record<string, unknown> {
  const proxies: Record<string, unknown> = { [GROUP_NAME]: groupOf(core) };
  for (const id of nodeNames(core)) proxies[id] = proxyOf(core, id);
  return proxies;
}

export function providerOf(core: AdminCore) {
  return {
    name: PROVIDER_NAME,
    type: 'Proxy',
    vehicleType: 'HTTP',
    updatedAt: new Date(core.nodes?.fetchedAt ?? 0).toISOString(),
    testUrl: core.controller?.urlTestUrl ?? '',
    proxies: nodeNames(core).map((id) => proxyOf(core, id)),
  };
}

/** GET /configs: ports, mode, log level and LAN access as they are; Gatehop has no TUN, redir or separate HTTP/SOCKS ports. */
export function configsOf(core: AdminCore) {
  const at = core.proxyAddress;
  const i = at.lastIndexOf(':');
  const host = unbracket(at.slice(0, i));
  const port = Number(at.slice(i + 1));
  const c = core.controller;
  return {
    port: 0,
    'socks-port': 0,
    'redir-port': 0,
    'tproxy-port': 0,
    // SOCKS5 and HTTP on one port is what Clash calls the mixed port.
    'mixed-port': port,
    'allow-lan': !isLoopbackHost(host),
    'bind-address': host === '0.0.0.0' || host === '::' ? '*' : host,
    // Clash's modes are routing modes: rule (the table), global (all through the tunnel), direct.
    mode: core.routing?.mode ?? (c ? 'global' : 'direct'),
    'mode-list': ['rule', 'global', 'direct'],
    modes: ['rule', 'global', 'direct'],
    'log-level': TO_CLASH[core.logLevel?.get() ?? 'info'] ?? 'info',
    // Tunnels carry IPv4 only (lwIP is built without IPv6; IPv6CP is refused).
    ipv6: false,
    tun: { enable: false },
  };
}

/** mihomo's names for rule types, as dashboards show them. */
const CLASH_RULE_TYPE: Record<string, string> = {
  DOMAIN: 'Domain',
  'DOMAIN-SUFFIX': 'DomainSuffix',
  'DOMAIN-KEYWORD': 'DomainKeyword',
  'DOMAIN-REGEX': 'DomainRegex',
  'DOMAIN-WILDCARD': 'DomainWildcard',
  GEOSITE: 'GeoSite',
  'IP-CIDR': 'IPCIDR',
  'IP-CIDR6': 'IPCIDR6',
  'SRC-IP-CIDR': 'SrcIPCIDR',
  'IP-SUFFIX': 'IPSuffix',
  'SRC-IP-SUFFIX': 'SrcIPSuffix',
  GEOIP: 'GeoIP',
  'SRC-GEOIP': 'SrcGeoIP',
  'DST-PORT': 'DstPort',
  'SRC-PORT': 'SrcPort',
  'IN-PORT': 'InPort',
  'IN-TYPE': 'InType',
  'IN-USER': 'InUser',
  NETWORK: 'Network',
  'PROCESS-NAME': 'ProcessName',
  'PROCESS-PATH': 'ProcessPath',
  'PROCESS-NAME-REGEX': 'ProcessNameRegex',
  'PROCESS-PATH-REGEX': 'ProcessPathRegex',
  'RULE-SET': 'RuleSet',
  'SUB-RULE': 'SubRules',
  MATCH: 'Match',
  GLOBAL: 'Match',
  DIRECT: 'Match',
};

export function clashRuleType(type: string): string {
  return CLASH_RULE_TYPE[type] ?? type;
}

/** Where a rule sends a flow, as Clash names it: the group for the tunnel, DIRECT, REJECT. */
export function clashTarget(target: string): string {
  return target === 'TUNNEL' ? GROUP_NAME : target;
}

/** GET /rules: the table in use (in global or direct mode, the one rule that mode is). */
export function rulesOf(core: AdminCore) {
  const r = core.routing;
  if (!r || r.mode === 'global')
    return { rules: [{ index: 0, type: 'Match', payload: '', proxy: GROUP_NAME, size: -1 }] };
  if (r.mode === 'direct') return { rules: [{ index: 0, type: 'Match', payload: '', proxy: 'DIRECT', size: -1 }] };
  const sets = new Map(r.ruleSets().map((s) => [s.name, s.entries]));
  return {
    rules: r.table().rules.map((rule, index) => ({
      index,
      type: clashRuleType(rule.type),
      payload: rule.payload,
      proxy: rule.sub ?? clashTarget(rule.target),
      size: rule.type === 'RULE-SET' ? (sets.get(rule.payload) ?? 0) : -1,
    })),
  };
}

/** GET /providers/rules: the rule sets as mihomo's rule providers. */
export function ruleProvidersOf(core: AdminCore) {
  const behavior = { domain: 'Domain', ipcidr: 'IPCIDR', classical: 'Classical' } as const;
  return {
    providers: Object.fromEntries(
      (core.routing?.ruleSets() ?? []).map((s) => [
        s.name,
        {
          name: s.name,
          type: 'Rule',
          vehicleType: s.type === 'http' ? 'HTTP' : 'File',
          behavior: behavior[s.behavior],
          format: s.format === 'yaml' ? 'YamlRule' : s.format === 'mrs' ? 'MrsRule' : 'TextRule',
          ruleCount: s.entries,
          updatedAt: new Date(s.updatedAt ?? 0).toISOString(),
        },
      ]),
    ),
  };
}
