import { isIP } from 'node:net';
import { ErrorCodes, GatehopError } from './errors.js';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

/** Parses `HOST:PORT`, `[V6]:PORT` or `:PORT` (all interfaces). */
export function parseEndpoint(text: string, what = 'address'): Endpoint {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `${what} "${text}" is not HOST:PORT`);
  }
  const host = m[1] ?? (m[2] === '' ? '0.0.0.0' : m[2]!);
  if (m[1] !== undefined && isIP(host) !== 6) {
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `${what} "${text}": brackets hold an IPv6 address only`);
  }
  return { host, port };
}

export function formatEndpoint(ep: Endpoint): string {
  return isIP(ep.host) === 6 ? `[${ep.host}]:${ep.port}` : `${ep.host}:${ep.port}`;
}

/** True for addresses only this machine can reach (127/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  if (host.startsWith('::ffff:')) return isLoopbackHost(host.slice(7));
  return isIP(host) === 4 && host.startsWith('127.');
}

/** A listen address that means every interface (`0.0.0.0`, `::`, or none given). */
export function isWildcardHost(host: string): boolean {
  return host === '' || host === '0.0.0.0' || unbracket(host) === '::';
}

/** A host as URLs and `host:port` text write it: an IPv6 literal in brackets (`::1` → `[::1]`). */
export function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** `host:port`, an IPv6 literal in brackets. */
export function hostPort(host: string, port: number): string {
  return `${bracketed(host)}:${port}`;
}

/** A host as URLs and `host:port` text write it, without the brackets around an IPv6 literal (`[::1]` → `::1`). */
export function unbracket(host: string): string {
  return host.replace(/^\[|\]$/g, '');
}
