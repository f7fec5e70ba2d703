import { describe, expect, it } from 'vitest';
import { nftRuleset, nftTable } from '../../core/capture/tun-mode.js';

describe('TUN mode’s nftables table (#46)', () => {
  const base = { name: 'gh-tun0', strict: false, gid: 2999, allow: [] };

  it('marks what Gatehop’s group sends and the replies to connections that came in, and masquerades the marked', () => {
    const r = nftRuleset(base, '172.23.254.0/30');
    expect(nftTable('gh-tun0')).toBe('gatehop_gh_tun0');
    expect(r).toContain('table inet gatehop_gh_tun0 {');
    expect(r).toContain('meta skgid 2999 meta mark set 26472');
    expect(r).toContain('iifname != "gh-tun0" ct state new ct mark set 26472');
    expect(r).toContain('ct mark 26472 meta mark set 26472');
    expect(r).toContain('meta mark 26472 oifname != "gh-tun0" ip saddr 172.23.254.0/30 masquerade');
    expect(r).not.toContain('policy drop');
    // Gatehop's own mark (0x6768), not sing-box's and mihomo's 0x2022 (#59).
    expect(r).not.toContain('8226');
  });

  it('strict mode drops the rest of the output, but loopback, the TUN, Gatehop and the networks allowed', () => {
    const r = nftRuleset({ ...base, strict: true, allow: ['192.168.1.0/24', 'fd00::/8'] }, '172.23.254.0/30');
    expect(r).toMatch(
      /type filter hook output priority filter; policy drop;\n\s+oifname "lo" accept\n\s+oifname "gh-tun0" accept\n\s+meta mark 26472 accept/,
    );
    expect(r).toContain('ip daddr { 192.168.1.0/24 } accept');
    expect(r).toContain('ip6 daddr { fd00::/8 } accept');
  });
});
