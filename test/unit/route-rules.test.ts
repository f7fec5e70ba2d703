import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CidrSet,
  DomainSet,
  ENTRIES_PER_TURN,
  parseRule,
  parseRuleSet,
  parseRuleSetAsync,
  RuleParseError,
  RuleTable,
  compileUserRegex,
  globMatch,
  type Flow,
  type RuleSetBehavior,
  type RuleSetFormat,
} from '../../core/rules/index.js';
import { TRIE_WILDCARD } from '../helpers/mihomo-tables.js';

const tcp = (host: string, port = 443, more: Partial<Flow> = {}): Flow => ({ network: 'tcp', host, port, ...more });
const ctx = {
  ruleSets: new Map(),
  geoip: { country: (ip: string) => (ip.startsWith('5.160.') ? 'IR' : 'US') },
  geosite: { matches: (code: string, name: string) => code === 'cn' && /(^|\.)baidu\.com$/.test(name) },
  asn: { asn: (ip: string) => (ip.startsWith('1.1.1.') ? 13335 : ip.startsWith('10.') ? null : 15169) },
};
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
    [
      'PROCESS-NAME-REGEX,^(curl|wget)$',
      tcp('x.example', 443, { process: { name: 'wget', path: '/usr/bin/wget' } }),
      true,
    ],
    ['PROCESS-NAME-REGEX,^(curl|wget)$', tcp('x.example', 443, { process: { name: 'WGET', path: '/WGET' } }), false],
    ['PROCESS-PATH-REGEX,^/usr/', tcp('x.example', 443, { process: { name: 'curl', path: '/usr/bin/curl' } }), true],
    ['PROCESS-PATH-REGEX,^/usr/', tcp('x.example'), 'process'],
    ['DOMAIN-WILDCARD,*.example.com', tcp('a.b.example.com'), true],
    ['DOMAIN-WILDCARD,*.example.com', tcp('example.com'), false],
    ['DOMAIN-WILDCARD,api-?.example.com', tcp('API-1.example.com'), true],
    ['DOMAIN-WILDCARD,api-?.example.com', tcp('api-12.example.com'), false],
    ['DOMAIN-WILDCARD,*.example.com', tcp('5.160.1.1'), false],
    ['SRC-IP-CIDR,192.168.0.0/16', tcp('x.example', 443, { src: { ip: '192.168.5.5', port: 40000 } }), true],
    ['SRC-IP-CIDR,192.168.0.0/16', tcp('x.example', 443, { src: { ip: '127.0.0.1', port: 40000 } }), false],
    ['SRC-IP-CIDR,192.168.0.0/16', tcp('192.168.1.1'), false],
    ['SRC-PORT,40000-40100', tcp('x.example', 443, { src: { ip: '127.0.0.1', port: 40050 } }), true],
    ['SRC-PORT,40000-40100', tcp('x.example', 443), false],
    ['IN-PORT,1080', tcp('x.example', 443, { inPort: 1080 }), true],
    ['IN-PORT,7890', tcp('x.example', 443, { inPort: 1080 }), false],
    ['IN-TYPE,SOCKS5/HTTPS', tcp('x.example', 443, { inType: 'HTTPS' }), true],
    ['IN-TYPE,HTTP', tcp('x.example', 443, { inType: 'SOCKS5' }), false],
    ['IN-TYPE,MIXED', tcp('x.example', 443, { inType: 'SOCKS5' }), true],
    ['IN-USER,alice/bob', tcp('x.example', 443, { inUser: 'bob' }), true],
    ['IN-USER,alice', tcp('x.example', 443), false],
    // mihomo's IP-SUFFIX: the last bits, where IP-CIDR compares the first.
    ['IP-SUFFIX,8.8.8.8/24', tcp('1.8.8.8'), true],
    ['IP-SUFFIX,8.8.8.8/24', tcp('1.2.8.8'), false],
    ['IP-SUFFIX,0.0.0.1/8', tcp('10.9.9.1'), true],
    ['IP-SUFFIX,0.0.0.1/8', tcp('x.example'), 'address'],
    ['IP-SUFFIX,0.0.0.1/8,no-resolve', tcp('x.example'), false],
    ['IP-SUFFIX,::1/16', tcp('2001:db8::1'), true],
    ['IP-SUFFIX,::1/16', tcp('10.0.0.1'), false],
    ['SRC-GEOIP,LAN', tcp('x.example', 443, { src: { ip: '192.168.1.2', port: 1 } }), true],
    ['SRC-GEOIP,IR', tcp('x.example', 443, { src: { ip: '5.160.2.2', port: 1 } }), true],
    ['IP-ASN,13335', tcp('1.1.1.1'), true],
    ['IP-ASN,AS15169/13335', tcp('8.8.8.8'), true],
    ['IP-ASN,13335', tcp('8.8.8.8'), false],
    ['IP-ASN,13335', tcp('x.example'), 'address'],
    ['IP-ASN,13335,no-resolve', tcp('x.example'), false],
    ['IP-ASN,13335', tcp('10.1.1.1'), false],
    ['SRC-IP-ASN,13335', tcp('x.example', 443, { src: { ip: '1.1.1.9', port: 1 } }), true],
    ['GEOSITE,cn', tcp('www.baidu.com'), true],
    ['GEOSITE,cn', tcp('www.example.com'), false],
    ['GEOSITE,CN', tcp('5.160.1.1', 443, { sniffedName: 'baidu.com' }), true],
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
    ['DSCP,4,DIRECT', /DSCP is not supported: Gatehop does not read the DSCP field/],
    ['UID,1000,DIRECT', /UID is not supported/],
    ['IP-ASN,cloudflare,DIRECT', /not an AS number/],
    ['SRC-IP-CIDR,1.1.1.1/33,DIRECT', /not an IP network/],
    ['IN-TYPE,REDIR,DIRECT', /inbound type "REDIR"/],
    ['IP-SUFFIX,1.2.3.4,DIRECT', /not ADDRESS\/BITS/],
    ['GEOSITE,a b,DIRECT', /not a GEOSITE list name/],
    ['IP-CIDR,1.2.3.4/33,DIRECT', /not an IP network/],
    ['DOMAIN,not a name,DIRECT', /not a domain name/],
    ['GEOIP,Iran,DIRECT', /not a country code or LAN/],
    ['DST-PORT,99999,DIRECT', /not a port/],
    ['NETWORK,icmp,DIRECT', /not tcp or udp/],
    ['DOMAIN-REGEX,(a)\\1,DIRECT', /invalid escape/],
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

