import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { pacScript, RuleTable } from '../../core/rules/index.js';

/** The PAC helper functions browsers provide (what these scripts use), without any DNS. */
const helpers = {
  isPlainHostName: (h: string) => !h.includes('.'),
  dnsDomainIs: (h: string, d: string) => h.endsWith(d),
  isInNet: (h: string, net: string, mask: string) => {
    const n = (s: string) => s.split('.').reduce((a, o) => a * 256 + Number(o), 0);
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(h)) throw new Error(`isInNet would resolve ${h} in clear`);
    return (n(h) & n(mask)) >>> 0 === (n(net) & n(mask)) >>> 0;
  },
};

function find(table: RuleTable, url: string, host: string): string {
  const script = pacScript(table, '127.0.0.1:1080');
  return runInNewContext(`${script}\nFindProxyForURL(${JSON.stringify(url)}, ${JSON.stringify(host)})`, {
    ...helpers,
  }) as string;
}

const P = 'PROXY 127.0.0.1:1080; SOCKS5 127.0.0.1:1080';

describe('the PAC script made from the rule table (#33)', () => {
  it('answers DIRECT for what the rules send direct, in order, and the proxy for the rest', () => {
    const t = new RuleTable({
      mode: 'rule',
      rules: [
        'DOMAIN-SUFFIX,ads.example,REJECT',
        'DOMAIN-SUFFIX,ir,DIRECT',
        'DOMAIN,exact.example,DIRECT',
        'DOMAIN-KEYWORD,bank,DIRECT',
        'IP-CIDR,5.160.0.0/16,DIRECT',
        'GEOIP,LAN,DIRECT,no-resolve',
        'MATCH,TUNNEL',
      ],
    });
    expect(find(t, 'https://shop.digikala.ir/', 'shop.digikala.ir')).toBe('DIRECT');
    expect(find(t, 'https://ir/', 'ir')).toBe('DIRECT');
    expect(find(t, 'http://x.ads.example/', 'x.ads.example')).toBe(P); // refused by the proxy itself
    expect(find(t, 'http://exact.example/', 'exact.example')).toBe('DIRECT');
    expect(find(t, 'http://mybank.example/', 'mybank.example')).toBe('DIRECT');
    expect(find(t, 'http://5.160.1.1/', '5.160.1.1')).toBe('DIRECT');
    expect(find(t, 'http://192.168.1.1/', '192.168.1.1')).toBe('DIRECT');
    // A plain name is a name: GEOIP,LAN does not match it in the table, so not in the script either (#45).
    expect(find(t, 'http://printer/', 'printer')).toBe(P);
    // A name is never resolved by the script (isInNet above throws if it were).
    expect(find(t, 'https://www.example.com/', 'www.example.com')).toBe(P);
  });

  it('stops at the first rule PAC cannot express: the proxy decides from there, so order holds', () => {
    const t = new RuleTable({ mode: 'rule', rules: ['GEOIP,CN,DIRECT', 'DOMAIN-SUFFIX,cn,DIRECT', 'MATCH,DIRECT'] });
    expect(find(t, 'https://www.qq.cn/', 'www.qq.cn')).toBe(P);
  });

  it('agrees with the table wherever it answers DIRECT (#45 review: the plain-host rule said DIRECT where the table did not)', () => {
    const t = new RuleTable({ mode: 'rule' }); // the default table
    for (const host of ['printer', 'nas.local', 'localhost', '192.168.1.1', '10.0.0.2', 'example.com', '8.8.8.8']) {
      const a = t.decide({ network: 'tcp', host, port: 80 });
      const target = 'decision' in a ? a.decision.target : 'TUNNEL';
      if (find(t, `http://${host}/`, host) === 'DIRECT') expect(target, host).toBe('DIRECT');
    }
  });

  it('follows the mode: global sends everything to the proxy, direct nothing', () => {
    expect(find(new RuleTable({ mode: 'global' }), 'http://192.168.1.1/', '192.168.1.1')).toBe(P);
    expect(find(new RuleTable({ mode: 'direct' }), 'http://example.com/', 'example.com')).toBe('DIRECT');
  });
});
