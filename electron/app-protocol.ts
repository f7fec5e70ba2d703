import { extname, join, normalize, sep } from 'node:path';
import { readFile } from 'node:fs/promises';
import { UI_CSP } from '../core/api/index.js';
import { APP_SCHEME } from './window-controller.js';

/** The error page of a window whose renderer keeps crashing, in the user's language (plain HTML, no script). */
export function crashedHtml(lang: string, title: string, body: string): string {
  const esc = (x: string): string =>
    x.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  return `<!doctype html><html lang="${esc(lang)}"><head><meta charset="utf-8"><title>${esc(title)}</title></head><body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5"><h1 style="font-size: 1.3rem">${esc(title)}</h1><p>${esc(body)}</p></body></html>`;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/** The scheme's privileges: a standard, secure origin (so CSP 'self' and fetch work), no CORS bypass. */
export const APP_SCHEME_PRIVILEGES = [
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } },
];

/**
 * Serves the renderer build for gatehop://app/…, with the same strict CSP the dashboard gets and
 * nothing outside the build folder (a request that resolves outside it is a 404).
 */
export function appProtocolHandler(uiDir: string, crashedPage?: () => string): (req: Request) => Promise<Response> {
  const root = normalize(uiDir + sep);
  return async (req) => {
    const url = new URL(req.url);
    if (url.host !== 'app') return new Response('not found', { status: 404 });
    const rel = decodeURIComponent(url.pathname).replace(/^\/+/, '') || 'index.html';
    // The page a window shows after its renderer crashed twice: no script, nothing to crash again.
    if (rel === 'crashed.html' && crashedPage)
      return new Response(crashedPage(), {
        status: 200,
        headers: {
          'content-type': TYPES['.html']!,
          'content-security-policy': UI_CSP,
          'x-content-type-options': 'nosniff',
        },
      });
    const file = normalize(join(root, rel));
    if (!file.startsWith(root)) return new Response('not found', { status: 404 });
    try {
      const body = await readFile(file);
      return new Response(body, {
        status: 200,
        headers: {
          'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
          'content-security-policy': UI_CSP,
          'x-content-type-options': 'nosniff',
        },
      });
    } catch {
      return new Response('not found', { status: 404 });
    }
  };
}
