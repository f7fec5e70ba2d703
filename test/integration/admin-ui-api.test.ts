/**
 * The admin API's routes for the window (issue #12): settings, list refresh with progress, closing
 * a draining tunnel, the system proxy, and the dashboard's files at /ui/.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exitInfoSchema,
  nodesSchema,
  nodeTestSchema,
  operations,
  refreshEventSchema,
  settingsResultSchema,
  statusSchema,
  sysproxyStateSchema,
} from '../../core/api/index.js';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';
import { apiRequest, SseReader } from '../helpers/admin-client.js';
import { until } from '../helpers/fds.js';
import { vpnGateCsv } from '../helpers/vpngate-fixtures.js';

describe('admin API for the window', () => {
  let app: RunningApp;
  let list: Server;
  let port = 0;
  let token = '';
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-ui-api-'));
  // As the CLI would have them: the listen address from the config file (the window may change it), the rest as flags.
  const fromFile = { listen: '127.0.0.1:0' };
  const fromFlags = {
    egress: 'vpngate' as const,
    admin: '127.0.0.1:0',
    dataDir,
    logFile: 'off' as const,
    api: [] as string[],
    selector: { probe: { timeoutMs: 200, samples: 1 } },
  };

  // No desktop here, whatever the developer's session: the system proxy is unsupported, deterministically.
  const desktop = process.env.XDG_CURRENT_DESKTOP;
  beforeAll(async () => {
    delete process.env.XDG_CURRENT_DESKTOP;
    if (!existsSync(join(__dirname, '../../dist/renderer/index.html')))
      throw new Error('dist/renderer is missing: run `npm run build` first (npm test does)');
    list = createServer((_req, res) => res.end(vpnGateCsv([{ host: 'public-vpn-1', ip: '127.0.0.1' }])));
    await new Promise<void>((r) => list.listen(0, '127.0.0.1', () => r()));
    fromFlags.api = [`http://127.0.0.1:${(list.address() as AddressInfo).port}/api/iphone/`];
    const config = buildConfig(fromFile, fromFlags);
    app = await startApp(config, silentLogger(), { layers: { fromFile, fromFlags }, unsafeLoopbackNodes: true });
    port = app.listening.admin!.port;
    token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  });

  afterAll(async () => {
    if (desktop !== undefined) process.env.XDG_CURRENT_DESKTOP = desktop;
    await app.stop();
    await new Promise<void>((r) => list.close(() => r()));
  });

  it('reads and saves settings, applies them live, names what needs a restart, and refuses what the next start would refuse (#15)', async () => {
    const got = settingsResultSchema.parse((await apiRequest(port, 'GET', '/settings', { token })).json());
    expect(got.settings).toMatchObject({ listen: '127.0.0.1:0', drainGraceMs: 600_000, language: 'auto' });
    const put = await apiRequest(port, 'PUT', '/settings', {
      token,
      body: { drainGraceMs: 120_000, language: 'zh-CN' },
    });
    expect(put.status).toBe(200);
    // The drain grace applies live (a reload): nothing waits for a restart.
    expect(settingsResultSchema.parse(put.json())).toMatchObject({
      settings: { drainGraceMs: 120_000, language: 'zh-CN' },
      restartRequired: [],
    });
    // The protocol order (issue #22): live, saved, and an empty or repeated one refused at the field.
    const order = await apiRequest(port, 'PUT', '/settings', { token, body: { protocols: ['sstp', 'openvpn'] } });
    expect(settingsResultSchema.parse(order.json())).toMatchObject({
      settings: { protocols: ['sstp', 'openvpn'] },
      restartRequired: [],
    });
    expect((await apiRequest(port, 'PUT', '/settings', { token, body: { protocols: [] } })).status).toBe(400);
    // The kill switch (#46): live (read when Gatehop goes away), off by default.
    expect(got.settings.killSwitch).toBe(false);
    const ks = await apiRequest(port, 'PUT', '/settings', { token, body: { killSwitch: true } });
    expect(settingsResultSchema.parse(ks.json())).toMatchObject({
      settings: { killSwitch: true },
      restartRequired: [],
    });
    expect(
      (await apiRequest(port, 'PUT', '/settings', { token, body: { protocols: ['sstp', 'sstp'] } })).json(),
    ).toMatchObject({ message: expect.stringMatching(/protocols.*at most once/) });
    // No credentials on a public address: buildConfig's own rule, said at the field.
    const bad = await apiRequest(port, 'PUT', '/settings', { token, body: { listen: '0.0.0.0:1080' } });
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({
      error: 'GH_ERR_CONFIG_INVALID',
      message: expect.stringMatching(/needs --auth-file/),
    });
    expect((await apiRequest(port, 'PUT', '/settings', { token, body: { drainGraceMs: -1 } })).status).toBe(400);
    // A listen address in use cannot be taken now: saved for the next start, and said so.
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const busy = `127.0.0.1:${(taken.address() as AddressInfo).port}`;
    expect((await apiRequest(port, 'PUT', '/settings', { token, body: { listen: busy } })).json()).toMatchObject({
      settings: { listen: busy },
      restartRequired: ['listen'],
    });
    expect(app.listening.proxy.port).not.toBe((taken.address() as AddressInfo).port);
    await new Promise<void>((r) => taken.close(() => r()));
    expect(JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8'))).toEqual({
      version: 1,
      settings: {
        drainGraceMs: 120_000,
        language: 'zh-CN',
        protocols: ['sstp', 'openvpn'],
        killSwitch: true,
        listen: busy,
      },
    });
  });

  it("a node's own protocol order (#35): saved with the settings, live in /nodes at once, and back to the global order when removed", async () => {
    const protocolsOf = async (): Promise<string[]> => {
      const nodes = nodesSchema.parse((await apiRequest(port, 'GET', '/nodes', { token })).json()).nodes;
      return nodes.find((n) => n.id === 'public-vpn-1')!.protocols.map((p) => p.protocol);
    };
    await apiRequest(port, 'PUT', '/settings', { token, body: { protocols: ['openvpn', 'sevpn', 'sstp'] } });
    expect(await protocolsOf()).toEqual(['openvpn', 'sevpn', 'sstp']);
    // SE-VPN, then SSTP, for this node only: OpenVPN is not used with it at all.
    const own = await apiRequest(port, 'PUT', '/settings', {
      token,
      body: { nodeProtocols: { 'public-vpn-1': ['sevpn', 'sstp'] } },
    });
    expect(settingsResultSchema.parse(own.json())).toMatchObject({
      settings: { nodeProtocols: { 'public-vpn-1': ['sevpn', 'sstp'] } },
      restartRequired: [],
    });
    expect(await protocolsOf()).toEqual(['sevpn', 'sstp']);
    expect(JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')).settings.nodeProtocols).toEqual({
      'public-vpn-1': ['sevpn', 'sstp'],
    });
    // Refused at the field: an unknown protocol, an empty order.
    const bad = await apiRequest(port, 'PUT', '/settings', {
      token,
      body: { nodeProtocols: { 'public-vpn-1': ['ftp'] } },
    });
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ message: expect.stringMatching(/nodeProtocols/) });
    expect(
      (await apiRequest(port, 'PUT', '/settings', { token, body: { nodeProtocols: { 'public-vpn-1': [] } } })).status,
    ).toBe(400);
    expect(await protocolsOf()).toEqual(['sevpn', 'sstp']);
    await apiRequest(port, 'PUT', '/settings', { token, body: { nodeProtocols: {} } });
    expect(await protocolsOf()).toEqual(['openvpn', 'sevpn', 'sstp']);
  });

  it('refreshes the list with progress events: fetching, probing, done', async () => {
    const sse = await SseReader.open(port, token);
    const res = await apiRequest(port, 'POST', '/nodes/refresh', { token });
    expect(res.status).toBe(202);
    const { refreshId } = operations.refreshNodes.output.parse(res.json());
    const phases = await until(
      () => {
        const p = sse.events
          .filter((e) => e.event === 'refresh')
          .map((e) => refreshEventSchema.parse(e.data))
          .filter((e) => e.refreshId === refreshId)
          .map((e) => e.phase);
        return p.includes('done') || p.includes('failed') ? p : undefined;
      },
      10_000,
      'the refresh to finish',
    );
    expect(phases).toEqual(['fetching', 'probing', 'done']);
    sse.close();
  });

  it('Test all runs with progress events to done and says so in /status; one node is tested alone; Where am I and Restart say why not here (#23)', async () => {
    const sse = await SseReader.open(port, token);
    const started = await apiRequest(port, 'POST', '/nodes/test', { token, body: {} });
    expect(started.status).toBe(202);
    const first = nodeTestSchema.parse(started.json());
    expect(first).toMatchObject({ state: 'running', total: 1, done: 0 });
    const done = await until(
      () =>
        sse.events
          .filter((e) => e.event === 'test')
          .map((e) => nodeTestSchema.parse(e.data))
          .find((p) => p.sweepId === first.sweepId && p.state === 'done'),
      30_000,
      'the test to finish',
    );
    // The node's address answers nothing: measured, and counted as failed.
    expect(done).toMatchObject({ total: 1, done: 1, ok: 0, failed: 1, last: { nodeId: 'public-vpn-1', ms: null } });
    expect((await apiRequest(port, 'DELETE', '/nodes/test', { token })).json()).toEqual({ cancelled: false });
    const status = statusSchema.parse((await apiRequest(port, 'GET', '/status', { token })).json());
    expect(status.nodeTest).toMatchObject({ sweepId: first.sweepId, state: 'done' });
    expect(status.desktop).toBe(false);
    const one = await apiRequest(port, 'POST', '/nodes/public-vpn-1/test', { token });
    expect(one.json()).toMatchObject({ nodeId: 'public-vpn-1', ms: null, error: expect.any(String) });
    expect((await apiRequest(port, 'POST', '/nodes/nope/test', { token })).json()).toMatchObject({
      error: 'GH_ERR_NODE_UNKNOWN',
    });
    expect(exitInfoSchema.parse((await apiRequest(port, 'POST', '/exit/check', { token })).json())).toMatchObject({
      address: null,
      error: 'exitCheck.url is not set',
    });
    const restart = await apiRequest(port, 'POST', '/restart', { token });
    expect(restart.status).toBe(409);
    expect(restart.json()).toMatchObject({
      error: 'GH_ERR_API_UNSUPPORTED',
      message: expect.stringMatching(/restart the gatehop process/),
    });
    sse.close();
  });

  it('imports a list file (the CSV as the body, or JSON {csv}), refuses junk with its reason, and says where the list came from (#20)', async () => {
    const csv = vpnGateCsv([
      { host: 'public-vpn-7', ip: '127.0.0.1' },
      { host: 'public-vpn-8', ip: '127.0.0.1' },
    ]);
    const raw = await apiRequest(port, 'POST', '/nodes/import', {
      token,
      body: csv,
      headers: { 'content-type': 'text/csv' },
    });
    expect(raw.status).toBe(200);
    expect(operations.importNodes.output.parse(raw.json())).toEqual({ imported: 2, skipped: {}, nodes: 3 });
    const asJson = await apiRequest(port, 'POST', '/nodes/import', {
      token,
      body: { csv: vpnGateCsv([{ host: 'public-vpn-9', ip: '127.0.0.1' }]) },
    });
    expect(asJson.json()).toMatchObject({ imported: 1, nodes: 4 });
    const junk = await apiRequest(port, 'POST', '/nodes/import', {
      token,
      body: '<html>a captive portal</html>',
      headers: { 'content-type': 'text/csv' },
    });
    expect(junk.status).toBe(400);
    expect(junk.json()).toMatchObject({ error: 'GH_ERR_LIST_INVALID', message: expect.stringMatching(/HTML page/) });
    // A real list is ~1 MB: far past the 16 KiB of other bodies, within this route's cap.
    const big = vpnGateCsv(
      Array.from({ length: 150 }, (_, i) => ({ host: `big-${i}`, ip: '127.0.0.1', operator: 'x'.repeat(6000) })),
    );
    expect(big.length).toBeGreaterThan(900_000);
    expect(
      (
        await apiRequest(port, 'POST', '/nodes/import', { token, body: big, headers: { 'content-type': 'text/csv' } })
      ).json(),
    ).toMatchObject({ imported: 150 });
    const status = (await apiRequest(port, 'GET', '/status', { token })).json<{ list: unknown }>();
    expect(status.list).toMatchObject({
      via: 'import',
      source: 'import',
      nodes: 154,
      sources: [{ url: fromFlags.api[0], kind: 'api', via: 'direct', ok: true, error: null }],
    });
    const nodes = (await apiRequest(port, 'GET', '/nodes', { token })).json<{
      via: string;
      nodes: Array<{ id: string; lastListedAt: number | null }>;
    }>();
    expect(nodes.via).toBe('import');
    expect(nodes.nodes.find((n) => n.id === 'public-vpn-7')?.lastListedAt).toEqual(expect.any(Number));
  });

  it('answers 404 for a draining tunnel that is not there, and says when the system proxy is unsupported', async () => {
    expect((await apiRequest(port, 'DELETE', '/draining/tunnel-99', { token })).json()).toMatchObject({
      error: 'GH_ERR_API_NOT_FOUND',
    });
    const sp = sysproxyStateSchema.parse((await apiRequest(port, 'GET', '/sysproxy', { token })).json());
    expect(sp).toMatchObject({ supported: false, error: expect.stringMatching(/not supported/) });
    const on = await apiRequest(port, 'PUT', '/sysproxy', { token, body: { enabled: true } });
    expect(on.status).toBe(409);
    expect(on.json()).toMatchObject({ error: 'GH_ERR_SYSPROXY_UNSUPPORTED' });
  });

  it('serves /ui/ without the token but with CSP, nosniff and no caching of index.html; Host rules still apply', async () => {
    const page = await apiRequest(port, 'GET', '/ui/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(
      /^default-src 'none'; script-src 'self'; style-src 'self'.*connect-src 'self'/,
    );
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).not.toMatch(/<script>(?!<\/script>)/); // no inline script
    const asset = /src="\.\/(assets\/[^"]+\.js)"/.exec(page.text)?.[1];
    expect(asset, page.text).toBeDefined();
    const js = await apiRequest(port, 'GET', `/ui/${asset!}`);
    expect(js.headers['cache-control']).toMatch(/immutable/);
    expect((await apiRequest(port, 'GET', '/ui/', { headers: { host: `evil.example:${port}` } })).status).toBe(403);
    // No way out of the build folder: dot segments (plain or %2e) leave /ui and then need the token,
    // an encoded slash stays in /ui and finds nothing.
    expect((await apiRequest(port, 'GET', '/ui/../admin-token')).status).toBe(401);
    expect((await apiRequest(port, 'GET', '/ui/%2e%2e/%2e%2e/admin-token')).status).toBe(401);
    expect((await apiRequest(port, 'GET', '/ui/..%2f..%2fadmin-token')).status).toBe(404);
    expect((await apiRequest(port, 'POST', '/ui/')).status).toBe(405);
    expect((await apiRequest(port, 'GET', '/settings')).status).toBe(401); // the data still needs the token
  });
});
