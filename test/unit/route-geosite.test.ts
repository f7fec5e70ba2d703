import { describe, expect, it } from 'vitest';
import { GeoSite, RuleParseError, RuleTable, type Flow } from '../../core/rules/index.js';
import { writeGeoSite } from '../helpers/geosite-writer.js';

const tcp = (host: string): Flow => ({ network: 'tcp', host, port: 443 });

describe('GEOSITE reads v2fly’s geosite.dat as mihomo does (#45)', () => {
  const site = GeoSite.parse(
    writeGeoSite({
      cn: [
        { type: 'domain', value: 'baidu.com' },
        { type: 'full', value: 'www.qq.com' },
        { type: 'plain', value: 'taobao' },
        { type: 'regexp', value: '^cdn\\d+\\.example\\.cn$' },
      ],
      google: [
        { type: 'domain', value: 'google.com' },
        { type: 'domain', value: 'google.cn', attrs: ['cn'] },
        { type: 'full', value: 'ads.google.cn', attrs: ['cn', 'ads'] },
      ],
      'geolocation-!cn': [{ type: 'domain', value: 'example.org' }],
    }),
  );

  it.each([
    ['cn', 'baidu.com', true],
    ['cn', 'map.baidu.com', true],
    ['cn', 'notbaidu.com', false],
    ['cn', 'www.qq.com', true],
    ['cn', 'm.www.qq.com', false],
    ['cn', 'world.taobao.hk', true],
    ['cn', 'cdn12.example.cn', true],
    ['cn', 'cdnx.example.cn', false],
    ['CN', 'baidu.com', true],
    ['google', 'mail.google.com', true],
    ['google@cn', 'mail.google.com', false],
    ['google@cn', 'www.google.cn', true],
    ['google@cn@ads', 'www.google.cn', false],
    ['google@cn@ads', 'ads.google.cn', true],
    ['!cn', 'baidu.com', false],
    ['!cn', 'example.com', true],
    ['geolocation-!cn', 'www.example.org', true],
    ['nosuchlist', 'baidu.com', false],
  ])('GEOSITE,%s on %s → %s', (code, name, want) => {
    expect(site.matches(code.toLowerCase(), name)).toBe(want);
  });

  it('indexes the lists by name and decodes only the ones asked for', () => {
    expect([...site.lists].sort()).toEqual(['cn', 'geolocation-!cn', 'google']);
    expect(site.entries('google@cn')).toBe(2);
    expect(site.entries('nosuchlist')).toBeNull();
  });

  it('through the table: GEOSITE rules route a name, by the name a flow by IP announced too', () => {
    const t = new RuleTable({
      mode: 'rule',
      rules: ['GEOSITE,google@cn,REJECT', 'GEOSITE,cn,DIRECT', 'MATCH,TUNNEL'],
      geosite: site,
    });
    expect(t.errors).toEqual([]);
    expect(t.sniffs).toBe(true);
    expect(t.decide(tcp('www.google.cn'))).toMatchObject({ decision: { target: 'REJECT', rule: 'GEOSITE' } });
    expect(t.decide(tcp('tieba.baidu.com'))).toMatchObject({ decision: { target: 'DIRECT', payload: 'cn' } });
    expect(t.decide({ ...tcp('1.2.3.4'), sniffedName: 'baidu.com' })).toMatchObject({ decision: { target: 'DIRECT' } });
    expect(t.decide(tcp('example.com'))).toMatchObject({ decision: { target: 'TUNNEL' } });
    // Without the data loaded a GEOSITE rule matches nothing (as GEOIP without GeoIP).
    const bare = new RuleTable({ mode: 'rule', rules: ['GEOSITE,cn,DIRECT', 'MATCH,TUNNEL'] });
    expect(bare.decide(tcp('baidu.com'))).toMatchObject({ decision: { target: 'TUNNEL' } });
  });

  it('a config naming 100 lists builds each once, however many flows ask (#59: 64 kept built made every flow rebuild)', () => {
    const lists = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`l${i}`, [{ type: 'domain' as const, value: `site${i}.example` }]]),
    );
    const many = GeoSite.parse(writeGeoSite(lists));
    const t = new RuleTable({
      mode: 'rule',
      rules: [...Object.keys(lists).map((c) => `GEOSITE,${c},DIRECT`), 'MATCH,TUNNEL'],
      geosite: many,
    });
    for (let round = 0; round < 5; round++) {
      expect(t.decide(tcp('elsewhere.example'))).toMatchObject({ decision: { target: 'TUNNEL' } });
      expect(t.decide(tcp('www.site99.example'))).toMatchObject({ decision: { target: 'DIRECT', payload: 'l99' } });
    }
    expect(many.builds).toBe(100);
  });

  it('a damaged or foreign file is refused with a reason, never read past its end', () => {
    const good = writeGeoSite({ cn: [{ type: 'domain', value: 'baidu.com' }] });
    for (const bad of [
      good.subarray(0, good.length - 3),
      new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
      Buffer.from('<html>captive portal</html>'),
      new Uint8Array(0),
      new Uint8Array([0x0b]),
    ])
      expect(() => GeoSite.parse(bad)).toThrow(RuleParseError);
  });
});
