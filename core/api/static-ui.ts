import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import sirv from 'sirv';

/**
 * Strict for a page that holds a bearer token: scripts and styles only from this origin, fetches
 * only to the API itself (same origin), no framing, no plugins, no forms.
 */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export type UiHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * For a Clash dashboard the user put in `externalUi` (their choice of code, like Clash's
 * external-ui): its own scripts and styles (builds inline some), images from anywhere (flags,
 * icons), the API by same origin and WebSockets to it; still no framing and no plugins.
 */
export const EXTERNAL_UI_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob: https:",
  "font-src 'self' data:",
  "connect-src 'self' ws: wss: https:",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** A built web app's files (sirv: ETags, ranges, precompressed files) with its CSP, no sniffing, no referrer. */
function serveBuild(
  dir: string,
  o: { single: boolean; csp: string; cache: (pathname: string) => string },
): ReturnType<typeof sirv> {
  return sirv(dir, {
    dev: false,
    etag: true,
    gzip: true,
    single: o.single,
    setHeaders(res, pathname) {
      res.setHeader('content-security-policy', o.csp);
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('referrer-policy', 'no-referrer');
      res.setHeader('cache-control', o.cache(pathname));
    },
  });
}

/**
 * A user-supplied dashboard build at /ui/external/ (`externalUi: DIR`), same origin as the API so
 * no CORS is needed. Single-page apps get index.html for unknown paths. null without a build there.
 */
export function externalUi(dir: string | null | undefined): UiHandler | null {
  if (!dir || !existsSync(join(dir, 'index.html'))) return null;
  const serve = serveBuild(dir, {
    single: true,
    csp: EXTERNAL_UI_CSP,
    cache: (pathname) => (pathname.endsWith('.html') || pathname === '/' ? 'no-store' : 'no-cache'),
  });
  return (req, res) => {
    const url = req.url ?? '/ui/external/';
    if (url === '/ui/external' || url.startsWith('/ui/external?')) {
      res.writeHead(301, { location: `/ui/external/${url.slice('/ui/external'.length)}` });
      res.end();
      return;
    }
    req.url = url.slice('/ui/external'.length) || '/';
    serve(req, res, () => {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
      res.end('not found');
    });
  };
}

/**
 * The built renderer at /ui/ (sirv: ETags, ranges, precompressed files; no directory listing).
 * index.html is never cached (it names the current hashed assets); the hashed assets are
 * immutable. Returns null when there is no build (the API then answers /ui with 404).
 */
export function staticUi(dir: string | null | undefined): UiHandler | null {
  if (!dir || !existsSync(join(dir, 'index.html'))) return null;
  const serve = serveBuild(dir, {
    single: false,
    csp: UI_CSP,
    cache: (pathname) =>
      pathname.endsWith('.html') || pathname === '/'
        ? 'no-store'
        : pathname.startsWith('/assets/')
          ? 'public, max-age=31536000, immutable'
          : 'no-cache',
  });
  return (req, res) => {
    const url = req.url ?? '/ui/';
    if (url === '/ui' || url.startsWith('/ui?')) {
      res.writeHead(301, { location: `/ui/${url.slice(3)}` });
      res.end();
      return;
    }
    req.url = url.slice(3) || '/'; // sirv serves the folder's root at /
    serve(req, res, () => {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
      res.end('not found');
    });
  };
}
