import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { statusSchema, type Status } from '../../core/api/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { until } from '../helpers/fds.js';
import { GatehopProcess } from '../helpers/gatehop-process.js';
import { mrsChainBombPayload } from '../helpers/mrs-writer.js';
import { isRoot } from '../helpers/netns.js';
import { freePort } from '../helpers/ports.js';

/** The peak resident size of a process so far (VmHWM), in MiB. */
function peakRssMib(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

/**
 * #59's mrs bomb against a running core, as a rule provider would serve it: 182 bytes of zstd
 * whose trie spells 538 MB of names. The core used to build every name before its count check, on
 * the main loop, and kept no copy of a set that failed, so each start fetched it and grew again.
 */
describe.skipIf(!isRoot)('an mrs bomb from a rule provider, against the running core (#59)', () => {
  let server: Server | null = null;
  let core: GatehopProcess | null = null;
  const dir = mkdtempSync(join(tmpdir(), 'gh-mrs-bomb-'));
  afterAll(async () => {
    await core?.stop();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('is refused with its sizes in /status, the core’s peak RSS bounded, and the core serving on', async () => {
    const bomb = execFileSync('zstd', ['-q', '-19', '-c'], {
      input: mrsChainBombPayload(4096, 512),
      maxBuffer: 64 << 20,
    });
    let fetches = 0;
    server = createServer((_q, res) => {
      fetches++;
      res.end(bomb);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ads.mrs`;
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        mode: 'rule',
        rules: ['RULE-SET,ads,REJECT', 'MATCH,DIRECT'],
        ruleProviders: { ads: { type: 'http', behavior: 'domain', format: 'mrs', url, interval: 3600 } },
      }),
    );
    const admin = await freePort();
    core = new GatehopProcess(dir, [
      ...['--egress', 'direct', '--listen', `127.0.0.1:${await freePort()}`, '--admin', `127.0.0.1:${admin}`],
      ...['--data-dir', dir, '--config', config, '--log-file', join(dir, 'gatehop.log')],
    ]);
    await core.ready();
    const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
    const status = async (): Promise<Status> =>
      statusSchema.parse((await apiRequest(admin, 'GET', '/status', { token })).json());
    const error = await until(
      async () => (await status()).routing?.errors.find((e) => e.source === 'rule set ads'),
      30_000,
      'the bomb named as the set’s error',
    );
    expect(fetches).toBeGreaterThanOrEqual(1);
    expect(error.message).toMatch(/2097152 names in 537919488 bytes: more than a rule set may hold/);
    // Node and the core at rest take ~100 MiB here; reading the bomb adds its payload and the
    // trie's arrays (~16 MB), never the half a gigabyte of names.
    const peak = peakRssMib(core.child.pid!);
    console.log(`peak RSS after the bomb: ${peak.toFixed(0)} MiB`);
    expect(peak, `peak RSS ${peak.toFixed(0)} MiB`).toBeLessThan(320);
    // Still serving: the API answers, and asking for the set again refuses it again without growing.
    const again = await apiRequest(admin, 'POST', '/routing/rule-sets/ads/refresh', { token });
    expect(again.status, again.text).toBeLessThan(500);
    await until(async () => (fetches >= 2 ? true : undefined), 20_000, 'the second fetch');
    expect((await status()).routing?.errors.some((e) => e.source === 'rule set ads')).toBe(true);
    expect(peakRssMib(core.child.pid!)).toBeLessThan(320);
    expect(core.child.exitCode).toBeNull();
  }, 120_000);
});
