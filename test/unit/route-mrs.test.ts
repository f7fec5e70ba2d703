import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DomainSet,
  MAX_RULE_SET_ENTRIES,
  MAX_RULE_SET_NAME_BYTES,
  parseMrsRuleSet,
  readMrsPayload,
  RuleParseError,
  RuleTable,
  type Flow,
} from '../../core/rules/index.js';
import { mrsChainBombPayload, writeMrsDomains, writeMrsRanges } from '../helpers/mrs-writer.js';

const ctx = () => ({ ruleSets: new Map(), geoip: null });
const tcp = (host: string): Flow => ({ network: 'tcp', host, port: 443 });

describe('mrs rule sets (mihomo’s binary format, #45)', () => {
  it('a domain set: every pattern form means what it means in the text set it was made from', () => {
    const patterns = [
      '+.example.com',
      '.below.org',
      '*.star.net',
      'exact.io',
      'test.*.baidu.com',
      'mijia cloud',
      'bücher.中文.cn', // stored reversed by code points, as UTF-8
    ];
    const set = parseMrsRuleSet(writeMrsDomains(patterns), 'domain', ctx);
    expect(set.size).toBe(8); // `+.example.com` is two keys in the binary set
    for (const [name, want] of [
      ['example.com', true],
      ['a.b.example.com', true],
      ['below.org', false],
      ['x.below.org', true],
      ['a.star.net', true],
      ['a.b.star.net', false],
      ['exact.io', true],
      ['www.exact.io', false],
      ['test.x.baidu.com', true],
      ['mijia cloud', true],
      ['bücher.中文.cn', true],
      ['xbücher.中文.cn', false],
      ['other.com', false],
    ] as const)
      expect(set.match(tcp(name), false), name).toBe(want);
  });

  it('agrees with the text set of the same patterns (property)', () => {
    const label = fc.stringMatching(/^[a-c]{1,2}$/);
    const body = fc.array(fc.oneof(label, fc.constant('*')), { minLength: 1, maxLength: 3 }).map((l) => l.join('.'));
    const pattern = fc.tuple(fc.constantFrom('', '+.', '.', '*.'), body).map(([p, b]) => p + b);
    const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => l.join('.'));
    fc.assert(
      fc.property(
        fc.uniqueArray(pattern, { minLength: 1, maxLength: 8 }),
        fc.array(name, { maxLength: 8 }),
        (ps, ns) => {
          const text = new DomainSet();
          for (const p of ps) text.add(p);
          const bin = parseMrsRuleSet(writeMrsDomains(ps), 'domain', ctx);
          for (const n of ns) expect(bin.match(tcp(n), false), `${n} in ${ps.join(' ')}`).toBe(text.has(n));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('an ipcidr set: IPv4 (stored mapped) and IPv6 ranges, through the table', () => {
    const bytes = writeMrsRanges([
      ['10.0.0.0', '10.255.255.255'],
      ['192.0.2.8', '192.0.2.15'],
      ['2001:db8::', '2001:db8::ffff'],
    ]);
    const set = parseMrsRuleSet(bytes, 'ipcidr', ctx);
    const t = new RuleTable({
      mode: 'rule',
      rules: ['RULE-SET,lan,DIRECT', 'MATCH,TUNNEL'],
      ruleSets: new Map([['lan', set]]),
    });
    expect(t.decide(tcp('10.9.9.9'))).toMatchObject({ decision: { target: 'DIRECT' } });
    expect(t.decide(tcp('192.0.2.16'))).toMatchObject({ decision: { target: 'TUNNEL' } });
    expect(t.decide(tcp('2001:db8::1234'))).toMatchObject({ decision: { target: 'DIRECT' } });
    expect(t.decide(tcp('2001:db8::1:0'))).toMatchObject({ decision: { target: 'TUNNEL' } });
    expect(t.decide(tcp('named.example'))).toEqual({ need: 'address', at: [0] });
  });

  it('a damaged, foreign or oversized file is refused with a reason, before it allocates what it claims', () => {
    const good = writeMrsDomains(['+.example.com']);
    const raw = execFileSync('zstd', ['-q', '-d', '-c'], { input: good });
    const pack = (b: Buffer) => execFileSync('zstd', ['-q', '-c'], { input: b });
    const huge = Buffer.from(raw);
    huge.writeBigInt64BE(1n << 40n, 4 + 1 + 8 + 8 + 1); // the leaves' count
    for (const [bytes, why] of [
      [good.subarray(0, good.length - 4), /zstd/],
      [Buffer.from('payload:\n  - x\n'), /not zstd-compressed/],
      [pack(Buffer.from('MRS\x02')), /no MRS\\x01 header/],
      [pack(raw.subarray(0, raw.length - 3)), /past the end|cut short/],
      [pack(huge), /past the end/],
      [writeMrsRanges([['10.0.0.0', '10.0.0.255']]), /ipcidr set, the config says domain/],
      [pack(Buffer.alloc(70 * 1024 * 1024)), /larger than 67108864 bytes unpacked/],
    ] as const)
      expect(() => parseMrsRuleSet(bytes, 'domain', ctx), String(why)).toThrow(why);
    expect(() => parseMrsRuleSet(good, 'classical', ctx)).toThrow(RuleParseError);
  });

  it('a bomb (182 bytes of zstd whose trie spells out half a gigabyte of names) is refused by its sizes before one name is built (#59)', () => {
    // 4,096 paths of 512 labels, every node a leaf: 2 M names, 538 MB of them, from a 2.9 MB payload (182 bytes of zstd).
    const payload = mrsChainBombPayload(4096, 512);
    const bomb = execFileSync('zstd', ['-q', '-19', '-c'], { input: payload, maxBuffer: 64 << 20 });
    expect(bomb.length).toBeLessThan(64 * 1024);
    global.gc?.();
    const before = process.memoryUsage();
    expect(() => parseMrsRuleSet(bomb, 'domain', ctx)).toThrow(
      new RuleParseError(
        `an mrs domain set of 2097152 names in 537919488 bytes: more than a rule set may hold (${MAX_RULE_SET_ENTRIES} names, ${MAX_RULE_SET_NAME_BYTES} bytes)`,
      ),
    );
    const after = process.memoryUsage();
    // What reading it took: the payload and the trie's arrays (~16 MB), not the names' strings.
    expect(after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers).toBeLessThan(128 << 20);
    // Within the entry cap but past the bytes: 64 paths of 512 (32,768 names, 8.4 MB) with a 1 MB budget.
    expect(() => readMrsPayload(mrsChainBombPayload(64, 512), 'domain', { entries: 1e6, nameBytes: 1 << 20 })).toThrow(
      /32768 names in 8404992 bytes: more than a rule set may hold \(1000000 names, 1048576 bytes\)/,
    );
    // A small one of the same shape is read, every key the path to its leaf.
    const small = readMrsPayload(mrsChainBombPayload(2, 3), 'domain');
    expect('domains' in small && small.domains.sort()).toEqual(['a', 'a', 'aa', 'aa', 'aaa', 'aaa']);
  });
});

/**
 * mihomo's domain-set tests (component/trie/domain_set_test.go): the same cases on the set read
 * from text and on the set read back from the binary format those patterns make.
 */
describe('mihomo’s TestDomainSet tables, text and mrs alike (#45)', () => {
  const cases: Array<[string, string[], string[], string[]]> = [
    [
      'TestDomainSet',
      ['baidu.com', 'google.com', 'www.google.com', 'test.a.net', 'test.a.oc', 'Mijia Cloud', '.qq.com', '+.cn'],
      ['test.cn', 'cn', 'Mijia Cloud', 'test.a.net', 'www.qq.com', 'google.com'],
      ['qq.com', 'www.baidu.com'],
    ],
    [
      'TestDomainSetComplexWildcard',
      ['+.baidu.com', '+.a.baidu.com', 'www.baidu.com', '+.bb.baidu.com', 'test.a.net', 'test.a.oc', 'www.qq.com'],
      ['www.baidu.com', 'test.test.baidu.com'],
      ['google.com'],
    ],
    [
      'TestDomainSetWildcard',
      ['*.*.*.baidu.com', 'www.baidu.*', 'stun.*.*', '*.*.qq.com', 'test.*.baidu.com', '*.apple.com'],
      ['www.baidu.com', 'test.test.baidu.com', 'test.test.qq.com', 'stun.ab.cd'],
      ['test.baidu.com', 'www.google.com', 'a.www.google.com', 'test.qq.com', 'test.test.test.qq.com'],
    ],
  ];
  it.each(cases)('%s', (_name, patterns, yes, no) => {
    const text = new DomainSet();
    for (const p of patterns) expect(text.add(p), p).toBe(true);
    const bin = parseMrsRuleSet(writeMrsDomains(patterns.map((p) => p.toLowerCase())), 'domain', ctx);
    for (const n of yes) {
      expect(text.has(n), n).toBe(true);
      expect(bin.match(tcp(n), false), n).toBe(true);
    }
    for (const n of no) {
      expect(text.has(n), n).toBe(false);
      expect(bin.match(tcp(n), false), n).toBe(false);
    }
  });
});
