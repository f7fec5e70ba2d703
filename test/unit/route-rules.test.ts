import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CidrSet,
  DomainSet,
  parseRule,
  parseRuleSet,
  RuleParseError,
  RuleTable,
  unsafeRegexReason,
  type Flow,
  type RuleSetBehavior,
  type RuleSetFormat,
} from '../../core/route/index.js';

const tcp = (host: string, port = 443, more: Partial<Flow> = {}): Flow => ({ network: 'tcp', host, port, ...more });
const ctx = { ruleSets: new Map(), geoip: { country: (ip: string) => (ip.startsWith('5.160.') ? 'IR' : 'US') } };
const matches = (rule: string, flow: Flow): boolean | string => {
  const [type, payload, ...options] = rule.split(',');
  return parseRule([type, payload, 'DIRECT', ...options].join(',')).match(flow, ctx);
};

describe('rule matchers in mihomo syntax (#33)', () => {
  it.each([
    ['DOMAIN,example.com', tcp('example.com'), true],
    ['DOMAIN,example.com', tcp('www.example.com'), false],
    ['DOMAIN,Example.COM', tcp('example.com.'), true],
    ['DOMAIN-SUFFIX,ir', tcp('digikala.ir'), true],
    ['DOMAIN-SUFFIX,ir', tcp('ir'), true],
    ['DOMAIN-SUFFIX,ir', tcp('hair'), false],
    ['DOMAIN-SUFFIX,example.com', tcp('a.b.example.com'), true],
    ['DOMAIN-KEYWORD,goog', tcp('www.google.com'), true],
    ['DOMAIN-KEYWORD,goog', tcp('example.com'), false],
    ['DOMAIN-REGEX,^ads?\\d*\\.', tcp('ads2.example.com'), true],
    ['DOMAIN-REGEX,^ads?\\d*\\.', tcp('bads.example.com'), false],
    ['IP-CIDR,10.0.0.0/8', tcp('10.1.2.3'), true],
    ['IP-CIDR,10.0.0.0/8', tcp('11.1.2.3'), false],
    ['IP-CIDR,10.0.0.0/8', tcp('::ffff:10.9.9.9'), true],
    ['IP-CIDR6,2001:db8::/32', tcp('2001:db8:ffff::1'), true],
    ['IP-CIDR6,2001:db8::/32', tcp('2001:db9::1'), false],
    ['IP-CIDR,10.0.0.0/8', tcp('intranet.example'), 'address'],
    ['IP-CIDR,10.0.0.0/8,no-resolve', tcp('intranet.example'), false],
    ['IP-CIDR,10.0.0.0/8', tcp('intranet.example', 443, { ip: '10.0.0.5' }), true],
    ['IP-CIDR,10.0.0.0/8', tcp('gone.example', 443, { ip: null }), false],
    ['GEOIP,IR', tcp('5.160.1.1'), true],
    ['GEOIP,IR', tcp('8.8.8.8'), false],
    ['GEOIP,LAN', tcp('192.168.1.1'), true],
    ['GEOIP,LAN', tcp('127.0.0.1'), true],
    ['GEOIP,LAN', tcp('fe80::1'), true],
    ['GEOIP,LAN', tcp('8.8.8.8'), false],
    ['DST-PORT,443', tcp('x.example'), true],
    ['DST-PORT,8000-9000', tcp('x.example', 8080), true],
    ['DST-PORT,80/443', tcp('x.example', 80), true],
    ['DST-PORT,80/443', tcp('x.example', 22), false],
    ['NETWORK,udp', { network: 'udp', host: '1.1.1.1', port: 53 } as Flow, true],
    ['NETWORK,udp', tcp('1.1.1.1'), false],
    ['PROCESS-NAME,curl', tcp('x.example'), 'process'],
    ['PROCESS-NAME,curl', tcp('x.example', 443, { process: { name: 'curl', path: '/usr/bin/curl' } }), true],
    ['PROCESS-PATH,/usr/bin/curl', tcp('x.example', 443, { process: { name: 'curl', path: '/usr/bin/curl' } }), true],
    ['PROCESS-NAME,curl', tcp('x.example', 443, { process: null }), false],
  ] as const)('%s against %j → %s', (rule, flow, want) => {
    expect(matches(rule, flow)).toBe(want);
  });

  it('matches domain rules by the name a flow addressed by IP announced (SNI, Host)', () => {
    expect(matches('DOMAIN-SUFFIX,ir', tcp('5.160.1.1', 443, { sniffedName: 'shop.digikala.ir' }))).toBe(true);
    expect(matches('DOMAIN-SUFFIX,ir', tcp('5.160.1.1'))).toBe(false);
  });

  it.each([
    ['DOMAIN-SUFFIX,ir', /a rule is TYPE,PAYLOAD,TARGET/],
    ['DOMAIN-SUFFIX,ir,Proxy-Group-X', /unknown target "Proxy-Group-X"/],
    ['SRC-IP-CIDR,1.1.1.1/32,DIRECT', /unknown rule type "SRC-IP-CIDR"/],
    ['IP-CIDR,1.2.3.4/33,DIRECT', /not an IP network/],
    ['DOMAIN,not a name,DIRECT', /not a domain name/],
    ['GEOIP,Iran,DIRECT', /not a country code or LAN/],
    ['DST-PORT,99999,DIRECT', /not a port/],
    ['NETWORK,icmp,DIRECT', /not tcp or udp/],
    ['DOMAIN-REGEX,(a+)+$,DIRECT', /quantified group can backtrack/],
    ['MATCH', /MATCH takes one target/],
  ])('refuses %s with a clear reason', (line, why) => {
    expect(() => parseRule(line)).toThrow(RuleParseError);
    expect(() => parseRule(line)).toThrow(why);
  });

  it('takes Clash names for the tunnel and REJECT-DROP as REJECT', () => {
    expect(parseRule('MATCH,PROXY').target).toBe('TUNNEL');
    expect(parseRule('MATCH,gatehop').target).toBe('TUNNEL');
    expect(parseRule('DOMAIN,ads.example,REJECT-DROP').target).toBe('REJECT');
  });
});

