import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, get as httpGet, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingsResultSchema, statusSchema } from '../../core/api/index.js';
import { buildConfig, startApp, type ConfigInput, type RunningApp } from '../../core/app/index.js';
import { RoutingState } from '../../core/router/index.js';
import { silentLogger } from '../../core/common/index.js';
import { directDialer } from '../../core/reach/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { until } from '../helpers/fds.js';
import { startEchoServer, type TestTcpServer } from '../helpers/servers.js';
import { socksConnect } from '../helpers/socks-client.js';

describe('a reload swaps the rule table without touching open flows (#33)', () => {
  let app: RunningApp;
  let echo: TestTcpServer;
  const fromFile: ConfigInput = { mode: 'rule', rules: ['MATCH,DIRECT'] };
  const fromFlags: ConfigInput = {
    egress: 'direct',
    listen: '127.0.0.1:0',
    admin: 'off',
    logFile: 'off',
    dataDir: mkdtempSync(join(tmpdir(), 'gh-route-reload-')),
  };
  beforeAll(async () => {
    echo = await startEchoServer();
    app = await startApp(buildConfig(fromFile, fromFlags), silentLogger(), {
      layers: { fromFile, fromFlags },
      readLayers: () => ({ fromFile, fromFlags }),
    });
  });
  afterAll(async () => {
    await app.stop();
    await echo.close();
  });

  it('serves its PAC script at /proxy.pac on the proxy port, made from the table in use (#33)', async () => {
    const res = await fetch(`http://127.0.0.1:${app.listening.proxy.port}/proxy.pac`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ns-proxy-autoconfig');
    const text = await res.text();
    expect(text).toMatch(/^\/\/ Made by Gatehop/);
    expect(text).toContain(`PROXY 127.0.0.1:${app.listening.proxy.port}`);
    expect(text).toContain('return "DIRECT";'); // MATCH,DIRECT
  });

  it('answers /proxy.pac without proxy credentials where they are required, and nothing else (#45)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-pac-auth-'));
    const users = join(dir, 'users');
    const salt = '00112233';
    writeFileSync(
      users,
      `carol:${salt}:${createHash('sha256')
        .update(salt + 'hunter2')
        .digest('hex')}\n`,
    );
    const input: ConfigInput = { ...fromFlags, dataDir: dir, authFile: users };
    const authed = await startApp(buildConfig(fromFile, input), silentLogger(), {});
    try {
      const at = `http://127.0.0.1:${authed.listening.proxy.port}`;
      // The OS fetches the PAC file with no Proxy-Authorization: a 407 would send browsers DIRECT.
      const pac = await fetch(`${at}/proxy.pac`);
      expect(pac.status).toBe(200);
      expect(await pac.text()).toMatch(/^\/\/ Made by Gatehop/);
      // Anything else still asks for credentials (fetch() turns a 407 into a network error: node:http).
      const status = await new Promise<number | undefined>((resolve, reject) =>
        httpGet(`${at}/`, (res) => {
          res.resume();
          resolve(res.statusCode);
        }).once('error', reject),
      );
      expect(status).toBe(407);
    } finally {
      await authed.stop();
    }
  });

  it('an open flow keeps the decision it was opened with; the next one gets the new table', async () => {
    const open = await socksConnect(app.listening.proxy.port, '127.0.0.1', echo.port);
    expect(open.reply[1]).toBe(0x00);
    fromFile.rules = ['IP-CIDR,127.0.0.0/8,REJECT,no-resolve', 'MATCH,DIRECT'];
    const r = await app.reload();
    expect(r.applied).toContain('rules');
    // The open flow still echoes.
    open.client.write(Buffer.from('still here'));
    expect((await open.client.read(10)).toString()).toBe('still here');
    open.client.destroy();
    const next = await socksConnect(app.listening.proxy.port, '127.0.0.1', echo.port);
    expect(next.reply[1]).toBe(0x02);
    next.client.destroy();
  });
});