describe('user regexes run on a linear-time engine (RE2, Go syntax as mihomo), never backtracking (#45)', () => {
  it.each([
    ['(a+)+$', 'a'.repeat(20_000) + 'b', false],
    [`${'a?'.repeat(20)}${'a'.repeat(20)}`, 'a'.repeat(20), true],
    ['(a|aa)*b', 'a'.repeat(20_000), false],
    ['(x+x+)+y', 'x'.repeat(20_000), false],
  ])('%s against a hostile input answers in one pass', (re, input, want) => {
    // Each of these takes seconds to years with JavaScript's backtracking engine (#45).
    expect(compileUserRegex(re, true).test(input)).toBe(want);
  });

  it.each([
    ['(a)\\1', /invalid escape/],
    ['(?=a)a', /Perl syntax/],
    ['x'.repeat(1025), /longer than 1024/],
    ['', /empty/],
  ])('%s is refused with RE2’s reason, as mihomo refuses it', (re, why) => {
    expect(() => compileUserRegex(re, true)).toThrow(why);
  });

  it.each([
    ['^ads?\\d*\\.', 'ads1.example.com', true],
    ['\\.example\\.(com|net)$', 'www.Example.NET', true],
    ['^[a-z]{2,8}\\d{1,3}\\.example\\.com$', 'cdn12.example.com', true],
    ['^img\\d*?\\.', 'video.example', false],
  ])('%s matches %s: %s (names compared case-insensitively)', (re, name, want) => {
    expect(compileUserRegex(re, true).test(name)).toBe(want);
  });
});

