/** VPN Gate-format fixtures written for these tests (no real list is stored or fetched). */

export const FAKE_CA =
  '-----BEGIN CERTIFICATE-----\nMIIBfakefakefakefakefakefakefakefakefake\n-----END CERTIFICATE-----';

export function vpnGateProfile(ip: string, port: number, proto: 'tcp' | 'udp', extra: string[] = []): string {
  return [
    '###############################################################################',
    '# OpenVPN 2.0 Sample Configuration File',
    'dev tun',
    `proto ${proto}`,
    `remote ${ip} ${port}`,
    ';http-proxy-retry',
    'cipher AES-128-CBC',
    'auth SHA1',
    'resolv-retry infinite',
    'nobind',
    'persist-key',
    'persist-tun',
    'client',
    'verb 3',
    '#auth-user-pass',
    ...extra,
    '<ca>',
    FAKE_CA,
    '</ca>',
    '<cert>',
    '-----BEGIN CERTIFICATE-----\nMIIdummy\n-----END CERTIFICATE-----',
    '</cert>',
    '<key>',
    '-----BEGIN PRIVATE KEY-----\nMIIdummykey\n-----END PRIVATE KEY-----',
    '</key>',
    '',
  ].join('\r\n');
}

export interface RowSpec {
  host: string;
  ip: string;
  score?: number | string;
  ping?: number | string;
  speed?: number | string;
  country?: [string, string];
  sessions?: number | string;
  uptime?: number | string;
  operator?: string;
  profile?: string;
  base64?: string;
}

const HEADER =
  '#HostName,IP,Score,Ping,Speed,CountryLong,CountryShort,NumVpnSessions,Uptime,TotalUsers,TotalTraffic,LogType,Operator,Message,OpenVPN_ConfigData_Base64';

export function vpnGateCsv(rows: RowSpec[], opts: { eol?: string; final?: boolean } = {}): string {
  const eol = opts.eol ?? '\r\n';
  const lines = ['*vpn_servers', HEADER];
  for (const r of rows) {
    const profile = r.profile ?? vpnGateProfile(r.ip, 443, 'tcp');
    const b64 = r.base64 ?? Buffer.from(profile).toString('base64');
    const [cl, cs] = r.country ?? ['Japan', 'JP'];
    lines.push(
      [
        r.host,
        r.ip,
        r.score ?? 100000,
        r.ping ?? 10,
        r.speed ?? 50_000_000,
        cl,
        cs,
        r.sessions ?? 10,
        r.uptime ?? 86_400_000,
        100,
        1000,
        '2weeks',
        r.operator ?? 'op',
        '',
        b64,
      ].join(','),
    );
  }
  if (opts.final !== false) lines.push('*');
  return lines.join(eol) + eol;
}