describe('rule sets from a URL: kept on disk, refreshed, junk refused with the last good copy kept (#33)', () => {
  let server: Server;
  let body: string | (() => void) = 'payload:\n  - "+.example.ir"\n  - "cdn.example"\n';
  let url = '';
  beforeAll(async () => {
    server = createServer((_q, res) => {
      if (typeof body === 'function') return body();
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/domestic.yaml`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const config = (dataDir: string) =>
    buildConfig(
      {
        mode: 'rule',
        rules: ['RULE-SET,domestic,DIRECT', 'MATCH,TUNNEL'],
        ruleProviders: { domestic: { type: 'http', behavior: 'domain', url, interval: 3600 } },
      },
      { egress: 'direct', dataDir, logFile: 'off' },
    );

  it('fetches at start, keeps the copy, refuses HTML and garbage keeping what it had, and a restart needs no network', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-rule-sets-'));
    const routing = new RoutingState(config(dataDir), silentLogger(), () => [directDialer()]);
    try {
      expect(routing.status().ruleSets[0]).toMatchObject({ name: 'domestic', entries: 0, updatedAt: null });
      await routing.refresh('domestic');
      expect(routing.status().ruleSets[0]).toMatchObject({ entries: 2, error: null });
      expect(routing.table().decide({ network: 'tcp', host: 'shop.example.ir', port: 443 })).toMatchObject({
        decision: { target: 'DIRECT', rule: 'RULE-SET', payload: 'domestic' },
      });
      expect(readdirSync(join(dataDir, 'rule-sets'))).toEqual(['domestic.yaml']);
      body = '<html>captive portal</html>';
      expect(await routing.refresh('domestic')).toMatchObject({
        entries: 2,
        error: expect.stringMatching(/HTML page/),
      });
      body = 'payload: [';
      expect(await routing.refresh('domestic')).toMatchObject({ entries: 2, error: expect.stringMatching(/not YAML/) });
      expect(routing.table().decide({ network: 'tcp', host: 'shop.example.ir', port: 443 })).toMatchObject({
        decision: { target: 'DIRECT' },
      });
    } finally {
      routing.close();
    }
    // A restart with the site gone: the kept copy is in use at once.
    await new Promise<void>((r) => server.close(() => r()));
    const again = new RoutingState(config(dataDir), silentLogger(), () => [directDialer()]);
    try {
      expect(again.status().ruleSets[0]).toMatchObject({ entries: 2 });
      expect(again.table().decide({ network: 'tcp', host: 'cdn.example', port: 443 })).toMatchObject({
        decision: { target: 'DIRECT' },
      });
    } finally {
      again.close();
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    }
  });
});

describe("the country preset's domestic list: saved with the settings, applied live, read as what it is (#33)", () => {
  let app: RunningApp;
  let server: Server;
  let base = '';
  let port = 0;
  let token = '';
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-route-preset-'));
  const fromFile: ConfigInput = {};
  const fromFlags: ConfigInput = {
    egress: 'direct',
    listen: '127.0.0.1:0',
    admin: '127.0.0.1:0',
    logFile: 'off',
    dataDir,
  };
  beforeAll(async () => {
    // As Loyalsoldier's direct.txt is published: a YAML `payload:` list under a .txt name; and a plain text list.
    server = createServer((req, res) =>
      res.end(
        req.url === '/direct.txt'
          ? '# built daily\npayload:\n  - "+.shop.example"\n  - "bank.example"\n'
          : '+.news.example\n# a comment\nmaps.example\n',
      ),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    app = await startApp(buildConfig(fromFile, fromFlags), silentLogger(), { layers: { fromFile, fromFlags } });
    port = app.listening.admin!.port;
    token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  });
  afterAll(async () => {
    await app.stop();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('PUT /settings {rules, ruleProviders} takes effect without a restart; a YAML list named .txt is read as YAML, a text one as text', async () => {
    const ruleProviders = {
      'cn-domestic': { type: 'http', behavior: 'domain', url: `${base}/direct.txt`, interval: 86_400 },
      plain: { type: 'http', behavior: 'domain', url: `${base}/plain.txt`, interval: 86_400 },
    };
    const put = await apiRequest(port, 'PUT', '/settings', {
      token,
      body: { rules: ['RULE-SET,cn-domestic,REJECT', 'RULE-SET,plain,REJECT', 'MATCH,DIRECT'], ruleProviders },
    });
    expect(put.status).toBe(200);
    expect(settingsResultSchema.parse(put.json())).toMatchObject({ restartRequired: [], settings: { ruleProviders } });
    const sets = await until(
      async () => {
        const s = statusSchema.parse((await apiRequest(port, 'GET', '/status', { token })).json()).routing!.ruleSets;
        return s.length === 2 && s.every((x) => x.entries > 0) ? s : undefined;
      },
      10_000,
      'both rule sets loaded',
    );
    expect(sets.map((s) => [s.name, s.format, s.entries, s.badLines])).toEqual([
      ['cn-domestic', 'yaml', 2, 0],
      ['plain', 'text', 2, 0],
    ]);
    for (const host of ['www.shop.example', 'bank.example', 'a.news.example', 'maps.example']) {
      const c = await socksConnect(app.listening.proxy.port, host, 443);
      expect([host, c.reply[1]]).toEqual([host, 0x02]);
      c.client.destroy();
    }
    // Kept where the next start finds it.
    expect(JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')).settings.ruleProviders).toEqual(
      ruleProviders,
    );
  });
});
