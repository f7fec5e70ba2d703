import type { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { refusedAddress } from '../../core/reach/index.js';
import { guardedDialer, type Dialer } from '../../core/reach/index.js';

/** A dialer that records where it was asked to go (a fake: the guard's decisions are what is tested). */
function recording(via: Dialer['via']): Dialer & { dialled: string[] } {
  const dialled: string[] = [];
  return {
    via,
    dialled,
    dial: (host, port) => {
      dialled.push(`${host}:${port}`);
      return Promise.resolve({} as Duplex);
    },
  };
}

const signal = new AbortController().signal;

describe('a mirror URL (someone else chose it) is never dialled at this machine or the LAN (#34)', () => {
  it('refuses literal local addresses and local names before dialling', async () => {
    const inner = recording('direct');
    const g = guardedDialer(inner);
    for (const host of ['127.0.0.1', '::1', '169.254.169.254', '10.0.0.1', 'localhost', 'x.localhost'])
      await expect(g.dial(host, 80, signal)).rejects.toThrow(/a list source may not point there/);
    expect(inner.dialled).toEqual([]);
  });

  it('resolves a name itself, refuses it when any address is local, and dials the address it checked', async () => {
    const inner = recording('direct');
    const dns: Record<string, string[]> = {
      'rebind.example': ['203.0.113.5', '127.0.0.1'],
      'ok.example': ['203.0.113.6'],
    };
    const g = guardedDialer(
      inner,
      (ip) => refusedAddress(ip, false),
      (h) => Promise.resolve((dns[h] ?? []).map((address) => ({ address }))),
    );
    await expect(g.dial('rebind.example', 80, signal)).rejects.toThrow(/loopback address \(127\.0\.0\.1\)/);
    await g.dial('ok.example', 8080, signal);
    expect(inner.dialled).toEqual(['203.0.113.6:8080']);
  });

  it('lets the far side resolve names through a tunnel or the upstream proxy, still refusing local literals', async () => {
    const inner = recording('upstream');
    const g = guardedDialer(inner, undefined, () => Promise.reject(new Error('not asked')));
    await g.dial('mirror.example', 80, signal);
    await expect(g.dial('127.0.0.1', 80, signal)).rejects.toThrow(/loopback/);
    expect(inner.dialled).toEqual(['mirror.example:80']);
  });
});

describe('a mirror name through an upstream proxy on this machine or the LAN (#47)', () => {
  const dns: Record<string, string[]> = {
    '127.0.0.1.nip.io': ['127.0.0.1'],
    '10.0.0.1.nip.io': ['10.0.0.1'],
    'mirror.example': ['203.0.113.7'],
  };
  const resolve = (h: string): Promise<{ address: string }[]> =>
    dns[h] ? Promise.resolve(dns[h].map((address) => ({ address }))) : Promise.reject(new Error('ENOTFOUND'));

  it('resolves the name here and refuses one that points at this machine or the LAN', async () => {
    const inner = { ...recording('upstream'), resolvesNearby: true };
    const g = guardedDialer(inner, undefined, resolve);
    await expect(g.dial('127.0.0.1.nip.io', 80, signal)).rejects.toThrow(
      /127\.0\.0\.1\.nip\.io is a name for a loopback address/,
    );
    await expect(g.dial('10.0.0.1.nip.io', 80, signal)).rejects.toThrow(/a list source may not point there/);
    expect(inner.dialled).toEqual([]);
  });

  it('dials the name (the proxy resolves it) when it checks out, or when only the proxy can resolve it', async () => {
    const inner = { ...recording('upstream'), resolvesNearby: true };
    const g = guardedDialer(inner, undefined, resolve);
    await g.dial('mirror.example', 443, signal);
    await g.dial('only-the-proxy-knows.example', 443, signal);
    expect(inner.dialled).toEqual(['mirror.example:443', 'only-the-proxy-knows.example:443']);
  });

  it('an upstream dialer says whether it resolves nearby from where the proxy is', async () => {
    const { upstreamDialer } = await import('../../core/reach/direct-dialer.js');
    const { parseUpstreamUrl } = await import('../../core/reach/index.js');
    expect(upstreamDialer(parseUpstreamUrl('socks5://127.0.0.1:1081')).resolvesNearby).toBe(true);
    expect(upstreamDialer(parseUpstreamUrl('http://192.168.1.2:3128')).resolvesNearby).toBe(true);
    expect(upstreamDialer(parseUpstreamUrl('socks5://203.0.113.9:1080')).resolvesNearby).toBe(false);
  });
});