describe('regexes that could backtrack are refused, never run (#33, #45)', () => {
  it.each([
    ['(a+)+$', /quantified group/],
    ['(a|aa)*b', /quantified group/],
    ['(x){2,}', /quantified group/],
    ['(a)\\1', /back-references/],
    ['(?=a)a', /lookaround/],
    ['a*b*c*d', /more than two unbounded/],
    ['x'.repeat(600), /longer than 512/],
    // Polynomial, not exponential: each quantifier alone is bounded, together they are not (#45).
    [`${'a?'.repeat(20)}${'a'.repeat(17)}`, /together can backtrack too long/],
    ['\\w{1,60}\\w{1,60}\\w{1,60}\\.', /together can backtrack too long/],
    ['.*a?b?c?.*', /together can backtrack too long/],
  ])('%s', (re, why) => {
    expect(unsafeRegexReason(re)).toMatch(why);
  });

  it.each([
    '^ads?\\d*\\.',
    '\\.example\\.(com|net)$',
    '^[a-z]+-cdn\\.',
    '.*tracker.*',
    '^[a-z]{2,8}\\d{1,3}\\.example\\.com$',
    '^img\\d*?\\.',
  ])('%s is taken', (re) => {
    expect(unsafeRegexReason(re)).toBeNull();
  });
});

