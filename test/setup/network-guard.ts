/**
 * Tests may only talk to loopback and to hosts in namespaces they made (the rig's 10.x ranges).
 * This guard makes `fetch` refuse anything else at once, so a missing --api in a test fails loudly
 * instead of reaching the real VPN Gate.
 */
import { isIP, Socket } from 'node:net';

const realFetch = globalThis.fetch;

function allowed(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && (host.startsWith('127.') || host.startsWith('10.'));
}

globalThis.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  if (!allowed(url.hostname)) return Promise.reject(new Error(`network guard: tests may not fetch ${url.host}`));
  return realFetch(input, init);
};

/**
 * Node's own sockets too (the list fetcher, tunnels, probes use them, not fetch): a connect to
 * anything but loopback, the rig's 10.x ranges or a local path fails at once, before any packet.
 */
const realConnect = Socket.prototype.connect;
Socket.prototype.connect = function guardedConnect(this: Socket, ...args: unknown[]): Socket {
  const first = args[0];
  const opts = (Array.isArray(first) ? first[0] : first) as
    { host?: string; port?: number; path?: string } | number | string | undefined;
  const host =
    typeof opts === 'object' && opts !== null
      ? opts.path
        ? null
        : (opts.host ?? 'localhost')
      : typeof opts === 'number'
        ? typeof args[1] === 'string'
          ? args[1]
          : 'localhost'
        : null;
  if (host !== null && !allowed(host)) {
    const err = Object.assign(new Error(`network guard: tests may not connect to ${host}`), { code: 'ENETUNREACH' });
    process.nextTick(() => this.destroy(err));
    return this;
  }
  return realConnect.apply(this, args as Parameters<typeof realConnect>);
} as typeof Socket.prototype.connect;
