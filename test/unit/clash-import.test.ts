import { describe, expect, it } from 'vitest';
import { readClashConfig, retarget, RuleParseError, RuleTable } from '../../core/rules/index.js';

const CONFIG = `
mode: Rule
proxies:
  - { name: hk1, type: ss, server: 192.0.2.1, port: 8388, cipher: aes-128-gcm, password: x }
proxy-groups:
  - { name: PROXY, type: select, proxies: [hk1, DIRECT] }
  - { name: "🎯 Direct", type: select, proxies: [DIRECT] }
  - { name: "🛑 Block", type: select, proxies: [REJECT, DIRECT] }
  - { name: Auto, type: url-test, use: [sub], proxies: [] }
  - { name: Nested, type: select, proxies: ["🎯 Direct"] }
rule-providers:
  ads: { type: http, behavior: domain, format: mrs, url: "https://example.org/ads.mrs", interval: 86400 }
  local: { type: file, behavior: domain, path: ./rules/local.yaml }
  inline1: { type: inline, behavior: domain, payload: [a.example] }
sub-rules:
  udp: [ "DST-PORT,443,🛑 Block", "MATCH,PROXY" ]
rules:
  - DOMAIN,localhost,🎯 Direct
  - RULE-SET,ads,🛑 Block
  - AND,((NETWORK,UDP),(DST-PORT,443)),🛑 Block
  - SUB-RULE,(NETWORK,UDP),udp
  - GEOIP,CN,Nested,no-resolve
  - DOMAIN-SUFFIX,jp,Auto
  - MATCH,PROXY
`;

describe('reading a Clash config’s routing and mapping its group names (#45)', () => {
  const imp = readClashConfig(CONFIG);

  it('takes rules, sub-rules, http rule sets and the mode; names what it leaves out', () => {
    expect(imp.mode).toBe('rule');
    expect(imp.rules).toHaveLength(7);
    expect(Object.keys(imp.subRules)).toEqual(['udp']);
    expect(imp.ruleProviders).toEqual({
      ads: { type: 'http', behavior: 'domain', format: 'mrs', url: 'https://example.org/ads.mrs', interval: 86400 },
    });
    expect(imp.skipped.map((s) => s.what)).toEqual(['rule-providers.local', 'rule-providers.inline1', 'proxies (1)']);
  });

  it('guesses each name: a select group as its first member, all-DIRECT as DIRECT, a group with proxies as the tunnel', () => {
    expect(Object.fromEntries(imp.targets.map((t) => [t.name, `${t.guess} ${t.why} ${t.rules}`]))).toEqual({
      '🎯 Direct': 'DIRECT all-direct 1',
      '🛑 Block': 'REJECT first-member 3',
      Nested: 'DIRECT all-direct 1',
      Auto: 'TUNNEL has-proxies 1',
      PROXY: 'TUNNEL first-member 2',
    });
  });

  it('retargets every kind of line, the target only (payloads and options untouched); SUB-RULE keeps its list', () => {
    const mapping = {
      '🎯 Direct': 'DIRECT',
      '🛑 Block': 'REJECT',
      Nested: 'DIRECT',
      Auto: 'TUNNEL',
      PROXY: 'TUNNEL',
    } as const;
    const rules = retarget(imp.rules, mapping);
    expect(rules).toEqual([
      'DOMAIN,localhost,DIRECT',
      'RULE-SET,ads,REJECT',
      'AND,((NETWORK,UDP),(DST-PORT,443)),REJECT',
      'SUB-RULE,(NETWORK,UDP),udp',
      'GEOIP,CN,DIRECT,no-resolve',
      'DOMAIN-SUFFIX,jp,TUNNEL',
      'MATCH,TUNNEL',
    ]);
    const t = new RuleTable({ mode: 'rule', rules, subRules: { udp: retarget(imp.subRules.udp!, mapping) } });
    expect(t.errors.filter((e) => !/rule set/.test(e.message))).toEqual([]);
    expect(t.decide({ network: 'udp', host: 'x.example', port: 443 })).toMatchObject({
      decision: { target: 'REJECT' },
    });
    // A name the mapping does not cover stays as written, and the table names it.
    expect(retarget(['MATCH,Japan'], mapping)).toEqual(['MATCH,Japan']);
  });

  it('refuses what is not a Clash config with rules', () => {
    for (const text of ['rules: [', 'just text', 'proxies: []', '- a\n- b\n'])
      expect(() => readClashConfig(text), text).toThrow(RuleParseError);
  });
});

describe('PASS in an imported config (#59)', () => {
  it('means what it means in mihomo: the rule decides nothing and matching goes on with the next rule', () => {
    const imp = readClashConfig(`
proxy-groups:
  - { name: PROXY, type: select, proxies: [hk1] }
sub-rules:
  web: [ "DST-PORT,80,PASS", "MATCH,PROXY" ]
rules:
  - DOMAIN-SUFFIX,example.org,PASS
  - AND,((NETWORK,TCP),(DST-PORT,443)),pass
  - DOMAIN-SUFFIX,example.org,PROXY
  - MATCH,DIRECT
`);
    expect(imp.rules).toEqual(['DOMAIN-SUFFIX,example.org,PROXY', 'MATCH,DIRECT']);
    expect(imp.subRules).toEqual({ web: ['MATCH,PROXY'] });
    expect(imp.targets.map((t) => t.name)).toEqual(['PROXY', 'DIRECT']);
    expect(imp.skipped.map((s) => s.what)).toEqual([
      'rules: 2 rules with the target PASS',
      'sub-rules.web: 1 rule with the target PASS',
    ]);
    // What the table does with it: example.org goes where the next matching rule says, through a node.
    const table = new RuleTable({ mode: 'rule', rules: retarget(imp.rules, { PROXY: 'TUNNEL' }) });
    expect(table.decide({ network: 'tcp', host: 'www.example.org', port: 443 })).toMatchObject({
      decision: { target: 'TUNNEL' },
    });
  });
});