describe('the domain trie, with mihomo’s own test tables (component/trie/domain_test.go, #45)', () => {
  const setOf = (patterns: string[]): DomainSet => {
    const set = new DomainSet();
    for (const p of patterns) expect(set.add(p), p).toBe(true);
    return set;
  };

  it('TestTrie_Basic', () => {
    const set = setOf(['example.com', 'google.com', 'localhost']);
    expect(set.has('example.com')).toBe(true);
    expect(set.add('')).toBe(false);
    expect(set.has('')).toBe(false);
    expect(set.has('localhost')).toBe(true);
    expect(set.has('www.google.com')).toBe(false);
  });

  it('TestTrie_Wildcard', () => {
    const set = setOf([...TRIE_WILDCARD.patterns]);
    for (const n of TRIE_WILDCARD.in) expect(set.has(n), n).toBe(true);
    for (const n of TRIE_WILDCARD.out) expect(set.has(n), n).toBe(false);
  });

  it('TestTrie_Boundary and TestTrie_WildcardBoundary', () => {
    const set = setOf(['*.dev']);
    expect(set.add('.')).toBe(false);
    expect(set.add('..dev')).toBe(false);
    expect(set.has('dev')).toBe(false);
    expect(setOf(['+.*', 'stun.*.*.*']).has('example.com')).toBe(true);
  });

  it('TestTrie_Space: a name with a space is a name, a space at an end is not', () => {
    const set = new DomainSet();
    expect(set.add('google.com')).toBe(true);
    expect(set.add(' google.com')).toBe(false);
    expect(set.add(' google.com ')).toBe(false);
    expect(set.add('Mijia Cloud')).toBe(true);
    expect(set.has('mijia cloud')).toBe(true);
  });

  it('the forms of the issue: test.*.baidu.com, www.baidu.*, stun.*.*, +.stun.*.*', () => {
    const set = setOf(['test.*.baidu.com', 'www.baidu.*', 'stun.*.*', '+.stun.*.*']);
    for (const n of ['test.x.baidu.com', 'www.baidu.cn', 'stun.l.google', 'a.stun.l.google', 'stun.x.y'])
      expect(set.has(n), n).toBe(true);
    for (const n of ['test.baidu.com', 'test.x.y.baidu.com', 'www.baidu.com.cn', 'stun.l'])
      expect(set.has(n), n).toBe(false);
  });
});

