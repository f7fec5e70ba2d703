import type { ServerResponse } from 'node:http';
import { hostPort } from '../common/index.js';
import { unmapIpv4 } from '../reach/index.js';
import type { LocalPages } from '../proxy/index.js';
import type { DeviceBook, ShareDevice } from './device-book.js';
import { PHONE_TEXT, phoneLang, type PhoneText } from './phone-text.js';

/** `/d/<key>`, `/d/<key>/proxy.pac`, `/d/<key>/clash.yaml`: a device's page and what it offers. */
const PAGE_PATH = /^\/d\/([A-Za-z0-9_-]{24})(\/proxy\.pac|\/clash\.yaml)?$/;

/** Where a device's page is, as the phone reaches it. */
export function pageUrl(device: ShareDevice, at: string): string {
  return `http://${at}/d/${device.secret}`;
}

/**
 * The shared listener's own pages (#63). A device's page, its PAC and its Clash profile are at an
 * address with its key in it; fetching any of them admits the address it came from as that device
 * (the phone's stock proxy settings send no password), which is why the page says plainly what
 * that does and does not protect. An unknown key is a 404 like any unknown path.
 */
export function phonePages(book: DeviceBook): LocalPages {
  return {
    serve(req, res, pac) {
      const url = new URL(req.url ?? '/', 'http://gatehop.invalid');
      const m = req.method === 'GET' || req.method === 'HEAD' ? PAGE_PATH.exec(url.pathname) : null;
      const device = m ? book.bySecret(m[1]!) : null;
      if (!m || !device) return false;
      book.enrol(device, req.socket.remoteAddress ?? '');
      const at = hostPort(unmapIpv4(req.socket.localAddress ?? ''), req.socket.localPort ?? 0);
      if (m[2] === '/proxy.pac') {
        send(res, 'application/x-ns-proxy-autoconfig', pac() ?? allThroughPac(at));
      } else if (m[2] === '/clash.yaml') {
        send(
          res,
          'text/yaml; charset=utf-8',
          clashProfile(device, req.socket.localAddress ?? '', req.socket.localPort ?? 0),
        );
      } else {
        const lang = phoneLang(req.headers['accept-language'], url.searchParams.get('lang'));
        send(res, 'text/html; charset=utf-8', renderPage(device, at, PHONE_TEXT[lang], lang));
      }
      return true;
    },
  };
}

function send(res: ServerResponse, type: string, body: string): void {
  res.writeHead(200, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    // The page holds a password: no other site may frame it, and it loads nothing from elsewhere.
    'X-Frame-Options': 'DENY',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
    'Referrer-Policy': 'no-referrer',
  });
  res.end(body);
}

/** Without routing (a direct core), everything goes to the listener; if it cannot be reached, nothing leaks around it. */
function allThroughPac(at: string): string {
  return `function FindProxyForURL(url, host) {\n  return "PROXY ${at}; SOCKS5 ${at}";\n}\n`;
}

/**
 * A mihomo profile: one SOCKS5 proxy (this listener, with the device's password, UDP relayed) that
 * every connection goes through. Written to mihomo's documented format; no mihomo runs here to try it.
 */
export function clashProfile(device: ShareDevice, localAddress: string, port: number): string {
  const q = (s: string): string => JSON.stringify(s);
  return [
    `# Gatehop on ${unmapIpv4(localAddress)}: every connection of ${device.name.replace(/[\r\n]/g, ' ')} goes through it.`,
    'proxies:',
    '  - name: Gatehop',
    '    type: socks5',
    `    server: ${q(unmapIpv4(localAddress))}`,
    `    port: ${port}`,
    `    username: ${q(device.id)}`,
    `    password: ${q(device.secret)}`,
    '    udp: true',
    'rules:',
    '  - MATCH,Gatehop',
    '',
  ].join('\n');
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function fill(s: string, values: Record<string, string>): string {
  return esc(s).replace(/\{(\w+)\}/g, (_, k: string) => `<b>${esc(values[k] ?? '')}</b>`);
}

function renderPage(device: ShareDevice, at: string, t: PhoneText, lang: string): string {
  const pacUrl = `http://${at}/d/${device.secret}/proxy.pac`;
  const [host, port] = [at.slice(0, at.lastIndexOf(':')).replace(/^\[|\]$/g, ''), at.slice(at.lastIndexOf(':') + 1)];
  const socks = `socks5://${device.id}:${device.secret}@${at}`;
  const http = `http://${device.id}:${device.secret}@${at}`;
  const until = device.enrolledUntil ? new Date(device.enrolledUntil).toLocaleString(lang) : '';
  const row = (label: string, value: string, id: string): string =>
    `<tr><th>${esc(label)}</th><td><code id="${id}">${esc(value)}</code></td></tr>`;
  return `<!doctype html>
<html lang="${lang}" dir="${lang === 'fa' ? 'rtl' : 'ltr'}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(t.title)}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0 auto;max-width:40em;padding:1em;color:#1b1f24;background:#fafbfc}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}
code{direction:ltr;unicode-bidi:embed;word-break:break-all;background:#eef1f4;padding:.15em .35em;border-radius:4px;user-select:all}
th{text-align:start;padding-inline-end:1em;font-weight:600}td,th{padding:.25em 0;vertical-align:top}
.note{background:#fff7e0;border:1px solid #e8c860;border-radius:6px;padding:.6em .8em}
.ok{background:#e6f6ea;border:1px solid #6cbf84;border-radius:6px;padding:.6em .8em}
</style></head>
<body>
<h1>${esc(t.title)}</h1>
<p>${fill(t.intro, { device: device.name })}</p>
<p class="ok" id="enrolled">${fill(t.enrolled, { address: device.enrolledAddress ?? '', until })}</p>
<h2>${esc(t.stockHeading)}</h2>
<p>${esc(t.android)}</p>
<p>${esc(t.ios)}</p>
<p>${esc(t.pacLabel)}:<br><code id="pac">${esc(pacUrl)}</code></p>
<h2>${esc(t.appsHeading)}</h2>
<p>${esc(t.apps)}</p>
<p><code id="socks">${esc(socks)}</code></p>
<p><code id="http">${esc(http)}</code></p>
<p><a href="/d/${device.secret}/clash.yaml">${esc(t.clashProfile)}</a></p>
<h2>${esc(t.manualHeading)}</h2>
<table>${row(t.server, host, 'host')}${row(t.port, port, 'port')}${row(t.user, device.id, 'user')}${row(t.password, device.secret, 'password')}</table>
<p class="note">${esc(t.protects)}</p>
<p class="note">${esc(t.secret)}</p>
</body></html>
`;
}
