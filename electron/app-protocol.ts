import { extname, join, normalize, sep } from 'node:path';
import { readFile } from 'node:fs/promises';
import { UI_CSP } from '../core/api/index.js';
import { APP_SCHEME } from './window-controller.js';

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.png': 'image/png', '.svg': 'image/svg+xml', '.woff2': 'font/woff2' };

/** The scheme's privileges: a standard, secure origin (so CSP 'self' and fetch work), no CORS bypass. */
export const APP_SCHEME_PRIVILEGES = [{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }];

/**
 * Serves the renderer build for gatehop://app/…, with the same strict CSP the dashboard gets and
 * nothing outside the build folder (a request that resolves outside it is a 404).
 */
export function appProtocolHandler(uiDir: string): (req: Request) => Promise<Response> {
  const root = normalize(uiDir + sep);
  return async (req) => {
    const url = new URL(req.url);
    if (url.host !== 'app') return new Response('not found', { status: 404 });
    const rel = decodeURIComponent(url.pathname).replace(/^\/+/, '') || 'index.html';
    const file = normalize(join(root, rel));
    if (!file.startsWith(root)) return new Response('not found', { status: 404 });
    try {
      const body = await readFile(file);
      return new Response(body, { status: 200, headers: { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-security-policy': UI_CSP, 'x-content-type-options': 'nosniff' } });
    } catch {
      return new Response('not found', { status: 404 });
    }
  };
}
