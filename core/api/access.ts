import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { isWildcardHost, unbracket } from '../common/index.js';

export interface AccessPolicy {
  token: string;
  /** Whether a request's Host (host:port, lower case) names this API (see ownHosts). */
  isOwnHost: (host: string) => boolean;
  /** Origins (scheme://host:port) allowed to call cross-origin; the API's own origins always are. */
  allowedOrigins: ReadonlySet<string>;
}

export type AccessVerdict =
  { ok: true; origin: string | null } | { ok: false; status: 401 | 403; error: string; message: string };

function allowedHostsFor(host: string, port: number, names: readonly string[] = []): Set<string> {
  const all = new Set([host, 'localhost', '127.0.0.1', '[::1]', ...names]);
  for (const h of [...all]) if (h.includes(':') && !h.startsWith('[')) all.add(`[${h}]`);
  return new Set([...all].map((h) => `${h}:${port}`.toLowerCase()));
}

/** This machine's interface addresses, as a Host header writes them (IPv6 in brackets). */
function interfaceHosts(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) out.push(a.family === 'IPv6' ? `[${a.address.split('%')[0]}]` : a.address);
  return out.map((h) => h.toLowerCase());
}

/**
 * The Hosts this API answers to, a DNS-rebinding defence: the address it listens on, the loopback
 * names, the names the user listed (`adminHosts`, say `homeserver.lan`), and, when it listens on
 * every interface (`--admin 0.0.0.0:9090` on a home server), any of this machine's own addresses
 * written as an address: what a browser on the LAN sends when the dashboard is opened by the
 * server's address. An address in Host cannot come from rebinding, which needs a name the attacker
 * controls; the interfaces are read when asked, so a new DHCP lease is taken without a restart.
 */
export function ownHosts(
  bindHost: string,
  port: number,
  names: readonly string[] = [],
  interfaces: () => string[] = interfaceHosts,
): (host: string) => boolean {
  const fixed = allowedHostsFor(bindHost, port, names);
  const wildcard = isWildcardHost(bindHost);
  return (host) => {
    if (fixed.has(host)) return true;
    if (!wildcard || !host.endsWith(`:${port}`)) return false;
    const name = host.slice(0, -`:${port}`.length);
    if (isIP(unbracket(name)) === 0) return false;
    return interfaces().includes(name);
  };
}

/** Whether an Origin header is one of the API's own pages (http://<own host>). */
function isOwnOrigin(origin: string, policy: AccessPolicy): boolean {
  const o = origin.toLowerCase();
  return o.startsWith('http://') && policy.isOwnHost(o.slice('http://'.length));
}

/**
 * A request from a client that cannot send headers: a WebSocket upgrade (Clash dashboards) or an
 * EventSource (the window's event stream, Accept: text/event-stream). Only these may carry the
 * token in the query (`?token=`): anywhere else it would land in logs, history and Referer headers.
 */
export function mayCarryQueryToken(headers: IncomingHttpHeaders): boolean {
  if ((headers.upgrade ?? '').toLowerCase() === 'websocket') return true;
  return (headers.accept ?? '').toLowerCase().includes('text/event-stream');
}

function tokenOf(headers: IncomingHttpHeaders, url: URL): { token: string | null; misplaced: boolean } {
  const auth = headers.authorization;
  if (auth?.startsWith('Bearer ')) return { token: auth.slice(7).trim(), misplaced: false };
  const query = url.searchParams.get('token');
  if (query === null) return { token: null, misplaced: false };
  return mayCarryQueryToken(headers) ? { token: query, misplaced: false } : { token: null, misplaced: true };
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * DNS-rebinding and cross-site defence, then the token. Host must name the API itself; an Origin
 * (sent by browsers on cross-origin and on non-GET requests) must be the API's own or allow-listed.
 */
export function checkAccess(
  headers: IncomingHttpHeaders,
  url: URL,
  policy: AccessPolicy,
  opts: { tokenless?: boolean } = {},
): AccessVerdict {
  const host = (headers.host ?? '').toLowerCase();
  if (!policy.isOwnHost(host))
    return {
      ok: false,
      status: 403,
      error: 'GH_ERR_API_HOST',
      message: `Host "${host}" is not this API (DNS rebinding defence; a name of this machine goes in adminHosts)`,
    };
  const origin = headers.origin ?? null;
  if (origin !== null) {
    if (!isOwnOrigin(origin, policy) && !policy.allowedOrigins.has(origin))
      return { ok: false, status: 403, error: 'GH_ERR_API_ORIGIN', message: `origin ${origin} is not allowed` };
  }
  // A CORS preflight carries no token: it is judged on Host and Origin alone.
  if (opts.tokenless) return { ok: true, origin };
  const { token, misplaced } = tokenOf(headers, url);
  if (misplaced)
    return {
      ok: false,
      status: 401,
      error: 'GH_ERR_API_UNAUTHORIZED',
      message:
        'send the token in an Authorization: Bearer header (?token= is taken only by WebSocket and event streams)',
    };
  if (token === null)
    return { ok: false, status: 401, error: 'GH_ERR_API_UNAUTHORIZED', message: 'a bearer token is required' };
  if (!sameToken(token, policy.token))
    return { ok: false, status: 401, error: 'GH_ERR_API_UNAUTHORIZED', message: 'wrong token' };
  return { ok: true, origin };
}

/**
 * What may start programs (`POST /capture/run`) or hand out a capture key (`POST
 * /capture/sessions`): a client on this machine (`from`: its TCP address, or `socket` for the
 * core's Unix socket, which only this user's processes reach), and in a browser only the API's own
 * pages (the window, /ui): never a dashboard from an allow-listed origin, whose token lets it steer
 * the proxy but must not let it run commands on the user's machine.
 */
export function mayStartPrograms(
  headers: IncomingHttpHeaders,
  from: string | undefined,
  policy: AccessPolicy,
): AccessVerdict {
  const remote = (from ?? '').replace(/^::ffff:/, '');
  if (remote !== 'socket' && remote !== '127.0.0.1' && remote !== '::1')
    return {
      ok: false,
      status: 403,
      error: 'GH_ERR_API_ORIGIN',
      message: 'programs are started only for clients on this machine',
    };
  const origin = headers.origin ?? null;
  if (origin !== null && !isOwnOrigin(origin, policy))
    return {
      ok: false,
      status: 403,
      error: 'GH_ERR_API_ORIGIN',
      message: `origin ${origin} may use the API but not start programs`,
    };
  return { ok: true, origin };
}
