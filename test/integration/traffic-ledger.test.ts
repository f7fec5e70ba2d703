/**
 * Where the bytes went (#64), through the real proxy: what curl moved over SOCKS5 and HTTP is what
 * the ledger counts (by route, rule and program, exactly: the proxy counts payload, not its own
 * handshake), a refused flow is listed with how it ended, the closed list stays at its size under a
 * flood of short connections, the CSV export reads back as the totals, the metrics agree, and
 * Erase forgets it all. The admin API answers each question as the window asks it.
 */
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClosedConnections, Status, TrafficSummaryView } from '../../core/api/index.js';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';
import { CSV_COLUMNS } from '../../core/traffic/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { curl } from '../helpers/curl.js';
import { runGatehop } from '../helpers/gatehop-process.js';
import { makeBlob, startHttpServer, type TestHttpServer } from '../helpers/servers.js';
import { socksConnect } from '../helpers/socks-client.js';

describe.runIf(process.platform === 'linux')('the traffic ledger through the real proxy (#64)', () => {
  let app: RunningApp;
  let web: TestHttpServer;
  let api = 0;
  let token = '';
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-traffic-'));
  const get = async <T>(path: string): Promise<T> => {
    const r = await apiRequest(api, 'GET', path, { token });
    expect(r.status, r.text).toBe(200);
    return r.json<T>();
  };
  /** curl through the proxy; returns what crossed it: the request up, the response's head and body down. */
  const fetchVia = async (proxyArgs: string[], path = '/blob'): Promise<{ up: number; down: number }> => {
    const c = await curl([
      ...proxyArgs,
      '-o',
      '/dev/null',
      '-w',
      '%{size_request} %{size_header} %{size_download}',
      `http://127.0.0.1:${web.port}${path}`,
    ]);
    expect(c.code, c.stderr).toBe(0);
    const [req, head, body] = c.stdout.toString().split(' ').map(Number) as [number, number, number];
    return { up: req, down: head + body };
  };

  beforeAll(async () => {
    web = await startHttpServer(makeBlob(3 * 1024 * 1024, 7));
    const config = buildConfig(
      {},
      {
        egress: 'direct',
        listen: '127.0.0.1:0',
        admin: '127.0.0.1:0',
        dataDir,
        logFile: 'off',
        mode: 'rule',
        rules: ['DOMAIN,blocked.test,REJECT', 'PROCESS-NAME,curl,DIRECT', 'MATCH,DIRECT'],
      },
    );
    app = await startApp(config, silentLogger());
    api = app.listening.admin!.port;
    token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  });
  afterAll(async () => {
    await app.stop();
    await web.close();
  });

  it('counts what curl moved, by route, rule and program, to the byte', async () => {
    const proxy = `127.0.0.1:${app.listening.proxy.port}`;
    const moved = [
      await fetchVia(['--socks5-hostname', proxy]),
      await fetchVia(['--socks5', proxy]),
      await fetchVia(['--socks5-hostname', proxy]),
    ];
    const up = moved.reduce((n, m) => n + m.up, 0);
    const down = moved.reduce((n, m) => n + m.down, 0);
    expect(down).toBeGreaterThan(9 * 1024 * 1024);
    await expect.poll(() => app.traffic.today().down).toBe(down);
    const s = await get<TrafficSummaryView>('/traffic/summary?days=1');
    expect(s.total).toEqual({ up, down, flows: 3 });
    expect(s.byRoute).toEqual([{ key: 'DIRECT', label: 'DIRECT', up, down, flows: 3 }]);
    expect(s.byRule).toEqual([{ key: 'PROCESS-NAME,curl', label: 'PROCESS-NAME,curl', up, down, flows: 3 }]);
    expect(s.byProgram.map((p) => [p.key, p.down])).toEqual([['curl', down]]);
    expect(s.byNode.map((p) => p.key)).toEqual(['']);
    expect(s.byNetwork).toHaveLength(1);
    expect(s.byNetwork[0]!.label).not.toBe('');
    expect(s.days).toEqual([{ day: s.to, tunnel: 0, direct: up + down, up, down }]);
    // Nothing went through a node here: the volunteers' view is empty.
    expect((await get<TrafficSummaryView>('/traffic/summary?days=1&nodesOnly=true')).total.flows).toBe(0);
    const status = await get<Status>('/status');
    expect(status.trafficToday).toMatchObject({ up, down, tunnel: 0 });
    const metrics = (await apiRequest(api, 'GET', '/metrics', { token })).text;
    expect(metrics).toContain(`gatehop_flow_bytes_total{route="DIRECT",direction="down"} ${down}`);
    // The export reads back as the same totals.
    const { csv, filename } = await get<{ csv: string; filename: string }>('/traffic/export?days=1');
    expect(filename).toMatch(/^gatehop-traffic-\d{4}-\d\d-\d\d-to-\d{4}-\d\d-\d\d\.csv$/);
    const rows = parse(csv, { columns: true }) as Array<Record<string, string>>;
    expect(rows.reduce((n, r) => n + Number(r.bytes_down), 0)).toBe(down);
    expect(rows.reduce((n, r) => n + Number(r.connections), 0)).toBe(3);
  });

  it('`gatehop traffic` prints the same on a box without a window, and --csv the rows', async () => {
    const text = await runGatehop(['traffic', '--days', '1', '--data-dir', dataDir]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/ 3 connections/);
    expect(text.stdout).toMatch(/by rule\n {2}PROCESS-NAME,curl/);
    expect(text.stdout).toMatch(/by program\n {2}curl/);
    expect(text.stdout).toContain('counted in memory only');
    const csv = await runGatehop(['traffic', '--csv', '--data-dir', dataDir]);
    expect(csv.stdout.split('\r\n')[0]).toBe(CSV_COLUMNS.join(','));
    expect((await runGatehop(['traffic', '--days', '0', '--data-dir', dataDir])).code).toBe(2);
  });

  it('lists a refused flow with its host, rule and how it ended, found by a search', async () => {
    const c = await curl(['--socks5-hostname', `127.0.0.1:${app.listening.proxy.port}`, 'http://blocked.test/']);
    expect(c.code).not.toBe(0);
    await expect
      .poll(async () => (await get<ClosedConnections>('/traffic/closed?q=blocked.test')).connections.length)
      .toBe(1);
    const [r] = (await get<ClosedConnections>('/traffic/closed?q=blocked.test')).connections;
    expect(r).toMatchObject({
      host: 'blocked.test',
      port: 80,
      route: 'REJECT',
      rule: 'DOMAIN',
      rulePayload: 'blocked.test',
      end: 'refused',
      nodeId: null,
      listener: 'local',
      kind: 'socks5',
    });
    expect(r!.endedAt).toBeGreaterThanOrEqual(r!.startedAt);
  });

  it('keeps the closed list at its size under a flood of short connections, and counts every one', async () => {
    const bad = await apiRequest(api, 'PUT', '/traffic/options', { token, body: { retentionDays: 0 } });
    expect(bad.status, bad.text).toBe(400);
    const set = await apiRequest(api, 'PUT', '/traffic/options', { token, body: { closedMax: 100 } });
    expect(set.status, set.text).toBe(200);
    const before = app.traffic.summary(1, false).total.flows;
    const flood = 600;
    for (let i = 0; i < flood; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          const { client } = await socksConnect(app.listening.proxy.port, '127.0.0.1', web.port);
          client.destroy();
        }),
      );
    await expect.poll(() => app.traffic.summary(1, false).total.flows, { timeout: 10_000 }).toBe(before + flood);
    const closed = await get<ClosedConnections>('/traffic/closed?limit=10000');
    expect(closed.max).toBe(100);
    expect(closed.held).toBe(100);
    expect(closed.connections).toHaveLength(100);
    expect(app.proxy.sessions.size).toBe(0);
  });

  it('forgets everything when the user erases it', async () => {
    const r = await apiRequest(api, 'DELETE', '/traffic/ledger', { token });
    expect(r.status).toBe(204);
    const s = await get<TrafficSummaryView>('/traffic/summary?days=30');
    expect(s.total).toEqual({ up: 0, down: 0, flows: 0 });
    expect(s.persistent).toBe(false);
    expect((await get<ClosedConnections>('/traffic/closed')).connections).toEqual([]);
    expect((await get<Status>('/status')).trafficToday).toMatchObject({ up: 0, down: 0 });
  });
});