describe('the domain set and the CIDR set agree with a plain scan (property, #33)', () => {
  const label = fc.stringMatching(/^[a-c]{1,2}$/);
  const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => l.join('.'));
  const pattern = fc.tuple(fc.constantFrom('', '+.', '.', '*.', '*.*.'), name).map(([p, n]) => p + n);

  const scan = (patterns: string[], n: string): boolean =>
    patterns.some((p) => {
      if (p.startsWith('+.')) return n === p.slice(2) || n.endsWith(`.${p.slice(2)}`);
      if (p.startsWith('*.')) {
        let stars = 0;
        let base = p;
        while (base.startsWith('*.')) {
          stars++;
          base = base.slice(2);
        }
        return n.endsWith(`.${base}`) && n.slice(0, -base.length - 1).split('.').length === stars;
      }
      if (p.startsWith('.')) return n.endsWith(p);
      return n === p;
    });

  it('DomainSet.has(name) is the scan of its patterns', () => {
    fc.assert(
      fc.property(fc.array(pattern, { maxLength: 12 }), fc.array(name, { minLength: 1, maxLength: 10 }), (ps, ns) => {
        const set = new DomainSet();
        for (const p of ps) set.add(p);
        for (const n of ns) expect(set.has(n)).toBe(scan(ps, n));
      }),
      { numRuns: 300 },
    );
  });

  it('CidrSet.has(ip) is the scan of its networks (IPv4)', () => {
    const net = fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 }));
    const toIp = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
    fc.assert(
      fc.property(
        fc.array(net, { maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 1, maxLength: 20 }),
        (nets, ips) => {
          const set = new CidrSet();
          for (const [a, bits] of nets) set.add(`${toIp(a)}/${bits}`);
          for (const ip of ips) {
            const want = nets.some(([a, bits]) => bits === 0 || ip >>> (32 - bits) === a >>> (32 - bits));
            expect(set.has(toIp(ip))).toBe(want);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('rule sets in every behaviour and format (mihomo rule-providers, #33)', () => {
  const fixture = (f: string): string => readFileSync(join(__dirname, '../fixtures/rule-sets', f), 'utf8');
  const load = (f: string, b: RuleSetBehavior, fmt: RuleSetFormat) => parseRuleSet(fixture(f), b, fmt, () => ctx);

  it('domain (yaml and text): every pattern kind, bad lines named with their line', () => {
    const y = load('domain.yaml', 'domain', 'yaml');
    expect(y.size).toBe(6);
    expect(y.errors).toEqual([{ line: 9, text: 'not a domain!', message: '"not a domain!" is not a domain pattern' }]);
    expect(y.match(tcp('www.digikala.ir'), true)).toBe(true);
    expect(y.match(tcp('digikala.com'), true)).toBe(true);
    expect(y.match(tcp('www.digikala.com'), true)).toBe(false);
    expect(y.match(tcp('aparat.com'), true)).toBe(false);
    expect(y.match(tcp('www.aparat.com'), true)).toBe(true);
    expect(y.match(tcp('pay.shaparak.ir'), true)).toBe(true);
    expect(y.match(tcp('quoted.example'), true)).toBe(true);
    expect(y.match(tcp('a.b.microsoft.example'), true)).toBe(true); // *.*.: exactly two labels
    expect(y.match(tcp('b.microsoft.example'), true)).toBe(false);
    const t = load('domain.txt', 'domain', 'text');
    expect(t.size).toBe(4);
    expect(t.match(tcp('news.baidu.cn'), true)).toBe(true);
    expect(t.match(tcp('im.qq.com'), true)).toBe(true);
    expect(t.match(tcp('www.bilibili.com'), true)).toBe(true);
  });

  it('ipcidr (yaml and text): v4 and v6, asking for the address of a name unless no-resolve', () => {
    const y = load('ipcidr.yaml', 'ipcidr', 'yaml');
    expect(y.size).toBe(3);
    expect(y.errors[0]).toMatchObject({ line: 5, text: '300.1.1.1/8' });
    expect(y.match(tcp('2.180.1.1'), true)).toBe(true);
    expect(y.match(tcp('2400:da00::5'), true)).toBe(true);
    expect(y.match(tcp('a.example'), true)).toBe('address');
    expect(y.match(tcp('a.example'), false)).toBe(false);
    const t = load('ipcidr.txt', 'ipcidr', 'text');
    expect(t.match(tcp('5.160.9.9'), true)).toBe(true);
    expect(t.match(tcp('2a01:5ec0::1'), true)).toBe(true);
  });

  it('classical (yaml and text): lines tried in order; nested RULE-SET refused', () => {
    const y = load('classical.yaml', 'classical', 'yaml');
    expect(y.size).toBe(4);
    expect(y.errors[0]?.message).toMatch(/RULE-SET cannot appear inside a rule set/);
    expect(y.match(tcp('www.bank.example'), true)).toBe(true);
    expect(y.match(tcp('pay.shaparak.ir'), true)).toBe(true);
    expect(y.match(tcp('192.0.2.7'), true)).toBe(true);
    expect(y.match(tcp('sip.example', 5060), true)).toBe(true);
    expect(y.match(tcp('other.example'), true)).toBe(false);
    const t = load('classical.txt', 'classical', 'text');
    expect(t.match(tcp('exact.example'), true)).toBe(true);
    expect(t.match(tcp('5.160.3.3'), true)).toBe(true); // GEOIP,IR
    expect(t.match(tcp('named.example'), true)).toBe('address');
  });

  it('refuses an HTML page, YAML without a payload and a set with nothing usable', () => {
    expect(() => parseRuleSet('<html>captive portal</html>', 'domain', 'text', () => ctx)).toThrow(/HTML page/);
    expect(() => parseRuleSet('rules: []', 'domain', 'yaml', () => ctx)).toThrow(/no payload/);
    expect(() => parseRuleSet('!!!\n???', 'domain', 'text', () => ctx)).toThrow(/no usable entry \(line 1/);
  });
});

describe('the rule table (#33)', () => {
  it('first match wins; the default sends local names and LAN addresses direct and the rest through the tunnel', () => {
    const t = new RuleTable({ mode: 'rule' });
    expect(t.decide(tcp('printer.local'))).toEqual({
      decision: { target: 'DIRECT', rule: 'DOMAIN-SUFFIX', payload: 'local' },
    });
    expect(t.decide(tcp('192.168.1.1'))).toEqual({ decision: { target: 'DIRECT', rule: 'GEOIP', payload: 'LAN' } });
    // no-resolve: a name is never resolved just to find out whether it is on the LAN.
    expect(t.decide(tcp('example.com'))).toEqual({ decision: { target: 'TUNNEL', rule: 'MATCH', payload: '' } });
    expect(t.needsAddresses).toBe(false);
  });

  it('global and direct modes decide without rules', () => {
    expect(new RuleTable({ mode: 'global' }).decide(tcp('192.168.1.1'))).toEqual({
      decision: { target: 'TUNNEL', rule: 'GLOBAL', payload: '' },
    });
    expect(new RuleTable({ mode: 'direct' }).decide(tcp('example.com'))).toEqual({
      decision: { target: 'DIRECT', rule: 'DIRECT', payload: '' },
    });
  });

  it('a rule that needs the address asks for it; bad lines are named and the rest still load', () => {
    const t = new RuleTable({
      mode: 'rule',
      source: 'gatehop.yaml',
      rules: ['DOMAIN-SUFFIX,ads.example,REJECT', 'IP-CIDR,10.0.0.0/8,DIRECT', 'BOGUS,1,DIRECT', 'MATCH,TUNNEL'],
    });
    expect(t.errors).toEqual([
      { source: 'gatehop.yaml', line: 3, text: 'BOGUS,1,DIRECT', message: 'unknown rule type "BOGUS"' },
    ]);
    expect(t.decide(tcp('x.ads.example'))).toEqual({
      decision: { target: 'REJECT', rule: 'DOMAIN-SUFFIX', payload: 'ads.example' },
    });
    expect(t.decide(tcp('intranet.example'))).toEqual({ need: 'address', at: 1 });
    expect(t.decide(tcp('intranet.example', 443, { ip: '10.1.1.1' }))).toMatchObject({
      decision: { target: 'DIRECT' },
    });
    expect(t.decide(tcp('intranet.example', 443, { ip: '8.8.8.8' }))).toMatchObject({ decision: { target: 'TUNNEL' } });
    expect(t.needsAddresses).toBe(true);
  });
});

describe('logic rules: AND, OR, NOT nested to any depth, as mihomo writes them (#45)', () => {
  const udp = (host: string, port: number): Flow => ({ network: 'udp', host, port });
  const rule = (text: string, flow: Flow) => parseRule(text).match(flow, ctx);

  it.each([
    // mihomo's own test form, and what Clash users write to block QUIC.
    ['AND,((DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535)),REJECT', tcp('baidu.com', 10080), true],
    ['AND,((DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535)),REJECT', tcp('baidu.com', 443), false],
    ['AND,((DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535)),REJECT', udp('baidu.com', 10080), false],
    ['AND,((NETWORK,UDP),(DST-PORT,443)),REJECT', udp('www.google.com', 443), true],
    ['AND,((NETWORK,UDP),(DST-PORT,443)),REJECT', tcp('www.google.com', 443), false],
    ['OR,((DOMAIN,a.example),(DOMAIN-SUFFIX,b.example)),DIRECT', tcp('x.b.example'), true],
    ['OR,((DOMAIN,a.example),(DOMAIN-SUFFIX,b.example)),DIRECT', tcp('c.example'), false],
    ['NOT,((DOMAIN-SUFFIX,ir)),TUNNEL', tcp('digikala.ir'), false],
    ['NOT,((DOMAIN-SUFFIX,ir)),TUNNEL', tcp('example.com'), true],
    // Nested, with spaces as people paste them.
    ['OR,((AND,((NETWORK,UDP),(DST-PORT,443))), (DOMAIN,quic.example)),REJECT', udp('x.example', 443), true],
    ['OR,((AND,((NETWORK,UDP),(DST-PORT,443))), (DOMAIN,quic.example)),REJECT', tcp('quic.example'), true],
    ['OR,((AND,((NETWORK,UDP),(DST-PORT,443))), (DOMAIN,quic.example)),REJECT', tcp('x.example', 443), false],
    ['NOT,((OR,((DOMAIN,a.example),(DOMAIN,b.example)))),DIRECT', tcp('b.example'), false],
    // A condition that needs the address decides only when the others cannot settle it without it.
    ['AND,((NETWORK,UDP),(IP-CIDR,10.0.0.0/8)),DIRECT', tcp('intranet.example'), false],
    ['AND,((NETWORK,TCP),(IP-CIDR,10.0.0.0/8)),DIRECT', tcp('intranet.example'), 'address'],
    ['OR,((DOMAIN,intranet.example),(IP-CIDR,10.0.0.0/8)),DIRECT', tcp('intranet.example'), true],
    ['OR,((DOMAIN,x.example),(IP-CIDR,10.0.0.0/8)),DIRECT', tcp('intranet.example'), 'address'],
    ['AND,((NETWORK,TCP),(IP-CIDR,10.0.0.0/8,no-resolve)),DIRECT', tcp('intranet.example'), false],
  ] as const)('%s on %o is %s', (text, flow, want) => {
    expect(rule(text, flow)).toBe(want);
  });

  it('takes the target after the conditions, and names what is malformed', () => {
    expect(parseRule('AND,((NETWORK,UDP),(DST-PORT,443)),REJECT')).toMatchObject({
      type: 'AND',
      payload: '((NETWORK,UDP),(DST-PORT,443))',
      target: 'REJECT',
    });
    for (const [text, message] of [
      ['AND,((NETWORK,UDP),(DST-PORT,443)', /unbalanced parentheses/],
      ['AND,((NETWORK,UDP),(DST-PORT,443))', /a logic rule is AND,/],
      ['AND,(NETWORK,UDP),REJECT', /each condition of a logic rule is in parentheses/],
      ['NOT,((DOMAIN,a.example),(DOMAIN,b.example)),REJECT', /NOT takes one condition/],
      ['AND,((MATCH,TUNNEL)),REJECT', /MATCH cannot appear inside a logic rule/],
      ['AND,((BOGUS,1)),REJECT', /unknown rule type "BOGUS"/],
      [`${'AND,('.repeat(20)}(DOMAIN,a.example)${'))'.repeat(20)},REJECT`, /nested deeper than 16/],
    ] as const)
      expect(() => parseRule(text), text).toThrow(message);
  });

  it('the table asks for what a logic rule’s conditions need, and a line it cannot read never stops it', () => {
    const t = new RuleTable({
      mode: 'rule',
      rules: [
        'AND,((DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535)),REJECT',
        'DOMAIN-SUFFIX,jp.example,Japan',
        'OR,((PROCESS-NAME,curl),(IP-CIDR,10.0.0.0/8)),DIRECT',
        'MATCH,TUNNEL',
      ],
    });
    expect(t.errors.map((e) => [e.line, e.message])).toEqual([
      [2, 'unknown target "Japan" (DIRECT, REJECT or TUNNEL)'],
    ]);
    expect(t.needsAddresses).toBe(true);
    expect(t.needsProcess).toBe(true);
    expect(t.sniffs).toBe(true);
    expect(t.decide(tcp('baidu.com', 20000))).toEqual({
      decision: { target: 'REJECT', rule: 'AND', payload: '((DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535))' },
    });
    expect(t.decide(tcp('shop.jp.example', 443, { process: null }))).toEqual({ need: 'address', at: 1 });
  });
});

describe('one pass, in order, as mihomo evaluates (#45)', () => {
  it('a no-resolve rule above a resolving one never matches a named flow by the address the later rule resolved', () => {
    const t = new RuleTable({
      mode: 'rule',
      rules: ['IP-CIDR,10.0.0.0/8,DIRECT,no-resolve', 'IP-CIDR,192.0.2.0/24,REJECT', 'MATCH,TUNNEL'],
    });
    // The second rule asks for the address; the first one had been passed without it.
    const first = t.decide(tcp('app.example'));
    expect(first).toEqual({ need: 'address', at: 1 });
    // Resolved inside the tunnel to an address the first rule covers: still not DIRECT.
    expect(t.decide(tcp('app.example', 443, { ip: '10.1.1.1' }), 1)).toEqual({
      decision: { target: 'TUNNEL', rule: 'MATCH', payload: '' },
    });
    expect(t.decide(tcp('app.example', 443, { ip: '192.0.2.7' }), 1)).toMatchObject({ decision: { target: 'REJECT' } });
    // A flow addressed by IP meets the first rule as before.
    expect(t.decide(tcp('10.1.1.1'))).toMatchObject({ decision: { target: 'DIRECT' } });
  });
});
