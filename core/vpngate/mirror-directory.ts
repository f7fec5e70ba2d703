import { isIP } from 'node:net';
import { isLocalName } from '../reach/index.js';
import { defaultAddressPolicy, type AddressPolicy } from '../reach/index.js';
import { unbracket } from '../common/index.js';

/**
 * VPN Gate's mirror directory page (`/en/sites.aspx`): volunteers' mirrors of the whole site,
 * each linked as `http://HOST:PORT/en/`, and each serving the same `/api/iphone/` list. The page is
 * HTML meant for people; read it as such: every anchor's href, entities decoded, kept when it is
 * an absolute http(s) URL to another site's language root (`/en/`, `/ja/`, …) or to a site root on an
 * explicit port (how mirrors on volunteers' PCs are published). The page's own site, VPN Gate's
 * and SoftEther's pages, anything with a query, and links to this machine or (unless allowed) the
 * LAN are left out.
 */

/** Hosts whose links are the project's own pages, never mirrors. */
const NOT_MIRRORS =
  /(^|\.)(vpngate\.net|softether\.(org|jp|net|com)|tsukuba\.ac\.jp|opengw\.net|github\.com|google\.com|twitter\.com|x\.com|facebook\.com)$/i;
const MAX_MIRRORS = 200;

function decodeEntities(s: string): string {
  return s
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;|&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/**
 * The list endpoints (`<mirror origin>/api/iphone/`) of the mirrors a directory page links to, in
 * page order, without duplicates. `pageUrl` is where the page came from (its own site is no mirror).
 */
export function parseMirrorDirectory(
  html: string,
  pageUrl: string,
  policy: AddressPolicy = defaultAddressPolicy,
): string[] {
  const own = safeUrl(pageUrl)?.host.toLowerCase() ?? null;
  const out = new Set<string>();
  const href = /<a\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))/gi;
  for (let m = href.exec(html); m && out.size < MAX_MIRRORS; m = href.exec(html)) {
    const raw = decodeEntities((m[1] ?? m[2] ?? m[3] ?? '').trim());
    const u = safeUrl(raw);
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) continue;
    if (u.username || u.password || u.search || !u.hostname) continue;
    if (u.host.toLowerCase() === own || NOT_MIRRORS.test(u.hostname)) continue;
    // A page may not aim Gatehop at this machine or its LAN (names are checked again when dialled).
    const host = unbracket(u.hostname);
    if (isLocalName(host) || (isIP(host) !== 0 && policy(host) !== null)) continue;
    const languageRoot = /^\/[a-z]{2}(-[a-z]{2})?\/?$/i.test(u.pathname);
    const portRoot = u.port !== '' && (u.pathname === '/' || u.pathname === '');
    if (!languageRoot && !portRoot) continue;
    out.add(`${u.protocol}//${u.host}/api/iphone/`);
  }
  return [...out];
}

/** `<origin>/en/sites.aspx` of a list endpoint. */
export function directoryUrlOf(listUrl: string): string | null {
  const u = safeUrl(listUrl);
  return u ? `${u.protocol}//${u.host}/en/sites.aspx` : null;
}

function safeUrl(s: string): URL | null {
  try {
    return new URL(s);
  } catch {
    return null;
  }
}
