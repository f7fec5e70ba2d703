import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { raceSources } from '../../core/vpngate/index.js';
import { directDialer } from '../../core/reach/index.js';

describe("the tests' network guard (test/setup/network-guard.ts)", () => {
  it('refuses a socket to an address outside loopback and the rig, before any packet', async () => {
    const s = connect({ host: '203.0.113.1', port: 443 });
    await expect(new Promise((_, reject) => s.once('error', reject))).rejects.toThrow(/network guard/);
  });

  it('so a list fetch that forgot --api cannot reach the real VPN Gate', async () => {
    const r = await raceSources({
      sources: [{ url: 'https://www.vpngate.net/api/iphone/', kind: 'official' }],
      dialer: directDialer(),
      timeoutMs: 2_000,
      maxBytes: 1 << 20,
      staggerMs: 100,
      concurrency: 1,
      signal: new AbortController().signal,
      logger: silentLogger(),
    });
    expect(r.winner).toBeNull();
    expect(r.attempts[0]?.error).toMatch(/ENETUNREACH/); // the guard's refusal, before any lookup
  });
});
