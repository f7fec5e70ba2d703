// A VPN Gate site look-alike: GET /api/iphone/ in the real CSV format, one row per rig node, and
// (with --mirrors) the mirror directory page /en/sites.aspx linking each mirror as http://HOST:PORT/en/.
//   POST /control?mode=ok|slow|fail|empty|truncated|html|stall[&delayMs=N]  switches its behaviour.
// Usage: node vpngate-api.mjs STATE_JSON PORT_FILE [--host H] [--port P] [--mode M] [--nodes NAME,…]
//        [--mirrors ORIGIN,…] [--no-list] [--tls CERT,KEY --plain-port-file FILE]
//   --nodes     only these rig nodes (by name or id) in the list (a partial list, as VPN Gate's is)
//   --mirrors   serve a directory page naming these mirror origins
//   --no-list   answer /api/iphone/ with 404 (a site whose list endpoint is filtered or overloaded)
//   --tls       serve HTTPS on PORT_FILE's port with this certificate (www.vpngate.net's API is
//               HTTPS), and the same in clear on a second port written to --plain-port-file (for
//               /control, and for tests that want a list in clear)
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';

const [statePath, portFile, ...rest] = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : dflt;
};
const state = JSON.parse(readFileSync(statePath, 'utf8'));
let mode = opt('--mode', 'ok');
let delayMs = 5000;
const only = opt('--nodes', '') ? new Set(opt('--nodes').split(',')) : null;
const mirrors = opt('--mirrors', '') ? opt('--mirrors').split(',') : null;
const noList = rest.includes('--no-list');

function csv() {
  const lines = [
    '*vpn_servers',
    '#HostName,IP,Score,Ping,Speed,CountryLong,CountryShort,NumVpnSessions,Uptime,TotalUsers,TotalTraffic,LogType,Operator,Message,OpenVPN_ConfigData_Base64',
  ];
  state.nodes.forEach((n, i) => {
    if (only && !only.has(n.name) && !only.has(n.id)) return;
    const profile = readFileSync(n.listProfile, 'utf8');
    const row = [
      n.name,
      n.vpnAddress,
      1_000_000 - i * 50_000,
      10 + i * 3,
      100_000_000 - i * 5_000_000,
      'Japan',
      'JP',
      5 + i,
      86_400_000 * (i + 1),
      1000 + i,
      123456789012,
      '2weeks',
      `"Rig operator ${i}, Tsukuba"`,
      '',
      Buffer.from(profile).toString('base64'),
    ];
    lines.push(row.join(','));
  });
  lines.push('*');
  return lines.join('\r\n') + '\r\n';
}

function directory() {
  const rows = mirrors
    .map(
      (m, i) =>
        `<tr><td class="vg_table_row_${i % 2}" style="text-align: center;"><img src="../images/flags/JP.png" /><br>Japan</td>` +
        `<td class="vg_table_row_${i % 2}"><a href="${m}/en/" target="_blank"><strong>${m}/</strong></a><br>(Mirror location: Japan)</td></tr>`,
    )
    .join('\n');
  return `<!DOCTYPE html><html><head><title>VPN Gate Mirror Sites</title></head><body>
<a href="/en/">VPN Gate</a> <a href="http://www.softether.org/">SoftEther</a>
<table id="vg_hosts_table_id"><tr><td>Location</td><td>Mirror site URL</td></tr>
${rows}
</table></body></html>`;
}

const handler = (req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (req.method === 'POST' && url.pathname === '/control') {
    mode = url.searchParams.get('mode') ?? 'ok';
    delayMs = Number(url.searchParams.get('delayMs') ?? delayMs);
    return res.end(`mode=${mode}\n`);
  }
  if (url.pathname === '/en/sites.aspx' && mirrors) {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    return res.end(directory());
  }
  if (url.pathname !== '/api/iphone/' || noList) {
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
    if (mode === 'stall') {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': body.length });
      return res.write(body.slice(0, 200)); // and never the rest
    }
    res.setHeader('Content-Type', 'text/plain');
    res.end(body);
  };
  if (mode === 'slow') setTimeout(send, delayMs);
  else send();
};

/** Listens; then writes the port to `file` (atomic: `up` polls for a non-empty file and must never read half of it). */
function serve(server, port, file) {
  server.listen(port, opt('--host', '127.0.0.1'), () => {
    writeFileSync(`${file}.tmp`, String(server.address().port));
    renameSync(`${file}.tmp`, file);
  });
}

const tls = opt('--tls', '');
if (tls) {
  const [cert, key] = tls.split(',');
  // The clear one first: once PORT_FILE exists, both listen.
  const plain = createServer(handler);
  plain.listen(0, opt('--host', '127.0.0.1'), () => {
    writeFileSync(`${opt('--plain-port-file')}.tmp`, String(plain.address().port));
    renameSync(`${opt('--plain-port-file')}.tmp`, opt('--plain-port-file'));
    serve(
      createTlsServer({ cert: readFileSync(cert), key: readFileSync(key) }, handler),
      Number(opt('--port', '0')),
      portFile,
    );
  });
} else serve(createServer(handler), Number(opt('--port', '0')), portFile);
