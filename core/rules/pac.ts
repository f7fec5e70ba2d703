import { isIP } from 'node:net';
import { parseCidr } from './cidr-set.js';
import type { RuleTable } from './rule-table.js';

/**
 * A proxy auto-config script made from the rule table, for the system proxy in `rule` mode: rules
 * PAC can express are written in order (DIRECT ones answer `DIRECT`, others the proxy), and at the
 * first rule it cannot (a country, a rule set, a program, a UDP-only rule) the script hands the
 * rest to the proxy, whose table then decides. First match stays first match.
 *
 * Addresses are compared only when the browser already has one (an IP literal in the URL):
 * `isInNet` on a name would make the browser resolve it in clear, the DNS leak routing avoids.
 */
export function pacScript(table: RuleTable, proxy: string): string {
  const viaProxy = `PROXY ${proxy}; SOCKS5 ${proxy}`;
  const lines: string[] = [];
  const answer = (target: string): string => (target === 'DIRECT' ? '"DIRECT"' : 'P');
  if (table.mode === 'direct') lines.push('  return "DIRECT";');
  else if (table.mode === 'rule')
    for (const r of table.rules) {
      const p = JSON.stringify(r.payload.toLowerCase());
      const then = `return ${answer(r.target)};`;
      if (r.type === 'DOMAIN') lines.push(`  if (h === ${p}) ${then}`);
      else if (r.type === 'DOMAIN-SUFFIX') lines.push(`  if (h === ${p} || dnsDomainIs(h, "." + ${p})) ${then}`);
      else if (r.type === 'DOMAIN-KEYWORD') lines.push(`  if (h.indexOf(${p}) >= 0) ${then}`);
      else if (r.type === 'DST-PORT' && /^\d+$/.test(r.payload))
        lines.push(`  if (port === ${Number(r.payload)}) ${then}`);
      else if (r.type === 'NETWORK' && r.payload.toLowerCase() === 'tcp') lines.push(`  ${then}`);
      else if (r.type === 'NETWORK')
        continue; // udp: a browser's request never is
      else if ((r.type === 'IP-CIDR' || r.type === 'IP-CIDR6') && isV4Cidr(r.payload)) {
        const [net, mask] = v4NetMask(r.payload);
        lines.push(`  if (ip && isInNet(h, "${net}", "${mask}")) ${then}`);
      } else if (r.type === 'GEOIP' && r.payload === 'LAN') {
        // Addresses only, as the table's GEOIP,LAN: a plain name ("printer") is a name, which the
        // table does not match by LAN (it said DIRECT here before #45, the table TUNNEL).
        lines.push(`  if (ip && (${LAN_TESTS})) ${then}`);
      } else if (r.type === 'MATCH') {
        lines.push(`  ${then}`);
        break;
      } else break; // the proxy's own table decides from here on
    }
  return [
    '// Made by Gatehop from its rule table; the proxy decides whatever this does not.',
    'function FindProxyForURL(url, host) {',
    `  var P = ${JSON.stringify(viaProxy)};`,
    '  var h = host.toLowerCase();',
    '  var ip = /^\\d+\\.\\d+\\.\\d+\\.\\d+$/.test(h);',
    '  var m = /^[a-z]+:\\/\\/[^\\/:]+:(\\d+)/i.exec(url);',
    '  var port = m ? parseInt(m[1], 10) : url.indexOf("https:") === 0 ? 443 : 80;',
    ...lines,
    '  return P;',
    '}',
    '',
  ].join('\n');
}

const LAN_TESTS = [
  ['10.0.0.0', '255.0.0.0'],
  ['172.16.0.0', '255.240.0.0'],
  ['192.168.0.0', '255.255.0.0'],
  ['127.0.0.0', '255.0.0.0'],
  ['169.254.0.0', '255.255.0.0'],
  ['100.64.0.0', '255.192.0.0'],
]
  .map(([n, m]) => `isInNet(h, "${n}", "${m}")`)
  .join(' || ');

function isV4Cidr(payload: string): boolean {
  const addr = payload.split('/')[0] ?? '';
  return isIP(addr) === 4 && parseCidr(payload) !== null;
}

function v4NetMask(payload: string): [string, string] {
  const parsed = parseCidr(payload)!;
  const [start] = parsed.range as [number, number];
  const bits = Number(payload.split('/')[1] ?? 32);
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  const dotted = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  return [dotted(start), dotted(mask)];
}
