import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig } from '../../core/app/index.js';
import { RoutingState } from '../../core/router/index.js';
import { silentLogger } from '../../core/common/index.js';
import { directDialer } from '../../core/reach/index.js';
import { until } from '../helpers/fds.js';

/** A rule-set server whose answers the test scripts request by request. */
async function scriptedServer(
  answer: (n: number, res: ServerResponse) => void,
): Promise<{ url: string; server: Server }> {
  let n = 0;
  const server = createServer((_q, res) => answer(++n, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/set.txt` };
}

const config = (dataDir: string, url: string) =>
  buildConfig(
    {
      mode: 'rule',
      rules: ['RULE-SET,domestic,DIRECT', 'MATCH,TUNNEL'],
      ruleProviders: { domestic: { type: 'http', behavior: 'domain', format: 'text', url, interval: 3600 } },
    },
    { egress: 'direct', dataDir, logFile: 'off' },
  );

describe('rule-set refreshes keep their schedule and their kept copy (#45 review)', () => {
  const open: Array<{ close(): void }> = [];
  afterEach(() => {
    for (const o of open.splice(0)) o.close();
  });

  it('a REJECT rule whose set never loaded is an error that says what the table does meanwhile, gone once it loads (#59)', async () => {
    let up = false;
    const { server, url } = await scriptedServer((_n, res) => {
      if (!up) {
        res.statusCode = 503;
        return res.end('busy');
      }
      res.end('+.ads.example\n');
    });
    open.push(server);
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-rs-unloaded-'));
    const routing = new RoutingState(
      buildConfig(
        {
          mode: 'rule',
          rules: ['RULE-SET,ads,REJECT', 'MATCH,TUNNEL'],
          ruleProviders: { ads: { type: 'http', behavior: 'domain', format: 'text', url, interval: 3600 } },
        },
        { egress: 'direct', dataDir, logFile: 'off' },
      ),
      silentLogger(),
      () => [directDialer()],
      { retryMs: 200 },
    );
    open.push(routing);
    routing.start();
    const error = await until(
      () => routing.status().errors.find((e) => e.source === 'rule set ads'),
      10_000,
      'the unloaded set named as an error',
    );
    expect(error).toMatchObject({
      line: 1,
      text: 'RULE-SET,ads,REJECT',
      message: expect.stringMatching(
        /^could not be loaded \(.*503.*\); until it is, this rule matches nothing: what it would block is not blocked/,
      ),
    });
    // Meanwhile the table does what it says: an ad host goes on to MATCH.
    expect(routing.table().decide({ network: 'tcp', host: 'x.ads.example', port: 443 })).toMatchObject({
      decision: { target: 'TUNNEL' },
    });
    up = true;
    await until(() => routing.status().ruleSets[0]!.entries === 1 || undefined, 10_000, 'the set loaded on retry');
    expect(routing.status().errors).toEqual([]);
    expect(routing.table().decide({ network: 'tcp', host: 'x.ads.example', port: 443 })).toMatchObject({
      decision: { target: 'REJECT' },
    });
  });

  it('a set whose refresh failed once and then succeeded on retry is back on its interval', async () => {
    const { server, url } = await scriptedServer((n, res) => {
      if (n === 1) {
        res.statusCode = 503;
        return res.end('busy');
      }
      res.end('+.example.ir\n');
    });
    open.push(server);
    const routing = new RoutingState(
      config(mkdtempSync(join(tmpdir(), 'gh-rs-retry-')), url),
      silentLogger(),
      () => [directDialer()],
      {
        retryMs: 50,
      },
    );
    open.push(routing);
    routing.start();
    await until(() => routing.status().ruleSets[0]!.entries === 1 || undefined, 10_000, 'the set fetched on retry');
    // Fetched on the retry: the next refresh is an interval (an hour) away, not never.
    await until(() => routing.status().ruleSets[0]!.nextRefreshAt ?? undefined, 5_000, 'a next refresh planned');
    const next = routing.status().ruleSets[0]!.nextRefreshAt!;
    expect(next - Date.now()).toBeGreaterThan(3_500_000);
  });

  it('a reload during a fetch: the replaced fetch, when it ends, neither writes the kept copy nor wins', async () => {
    let release: (() => void) | null = null;
    const { server, url } = await scriptedServer((n, res) => {
      // The first request (the old settings' fetch) hangs until the test lets it answer.
      if (n === 1) release = () => res.end('+.old.example\n');
      else res.end('+.new.example\n');
    });
    open.push(server);
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-rs-reload-'));
    const routing = new RoutingState(config(dataDir, url), silentLogger(), () => [directDialer()]);
    open.push(routing);
    const old = routing.refresh('domestic');
    await until(() => release ?? undefined, 5_000, 'the old fetch under way');
    // The user changes the set's settings (same name, same kept copy) while the old fetch hangs.
    const next = config(dataDir, `${url}?v=2`);
    routing.apply(next);
    await routing.refresh('domestic');
    const kept = join(dataDir, 'rule-sets', 'domestic.txt');
    expect(readFileSync(kept, 'utf8')).toBe('+.new.example\n');
    release!();
    await old;
    expect(readFileSync(kept, 'utf8')).toBe('+.new.example\n');
    expect(routing.table().decide({ network: 'tcp', host: 'a.new.example', port: 443 })).toMatchObject({
      decision: { target: 'DIRECT' },
    });
    expect(routing.table().decide({ network: 'tcp', host: 'a.old.example', port: 443 })).toMatchObject({
      decision: { target: 'TUNNEL' },
    });
  });
});

describe('a file rule set with a relative path is read from <data-dir>/rule-sets, wherever Gatehop was started (#45)', () => {
  it('loads `path: ads.txt` from the data dir, not the working directory', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-rs-relative-'));
    mkdirSync(join(dataDir, 'rule-sets'), { recursive: true });
    writeFileSync(join(dataDir, 'rule-sets', 'ads.txt'), '+.ads.example\n+.tracker.example\n');
    const config = buildConfig(
      {
        mode: 'rule',
        rules: ['RULE-SET,ads,REJECT', 'MATCH,DIRECT'],
        ruleProviders: { ads: { type: 'file', behavior: 'domain', format: 'text', path: 'ads.txt' } },
      },
      { egress: 'direct', dataDir, logFile: 'off' },
    );
    const routing = new RoutingState(config, silentLogger(), () => []);
    try {
      expect(routing.status().ruleSets[0]).toMatchObject({ name: 'ads', entries: 2, error: null });
      expect(routing.table().decide({ network: 'tcp', host: 'x.ads.example', port: 443 })).toMatchObject({
        decision: { target: 'REJECT' },
      });
    } finally {
      routing.close();
    }
  });
});
