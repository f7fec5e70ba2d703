/**
 * Tests may only talk to loopback and to hosts in namespaces they made (the rig's 10.x ranges).
 * This guard makes `fetch` refuse anything else at once, so a missing --api in a test fails loudly
 * instead of reaching the real VPN Gate.
 */
import { isIP } from 'node:net';

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
