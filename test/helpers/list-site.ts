import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/** What a VPN Gate look-alike site answers at /api/iphone/. */
export type ListBehaviour =
  | string
  | 'hang'
  | 'stall'
  | 'gzip'
  | { status: number; body?: string }
  | { redirect: string }
  | ((hit: number) => string);

export interface ListSite {
  readonly origin: string;
  readonly listUrl: string;
  hits(path?: string): number;
  /** Headers of the last request to the list. */
  lastHeaders(): Record<string, string | string[] | undefined>;
  set(list: ListBehaviour): void;
  /** The mirror directory page at /en/sites.aspx (null: 404). */
  setDirectory(html: string | null): void;
  close(): Promise<void>;
}

/**
 * A loopback site shaped like www.vpngate.net or one of its mirrors: the list at /api/iphone/ and the
 * mirror directory at /en/sites.aspx, each switchable between a good answer and the ways real
 * sources go wrong (an HTML page, a truncated list, a stall mid-body, an error status).
 */
export async function listSite(
  list: ListBehaviour,
  opts: { host?: string; directory?: string | null; tls?: { key: string; cert: string } } = {},
): Promise<ListSite> {
  let behaviour = list;
  let directory = opts.directory ?? null;
  const hits = new Map<string, number>();
  let headers: Record<string, string | string[] | undefined> = {};
  const handler: RequestListener = (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/en/sites.aspx') {
      if (directory === null) {
        res.writeHead(404);
        return res.end('not here');
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(directory);
    }
    if (path !== '/api/iphone/') {
      res.writeHead(404);
      return res.end();
    }
    headers = req.headers;
    const b = behaviour;
    if (b === 'hang') return;
    if (b === 'stall') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 100_000 });
      return res.write('*vpn_servers\r\n#HostName,IP');
    }
    if (b === 'gzip') {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      return res.end(gzipSync('*vpn_servers\r\n'));
    }
    if (typeof b === 'function') return res.end(b(hits.get(path)!));
    if (typeof b === 'object' && 'redirect' in b) {
      res.writeHead(302, { location: b.redirect });
      return res.end();
    }
    if (typeof b === 'object') {
      res.writeHead(b.status, { 'content-type': 'text/html' });
      return res.end(b.body ?? '');
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(b);
  };
  // With `tls`, HTTPS as www.vpngate.net serves it; mirrors serve plain HTTP.
  const server: Server = opts.tls ? createTlsServer(opts.tls, handler) : createServer(handler);
  await new Promise<void>((r) => server.listen(0, opts.host ?? '127.0.0.1', () => r()));
  const a = server.address() as AddressInfo;
  const origin = `${opts.tls ? 'https' : 'http'}://${opts.host ?? '127.0.0.1'}:${a.port}`;
  return {
    origin,
    listUrl: `${origin}/api/iphone/`,
    hits: (path = '/api/iphone/') => hits.get(path) ?? 0,
    lastHeaders: () => headers,
    set: (l) => (behaviour = l),
    setDirectory: (html) => (directory = html),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A mirror directory page shaped like VPN Gate's /en/sites.aspx: a table of mirrors with flags, locations and links. */
export function directoryHtml(mirrors: Array<{ origin: string; location?: string }>): string {
  const rows = mirrors
    .map(
      (m, i) => `<tr>
  <td class="vg_table_row_${i % 2}" style="text-align: center;"><img src="../images/flags/JP.png" width="32" height="32" /><br>${m.location ?? 'Japan'}</td>
  <td class="vg_table_row_${i % 2}"><a href="${m.origin}/en/" target="_blank"><strong>${m.origin}/</strong></a><br><span style="font-size: 10pt;">(Mirror location: ${m.location ?? 'Japan'})</span></td>
</tr>`,
    )
    .join('\n');
  return `<!DOCTYPE html>
<html><head><title>VPN Gate Mirror Sites - VPN Gate</title></head>
<body>
<div id="header"><a href="/en/"><img src="/images/logo.png" alt="VPN Gate"></a>
<a href="http://www.softether.org/">SoftEther VPN Project</a> | <a href="https://www.vpngate.net/en/about_overview.aspx">About</a>
<a href="/en/sites.aspx?lang=ja">日本語</a></div>
<p>The following is the list of VPN Gate mirror sites. If www.vpngate.net is blocked, try one of these mirrors.</p>
<table id="vg_hosts_table_id">
<tr><td>Location</td><td>Mirror site URL</td></tr>
${rows}
</table>
<p><a href="https://www.tsukuba.ac.jp/">University of Tsukuba</a> &copy; VPN Gate Academic Experiment Project</p>
</body></html>`;
}
