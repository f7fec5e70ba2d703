// A VPN Gate API look-alike: GET /api/iphone/ in the real CSV format, one row per rig node.
//   POST /control?mode=ok|slow|fail|empty|truncated|html[&delayMs=N]  switches its behaviour.
// Usage: node vpngate-api.mjs STATE_JSON PORT_FILE
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

const state = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let mode = 'ok';
let delayMs = 5000;

function csv() {
  const lines = ['*vpn_servers', '#HostName,IP,Score,Ping,Speed,CountryLong,CountryShort,NumVpnSessions,Uptime,TotalUsers,TotalTraffic,LogType,Operator,Message,OpenVPN_ConfigData_Base64'];
  state.nodes.forEach((n, i) => {
    const profile = readFileSync(n.listProfile, 'utf8');
    const row = [
      n.name, n.vpnAddress, 1_000_000 - i * 50_000, 10 + i * 3, 100_000_000 - i * 5_000_000, 'Japan', 'JP',
      5 + i, 86_400_000 * (i + 1), 1000 + i, 123456789012, '2weeks', `"Rig operator ${i}, Tsukuba"`, '',
      Buffer.from(profile).toString('base64'),
    ];
    lines.push(row.join(','));
  });
  lines.push('*');
  return lines.join('\r\n') + '\r\n';
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (req.method === 'POST' && url.pathname === '/control') {
    mode = url.searchParams.get('mode') ?? 'ok';
    delayMs = Number(url.searchParams.get('delayMs') ?? delayMs);
    return res.end(`mode=${mode}\n`);
  }
  if (url.pathname !== '/api/iphone/') {
    res.writeHead(404);
    return res.end();
  }
  const body = csv();
  const send = () => {
    if (mode === 'fail') {
      res.writeHead(503);
      return res.end('service unavailable');
    }
    if (mode === 'empty') return res.end('');
    if (mode === 'html') {
      res.setHeader('Content-Type', 'text/html');
      return res.end('<html><body>Please wait...</body></html>');
    }
    if (mode === 'truncated') return res.end(body.slice(0, Math.floor(body.length / 2)));
    res.setHeader('Content-Type', 'text/plain');
    res.end(body);
  };
  if (mode === 'slow') setTimeout(send, delayMs);
  else send();
});
server.listen(0, '127.0.0.1', () => {
  // Atomic: `up` polls for a non-empty file and must never read half of it.
  writeFileSync(`${process.argv[3]}.tmp`, String(server.address().port));
  renameSync(`${process.argv[3]}.tmp`, process.argv[3]);
});
