import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig, startApp, type ConfigInput } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';
import { until } from '../helpers/fds.js';
import { writeGeoSite } from '../helpers/geosite-writer.js';
import { writeMrsDomains } from '../helpers/mrs-writer.js';
import { startEchoServer, type TestTcpServer } from '../helpers/servers.js';
import { socksConnect } from '../helpers/socks-client.js';

describe('GEOSITE rules on real SOCKS5 flows: the data fetched once, kept, and read again without network (#45)', () => {
  let server: Server;
  let echo: TestTcpServer;
  let url = '';
  let served = 0;
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-geosite-'));
  const fromFile = (): ConfigInput => ({
    mode: 'rule',
    rules: ['GEOSITE,blocked,REJECT', 'GEOSITE,nosuchlist,REJECT', 'MATCH,DIRECT'],
    geosite: { url },
  });
  const fromFlags: ConfigInput = { egress: 'direct', listen: '127.0.0.1:0', admin: 'off', logFile: 'off', dataDir };

  beforeAll(async () => {
    echo = await startEchoServer();
    const dat = writeGeoSite({
      blocked: [
        { type: 'domain', value: 'ads.example' },
        { type: 'full', value: 'tracker.test' },
      ],
    });
    server = createServer((_q, res) => {
      served++;
      res.end(Buffer.from(dat));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/geosite.dat`;
  });
  afterAll(async () => {
    await echo.close();
    if (server.listening) await new Promise<void>((r) => server.close(() => r()));
  });

  it('refuses a listed name, lets another through, and names a list the data lacks', async () => {
    const app = await startApp(buildConfig(fromFile(), fromFlags), silentLogger(), {});
    try {
      const st = await until(
        () => (app.routing.status().geosite?.loaded ? app.routing.status() : undefined),
        10_000,
        'GEOSITE data loaded',
      );
      expect(st.geosite).toMatchObject({ lists: 1, error: null, url });
      expect(st.errors.map((e) => e.message)).toContain('geosite.dat has no list named "nosuchlist"');
      const refused = await socksConnect(app.listening.proxy.port, 'x.ads.example', 443);
      expect(refused.reply[1]).toBe(0x02); // "not allowed by ruleset"
      refused.client.destroy();
      const ok = await socksConnect(app.listening.proxy.port, 'localhost', echo.port);
      expect(ok.reply[1]).toBe(0x00);
      ok.client.write(Buffer.from('ping'));
      expect((await ok.client.read(4)).toString()).toBe('ping');
      ok.client.destroy();
      expect(existsSync(join(dataDir, 'geosite.dat'))).toBe(true);
    } finally {
      await app.stop();
    }
  });

  it('a restart with the server gone reads the kept copy: GEOSITE rules hold at once', async () => {
    await new Promise<void>((r) => server.close(() => r()));
    const before = served;
    const app = await startApp(buildConfig(fromFile(), fromFlags), silentLogger(), {});
    try {
      await until(
        () => app.routing.status().geosite?.loaded || undefined,
        10_000,
        'GEOSITE data read from the kept copy',
      );
      const refused = await socksConnect(app.listening.proxy.port, 'tracker.test', 443);
      expect(refused.reply[1]).toBe(0x02);
      refused.client.destroy();
      expect(served).toBe(before);
    } finally {
      await app.stop();
    }
  });
});

describe('an mrs rule set from a URL: fetched as bytes, kept byte for byte, routing real flows (#45)', () => {
  it('REJECTs the names the binary set lists; the kept copy is the file as served', async () => {
    const mrs = writeMrsDomains(['+.ads.example', 'tracker.test']);
    const server = createServer((_q, res) => res.end(mrs));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ads.mrs`;
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-mrs-'));
    const app = await startApp(
      buildConfig(
        {
          mode: 'rule',
          rules: ['RULE-SET,ads,REJECT', 'MATCH,DIRECT'],
          ruleProviders: { ads: { type: 'http', behavior: 'domain', url, interval: 86_400 } },
        },
        { egress: 'direct', listen: '127.0.0.1:0', admin: 'off', logFile: 'off', dataDir },
      ),
      silentLogger(),
      {},
    );
    try {
      const st = await until(
        () => app.routing.status().ruleSets.find((s) => s.entries > 0),
        10_000,
        'the mrs set fetched',
      );
      expect(st).toMatchObject({ name: 'ads', format: 'mrs', entries: 3, error: null });
      expect(readFileSync(join(dataDir, 'rule-sets', 'ads.mrs')).equals(mrs)).toBe(true);
      const refused = await socksConnect(app.listening.proxy.port, 'x.ads.example', 443);
      expect(refused.reply[1]).toBe(0x02);
      refused.client.destroy();
    } finally {
      await app.stop();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
