import type { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { refusedAddress } from '../../core/common/index.js';
import { guardedDialer, type Dialer } from '../../core/vpngate/index.js';

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