describe('the domain set and the CIDR set agree with a plain scan (property, #33)', () => {
  const label = fc.stringMatching(/^[a-c]{1,2}$/);
  const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => l.join('.'));
  // `*` in any label, as mihomo's trie takes it (#45), besides the leading forms.
  const patternLabel = fc.oneof(label, fc.constant('*'));
  const patternBody = fc.array(patternLabel, { minLength: 1, maxLength: 4 }).map((l) => l.join('.'));
  const pattern = fc.tuple(fc.constantFrom('', '+.', '.', '*.', '*.*.'), patternBody).map(([p, n]) => p + n);

  /** The plain reading of mihomo's trie: labels compared one by one from the right, `*` any one label. */
  const fits = (labels: string[], body: string[]): boolean =>
    labels.length === body.length && body.every((b, i) => b === '*' || b === labels[i]);
  const plain = (p: string, n: string): boolean => {
    if (p.startsWith('+.')) return plain(p.slice(2), n) || plain(p.slice(1), n);
    const labels = n.split('.');
    if (p.startsWith('.')) {
      const body = p.slice(1).split('.');
      return labels.length > body.length && fits(labels.slice(labels.length - body.length), body);
    }
    return fits(labels, p.split('.'));
  };
  const scan = (patterns: string[], n: string): boolean => patterns.some((p) => plain(p, n));

  it('DomainSet.has(name) is the plain reading of its patterns, `*` anywhere included (property)', () => {
    fc.assert(
      fc.property(fc.array(pattern, { maxLength: 12 }), fc.array(name, { minLength: 1, maxLength: 10 }), (ps, ns) => {
        const set = new DomainSet();
        for (const p of ps) set.add(p);
        for (const n of ns) expect(set.has(n), `${n} in ${ps.join(' ')}`).toBe(scan(ps, n));
      }),
      { numRuns: 500 },
    );
  });

  it('DOMAIN-WILDCARD is a glob: `*` any run, `?` one character (property, against a regex)', () => {
    const glob = fc.stringMatching(/^[ab.*?]{0,8}$/);
    const text = fc.stringMatching(/^[ab.]{0,10}$/);
    fc.assert(
      fc.property(glob, text, (g, t) => {
        const re = new RegExp(`^${g.replace(/\./g, '\\.').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 's');
        expect(globMatch(g, t), `${g} ~ ${t}`).toBe(re.test(t));
      }),
      { numRuns: 1000 },
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
    expect(t.decide(tcp('intranet.example'))).toEqual({ need: 'address', at: [1] });
    expect(t.decide(tcp('intranet.example', 443, { ip: '10.1.1.1' }))).toMatchObject({
      decision: { target: 'DIRECT' },
    });
    expect(t.decide(tcp('intranet.example', 443, { ip: '8.8.8.8' }))).toMatchObject({ decision: { target: 'TUNNEL' } });
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
    expect(t.sniffs).toBe(true);
    expect(t.decide(tcp('baidu.com', 20000))).toEqual({
      decision: { target: 'REJECT', rule: 'AND', payload: '((DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535))' },
    });
    expect(t.decide(tcp('shop.jp.example', 443, { process: null }))).toEqual({ need: 'address', at: [1] });
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
    expect(first).toEqual({ need: 'address', at: [1] });
    // Resolved inside the tunnel to an address the first rule covers: still not DIRECT.
    expect(t.decide(tcp('app.example', 443, { ip: '10.1.1.1' }), [1])).toEqual({
      decision: { target: 'TUNNEL', rule: 'MATCH', payload: '' },
    });
    expect(t.decide(tcp('app.example', 443, { ip: '192.0.2.7' }), [1])).toMatchObject({
      decision: { target: 'REJECT' },
    });
    // A flow addressed by IP meets the first rule as before.
    expect(t.decide(tcp('10.1.1.1'))).toMatchObject({ decision: { target: 'DIRECT' } });
  });
});

describe('SUB-RULE hands a flow to a named list, as mihomo’s sub-rules (#45)', () => {
  const table = (rules: string[], subRules: Record<string, string[]>) =>
    new RuleTable({ mode: 'rule', rules, subRules });

  it('the list decides when the condition matches; nothing matching there goes on after the rule', () => {
    const t = table(['SUB-RULE,(NETWORK,udp),udp-rules', 'DOMAIN-SUFFIX,ir,DIRECT', 'MATCH,TUNNEL'], {
      'udp-rules': ['DST-PORT,443,REJECT', 'DOMAIN-SUFFIX,game.example,DIRECT'],
    });
    expect(t.errors).toEqual([]);
    expect(t.decide({ network: 'udp', host: 'x.example', port: 443 })).toEqual({
      decision: { target: 'REJECT', rule: 'DST-PORT', payload: '443' },
    });
    expect(t.decide({ network: 'udp', host: 'eu.game.example', port: 3074 })).toMatchObject({
      decision: { target: 'DIRECT' },
    });
    // In the list nothing matches: the table goes on after the SUB-RULE.
    expect(t.decide({ network: 'udp', host: 'shop.ir', port: 53 })).toMatchObject({ decision: { target: 'DIRECT' } });
    // The condition does not match: the list is never asked.
    expect(t.decide(tcp('x.example', 443))).toMatchObject({ decision: { target: 'TUNNEL', rule: 'MATCH' } });
  });

  it('nested lists and logic conditions; a need inside a list resumes there, one pass', () => {
    const t = table(['SUB-RULE,(AND,((NETWORK,tcp),(DST-PORT,443))),web', 'MATCH,DIRECT'], {
      web: ['IP-CIDR,10.0.0.0/8,REJECT,no-resolve', 'SUB-RULE,(DOMAIN-SUFFIX,example),inner'],
      inner: ['IP-CIDR,10.0.0.0/8,DIRECT', 'MATCH,TUNNEL'],
    });
    const a = t.decide(tcp('app.example'));
    expect(a).toEqual({ need: 'address', at: [0, 1, 0] });
    // Resumed with the address: the no-resolve rule above it in `web` is not asked again.
    expect(t.decide(tcp('app.example', 443, { ip: '10.1.1.1' }), [0, 1, 0])).toMatchObject({
      decision: { target: 'DIRECT', rule: 'IP-CIDR' },
    });
    expect(t.decide(tcp('10.1.1.1'))).toMatchObject({ decision: { target: 'REJECT' } });
  });

  it('a missing list, a loop and a malformed SUB-RULE are named and left out; the rest loads', () => {
    const t = table(
      ['SUB-RULE,(NETWORK,tcp),nowhere', 'SUB-RULE,(NETWORK,tcp),loop', 'SUB-RULE,NETWORK,tcp,x', 'MATCH,DIRECT'],
      { loop: ['SUB-RULE,(NETWORK,tcp),loop'] },
    );
    expect(t.errors.map((e) => `${e.source}:${e.line} ${e.message}`)).toEqual([
      'rules:3 a sub-rule is SUB-RULE,(CONDITION),NAME',
      'subRules.loop:1 sub-rule "loop" loops back or nests deeper than 8',
      'rules:1 no sub-rule list named "nowhere" (subRules)',
    ]);
    // The looping line is out of its list, so the list is empty and the rule naming it never matches.
    expect(t.subRules.get('loop')).toEqual([]);
    expect(t.decide(tcp('x.example'))).toMatchObject({ decision: { target: 'DIRECT', rule: 'MATCH' } });
  });
});

describe('mihomo’s own logic-rule tests (rules/logic_test/logic_test.go), through the table (#45)', () => {
  const rule = (text: string) => parseRule(text);
  it('TestAND: matches, a malformed payload is refused, an AND nested without double parentheses is taken', () => {
    const and = rule('AND,((DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535)),DIRECT');
    expect(and.target).toBe('DIRECT');
    expect(and.noResolve).toBe(false);
    expect(and.match({ network: 'tcp', host: 'baidu.com', port: 20000 }, ctx)).toBe(true);
    expect(() => rule('AND,(DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535)),DIRECT')).toThrow(RuleParseError);
    const nested = rule('AND,((AND,(DOMAIN,baidu.com),(NETWORK,TCP)),(NETWORK,TCP),(DST-PORT,10001-65535)),DIRECT');
    expect(nested.match({ network: 'tcp', host: 'baidu.com', port: 20000 }, ctx)).toBe(true);
    expect(nested.match({ network: 'tcp', host: 'qq.com', port: 20000 }, ctx)).toBe(false);
  });

  it('TestNOT: one condition; two, or an empty one, are refused', () => {
    expect(rule('NOT,((DST-PORT,6000-6500)),REJECT').match({ network: 'tcp', host: 'x', port: 6100 }, ctx)).toBe(false);
    expect(() => rule('NOT,((DST-PORT,5600-6666),(DOMAIN,baidu.com)),DIRECT')).toThrow(RuleParseError);
    expect(() => rule('NOT,(()),DIRECT')).toThrow(RuleParseError);
  });

  it('TestOR: any condition; a name needs no address', () => {
    const or = rule('OR,((DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535)),DIRECT');
    expect(or.match({ network: 'tcp', host: '1.2.3.4', port: 80 }, ctx)).toBe(true);
    const t = new RuleTable({ mode: 'rule', rules: [or.text, 'MATCH,TUNNEL'] });
    expect(t.decide({ network: 'udp', host: 'baidu.com', port: 53 })).toMatchObject({ decision: { target: 'DIRECT' } });
  });

  it('the unwrapped form at the top level too: AND,(A),(B),TARGET', () => {
    const t = new RuleTable({ mode: 'rule', rules: ['AND,(NETWORK,UDP),(DST-PORT,443),REJECT', 'MATCH,TUNNEL'] });
    expect(t.errors).toEqual([]);
    expect(t.decide({ network: 'udp', host: 'x.example', port: 443 })).toMatchObject({
      decision: { target: 'REJECT' },
    });
    expect(t.decide({ network: 'tcp', host: 'x.example', port: 443 })).toMatchObject({
      decision: { target: 'TUNNEL' },
    });
  });
});

describe('a fetched rule set is parsed a slice at a time (#45 review: 32 MiB sets held the main loop)', () => {
  it('yields to the event loop between slices and reads what the one-pass parse reads', async () => {
    const text = Array.from({ length: 100_000 }, (_, i) => `+.site${i}.example`).join('\n');
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const { set, slices } = await parseRuleSetAsync(text, 'domain', 'text', () => ctx);
    ticking = false;
    expect(slices).toBe(Math.floor(100_000 / ENTRIES_PER_TURN) + 1);
    // Other work ran between the slices (a sync parse lets none in).
    expect(turns).toBeGreaterThanOrEqual(slices - 1);
    expect(set.size).toBe(parseRuleSet(text, 'domain', 'text', () => ctx).size);
    expect(set.match(tcp('a.site99999.example'), false)).toBe(true);
  });
});
