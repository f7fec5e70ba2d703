/**
 * The Clash external-controller surface as yacd, metacubexd and zashboard call it (issue #26): every
 * endpoint of the table in core/api/README.md against the shapes those dashboards' own sources read
 * (yacd src/store/types.ts and src/api/*; metacubexd packages/ui/types/index.ts and
 * composables/useApi.ts; zashboard src/types/index.d.ts and src/api/clash.ts), error bodies included.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { eventually, until } from '../helpers/fds.js';
import { vpnGateCsv } from '../helpers/vpngate-fixtures.js';

// ---- what the dashboards read ----

const history = z.array(z.object({ time: z.string(), delay: z.number() }));
/** yacd ClashGeneralConfig; metacubexd Config; zashboard Config. */
const configSchema = z.object({
  port: z.number(),
  'socks-port': z.number(),
  'redir-port': z.number(),
  'tproxy-port': z.number(),
  'mixed-port': z.number(),
  'allow-lan': z.boolean(),
  'bind-address': z.string(),
  mode: z.string(),
  'mode-list': z.array(z.string()),
  modes: z.array(z.string()),
  'log-level': z.enum(['debug', 'info', 'warning', 'error', 'silent']),
  ipv6: z.boolean(),
  tun: z.object({ enable: z.boolean() }),
});
/** metacubexd Proxy / zashboard Proxy (a node). */
const proxySchema = z.object({
  name: z.string(),
  type: z.string(),
  history,
  udp: z.boolean(),
  xudp: z.boolean(),
  tfo: z.boolean(),
  extra: z.record(z.string(), z.unknown()),
  hidden: z.boolean(),
  icon: z.string(),
});
/** ...and a group: `now`, `all`, `fixed` when pinned (metacubexd and zashboard offer to clear it). */
const groupSchema = proxySchema.extend({
  now: z.string(),
  all: z.array(z.string()),
  fixed: z.string().optional(),
  testUrl: z.string(),
});
/** yacd ProxyProvider; metacubexd ProxyProvider; zashboard ProxyProvider. */
const providerSchema = z.object({
  name: z.string(),
  type: z.literal('Proxy'),
  vehicleType: z.string(),
  updatedAt: z.string().datetime(),
  testUrl: z.string(),
  proxies: z.array(proxySchema),
});
/** yacd normalizeAPIResponse (rules must be an array); metacubexd/zashboard Rule. */
const rulesSchema = z.object({
  rules: z.array(
    z.object({ index: z.number(), type: z.string(), payload: z.string(), proxy: z.string(), size: z.number() }),
  ),
});
/** metacubexd BackendVersion; yacd VersionData; zashboard {version}. */
const versionSchema = z.object({ version: z.string(), meta: z.boolean(), premium: z.boolean() });
/** Clash/mihomo error bodies: dashboards show `message`. */
const clashErrorSchema = z.object({ message: z.string() });
/** metacubexd ConnectionRawMessage / zashboard ClashConnectionRawMessage (the fields Gatehop knows). */
const connectionSchema = z.object({
  id: z.string(),
  download: z.number(),
  upload: z.number(),
  chains: z.array(z.string()),
  rule: z.string(),
  rulePayload: z.string(),
  start: z.string(),
  metadata: z.object({
    network: z.string(),
    type: z.string(),
    sourceIP: z.string(),
    sourcePort: z.string(),
    destinationIP: z.string(),
    destinationPort: z.string(),
    host: z.string(),
    inboundIP: z.string(),
    inboundPort: z.string(),
    inboundName: z.string(),
    inboundUser: z.string(),
    dnsMode: z.string(),
    process: z.string(),
    processPath: z.string(),
    remoteDestination: z.string(),
    sniffHost: z.string(),
    specialProxy: z.string(),
    specialRules: z.string(),
  }),
});
const wsConnectionsSchema = z.object({
  downloadTotal: z.number(),
  uploadTotal: z.number(),
  connections: z.array(connectionSchema),
});

function wsOpen(port: number, path: string): Promise<{ ws: WebSocket; messages: unknown[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
    const messages: unknown[] = [];
    ws.on('message', (m) => messages.push(JSON.parse(m.toString())));
    ws.once('open', () => resolve({ ws, messages }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

describe('Clash dashboards drive Gatehop (issue #26)', () => {
  let app: RunningApp;
  let list: Server;
  let port = 0;
  let token = '';
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-clash-'));
  const ext = join(dataDir, 'metacubexd');
  const nodes = ['public-vpn-1', 'public-vpn-2', 'public-vpn-3'];

  beforeAll(async () => {
    // Nodes on closed loopback ports: listed, never reachable (a switch to one fails, its pick stands).
    list = createServer((_q, r) => r.end(vpnGateCsv(nodes.map((host) => ({ host, ip: '127.0.0.1' })))));
    await new Promise<void>((r) => list.listen(0, '127.0.0.1', () => r()));
    mkdirSync(join(ext, 'assets'), { recursive: true });
    writeFileSync(
      join(ext, 'index.html'),
      '<!doctype html><title>dashboard</title><script type="module" src="./assets/app.js"></script>',
    );
    writeFileSync(join(ext, 'assets', 'app.js'), 'console.log("a dashboard")');
    const fromFile = { listen: '127.0.0.1:0' };
    const fromFlags = {
      egress: 'vpngate' as const,
      admin: '127.0.0.1:0',
      dataDir,
      logFile: 'off' as const,
      externalUi: ext,
      api: [`http://127.0.0.1:${(list.address() as AddressInfo).port}/api/iphone/`],
      selector: { probe: { timeoutMs: 200, samples: 1 } },
      vpngate: { mirrors: false },
    };
    // A real logger at info (a silent one has no level to change), writing nowhere.
    const logger = pino({ level: 'info' }, new Writable({ write: (_c, _e, done) => done() }));
    app = await startApp(buildConfig(fromFile, fromFlags), logger, {
      layers: { fromFile, fromFlags },
      unsafeLoopbackNodes: true,
    });
    port = app.listening.admin!.port;
    token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  });

  afterAll(async () => {
    await app.stop();
    await new Promise<void>((r) => list.close(() => r()));
  });

  const get = async <T extends z.ZodType>(path: string, schema: T): Promise<z.infer<T>> => {
    const r = await apiRequest(port, 'GET', path, { token });
    expect(r.status, path).toBe(200);
    return schema.parse(r.json());
  };

  it('answers every page yacd loads (/version, /configs, /proxies, /providers/proxies, /rules, /providers/rules) with the shapes it reads', async () => {
    expect(await get('/version', versionSchema)).toEqual({
      version: expect.stringMatching(/^gatehop-/),
      meta: true,
      premium: false,
    });
    const configs = await get('/configs', configSchema);
    expect(configs).toMatchObject({
      'mixed-port': app.listening.proxy.port,
      'allow-lan': false,
      'bind-address': '127.0.0.1',
      mode: 'rule',
      'mode-list': ['rule', 'global', 'direct'],
      'log-level': 'info',
      ipv6: false,
      tun: { enable: false },
    });
    const { proxies } = await get('/proxies', z.object({ proxies: z.record(z.string(), z.unknown()) }));
    expect(groupSchema.parse(proxies.GATEHOP)).toMatchObject({ type: 'Selector', all: nodes });
    for (const n of nodes) expect(proxySchema.parse(proxies[n])).toMatchObject({ name: n, type: 'OpenVPN' });
    const providers = await get('/providers/proxies', z.object({ providers: z.record(z.string(), providerSchema) }));
    expect(Object.keys(providers.providers)).toEqual(['VPNGate']);
    expect(providers.providers.VPNGate!.proxies.map((p) => p.name)).toEqual(nodes);
    expect(await get('/providers/proxies/VPNGate', providerSchema)).toMatchObject({ vehicleType: 'HTTP' });
    // The real table (#33): the default one, LAN and local names direct, the rest to the group.
    expect(await get('/rules', rulesSchema)).toEqual({
      rules: [
        { index: 0, type: 'DomainSuffix', payload: 'localhost', proxy: 'DIRECT', size: -1 },
        { index: 1, type: 'DomainSuffix', payload: 'local', proxy: 'DIRECT', size: -1 },
        { index: 2, type: 'GeoIP', payload: 'LAN', proxy: 'DIRECT', size: -1 },
        { index: 3, type: 'Match', payload: '', proxy: 'GATEHOP', size: -1 },
      ],
    });
    expect(await get('/providers/rules', z.object({ providers: z.record(z.string(), z.unknown()) }))).toEqual({
      providers: {},
    });
  });

  it('PUT /proxies/GATEHOP sets `now` at once (the pick), with `fixed` for dashboards to clear; DELETE goes back to auto', async () => {
    const put = await apiRequest(port, 'PUT', '/proxies/GATEHOP', { token, body: { name: 'public-vpn-2' } });
    expect(put.status).toBe(204);
    // Right after: the pick, not the old node, even though the switch to it runs (and here fails).
    const group = groupSchema.parse((await apiRequest(port, 'GET', '/proxies/GATEHOP', { token })).json());
    expect(group).toMatchObject({ now: 'public-vpn-2', fixed: 'public-vpn-2' });
    expect(app.controller!.mode).toBe('manual');
    // A second pick while the first switch still runs stands too.
    expect((await apiRequest(port, 'PUT', '/proxies/GATEHOP', { token, body: { name: 'public-vpn-3' } })).status).toBe(
      204,
    );
    expect(groupSchema.parse((await apiRequest(port, 'GET', '/proxies/GATEHOP', { token })).json()).now).toBe(
      'public-vpn-3',
    );
    const unknown = await apiRequest(port, 'PUT', '/proxies/GATEHOP', { token, body: { name: 'nope' } });
    expect(unknown.status).toBe(404);
    clashErrorSchema.parse(unknown.json());
    expect((await apiRequest(port, 'DELETE', '/proxies/GATEHOP', { token })).status).toBe(204);
    const auto = groupSchema.parse((await apiRequest(port, 'GET', '/proxies/GATEHOP', { token })).json());
    expect(auto.fixed).toBeUndefined();
    expect(app.controller!.mode).toBe('auto');
  });

  it('PATCH /configs switches the routing mode (rule, global, direct: #33) and the log level, and refuses the rest with a Clash error body, changing nothing', async () => {
    const patch = (body: object) => apiRequest(port, 'PATCH', '/configs', { token, body });
    expect((await patch({ mode: 'global' })).status).toBe(204);
    expect((await get('/configs', configSchema)).mode).toBe('global');
    expect(app.routing.table().mode).toBe('global');
    expect(await get('/rules', rulesSchema)).toEqual({
      rules: [{ index: 0, type: 'Match', payload: '', proxy: 'GATEHOP', size: -1 }],
    });
    expect((await patch({ mode: 'direct' })).status).toBe(204);
    expect(app.routing.table().mode).toBe('direct');
    expect((await patch({ mode: 'Rule' })).status).toBe(204);
    expect((await get('/configs', configSchema)).mode).toBe('rule');
    // Saved with the settings: the next start keeps it.
    expect((await apiRequest(port, 'GET', '/settings', { token })).json()).toMatchObject({
      settings: { mode: 'rule' },
    });
    // Node selection keeps its earlier names here.
    expect((await patch({ mode: 'manual' })).status).toBe(204);
    expect(app.controller!.mode).toBe('manual');
    expect((await patch({ mode: 'auto' })).status).toBe(204);
    const unknown = await patch({ mode: 'tunnel-only' });
    expect(unknown.status).toBe(400);
    expect(clashErrorSchema.parse(unknown.json()).message).toMatch(/one of rule, global, direct/);
    const lan = await patch({ 'allow-lan': true, 'log-level': 'debug' });
    expect(lan.status).toBe(400);
    expect(clashErrorSchema.parse(lan.json()).message).toMatch(/^allow-lan: not changeable/);
    expect((await get('/configs', configSchema))['log-level']).toBe('info'); // refused as a whole
    expect((await patch({ 'log-level': 'warning' })).status).toBe(204);
    expect((await get('/configs', configSchema))['log-level']).toBe('warning');
    await patch({ 'log-level': 'info' });
  });

  it("keeps a dashboard's own settings at /storage/:key (mihomo's extension, zashboard's sync), bounded, kept on disk", async () => {
    // Nothing yet: null, so zashboard keeps the settings it has.
    expect((await apiRequest(port, 'GET', '/storage/zashboard', { token })).json()).toBeNull();
    const value = { 'config/language': '"fa-IR"', 'config/theme': '"dark"' };
    expect((await apiRequest(port, 'PUT', '/storage/zashboard', { token, body: value })).status).toBe(204);
    expect((await apiRequest(port, 'GET', '/storage/zashboard', { token })).json()).toEqual(value);
    expect(JSON.parse(readFileSync(join(dataDir, 'dashboard-storage', 'zashboard.json'), 'utf8'))).toEqual(value);
    // Not JSON, too big, a key that could name a path, no token: refused, the value kept.
    expect((await apiRequest(port, 'PUT', '/storage/zashboard', { token, body: 'not json' })).status).toBe(400);
    const huge = JSON.stringify({ x: 'y'.repeat(1024 * 1024) });
    expect((await apiRequest(port, 'PUT', '/storage/zashboard', { token, body: huge })).status).toBe(413);
    expect((await apiRequest(port, 'PUT', '/storage/..%2Fadmin-token', { token, body: '{}' })).status).toBe(400);
    expect((await apiRequest(port, 'GET', '/storage/zashboard')).status).toBe(401);
    for (let i = 0; i < 15; i++)
      expect((await apiRequest(port, 'PUT', `/storage/k${i}`, { token, body: '{}' })).status).toBe(204);
    expect((await apiRequest(port, 'PUT', '/storage/one-too-many', { token, body: '{}' })).status).toBe(507);
    for (let i = 0; i < 15; i++) await apiRequest(port, 'DELETE', `/storage/k${i}`, { token });
    expect((await apiRequest(port, 'GET', '/storage/zashboard', { token })).json()).toEqual(value);
    expect((await apiRequest(port, 'DELETE', '/storage/zashboard', { token })).status).toBe(204);
    expect((await apiRequest(port, 'GET', '/storage/zashboard', { token })).json()).toBeNull();
  });

  it("PUT /configs reloads Gatehop's own config; a Clash config in the body is refused", async () => {
    expect(
      (await apiRequest(port, 'PUT', '/configs?force=true', { token, body: { path: '', payload: '' } })).status,
    ).toBe(204);
    const foreign = await apiRequest(port, 'PUT', '/configs', { token, body: { path: '/etc/clash/config.yaml' } });
    expect(foreign.status).toBe(400);
    expect(clashErrorSchema.parse(foreign.json()).message).toMatch(/does not load Clash configs/);
  });

  it("the provider: PUT refreshes the list, healthcheck starts Test all, a node's test and the group's answer as mihomo does", async () => {
    const before = app.nodes!.lastRefresh?.at ?? 0;
    expect((await apiRequest(port, 'PUT', '/providers/proxies/VPNGate', { token })).status).toBe(204);
    await eventually(() => (app.nodes!.lastRefresh?.at ?? 0) > before, 10_000, 'a refresh');
    expect((await apiRequest(port, 'GET', '/providers/proxies/VPNGate/healthcheck', { token })).status).toBe(204);
    expect(app.admin!.operations).toBeDefined();
    const one = await apiRequest(
      port,
      'GET',
      '/providers/proxies/VPNGate/public-vpn-1/healthcheck?url=http://127.0.0.1:9/generate_204&timeout=2000',
      { token },
    );
    expect([503, 504]).toContain(one.status);
    clashErrorSchema.parse(one.json());
    const group = await apiRequest(
      port,
      'GET',
      '/group/GATEHOP/delay?url=http://127.0.0.1:9/generate_204&timeout=1000',
      { token },
    );
    expect(group.status).toBe(200);
    expect(group.json()).toEqual({}); // every node failed: mihomo leaves failures out
    const missing = await apiRequest(port, 'GET', '/providers/proxies/Other', { token });
    expect(missing.status).toBe(404);
    clashErrorSchema.parse(missing.json());
  });

  it('streams /connections over WebSocket with the fields metacubexd and zashboard read, and DELETE /connections closes them all', async () => {
    const { createConnection } = await import('node:net');
    const held = createConnection({ host: '127.0.0.1', port: app.listening.proxy.port });
    await new Promise<void>((r) => held.once('connect', () => r()));
    held.write(Buffer.from([5, 1, 0])); // a SOCKS5 greeting: a session exists
    held.resume(); // read its reply, and the end when the proxy closes it
    await eventually(() => app.proxy.sessions.size > 0, 3_000, 'a session');
    const conns = await wsOpen(port, `/connections?token=${token}&interval=200`);
    await until(() => (conns.messages.length > 0 ? true : undefined), 5_000, 'a connections message');
    const msg = wsConnectionsSchema.parse(conns.messages[0]);
    expect(msg.connections[0]!.metadata).toMatchObject({
      inboundName: 'gatehop',
      inboundIP: '127.0.0.1',
      inboundPort: String(app.listening.proxy.port),
    });
    conns.ws.close();
    const closed = new Promise<void>((r) => held.once('close', () => r()));
    const del = await apiRequest(port, 'DELETE', '/connections', { token });
    expect(del.status, del.text).toBe(204);
    await closed;
  });

  it("serves the user's dashboard build at /ui/external/ (externalUi) same-origin, without the token, single-page paths included", async () => {
    const index = await apiRequest(port, 'GET', '/ui/external/');
    expect(index.status).toBe(200);
    expect(index.text).toContain('<title>dashboard</title>');
    expect(index.headers['content-security-policy']).toMatch(/connect-src 'self' ws: wss:/);
    expect((await apiRequest(port, 'GET', '/ui/external/assets/app.js')).text).toContain('a dashboard');
    expect((await apiRequest(port, 'GET', '/ui/external/proxies')).text).toContain('<title>dashboard</title>');
    expect((await apiRequest(port, 'GET', '/ui/external')).status).toBe(301);
    expect((await apiRequest(port, 'GET', '/ui/external/', { headers: { host: `evil.example:${port}` } })).status).toBe(
      403,
    );
  });
});

describe('byte counters count what the client has taken (issue #26)', () => {
  let app: RunningApp;
  let source: Server;
  let port = 0;
  let token = '';

  beforeAll(async () => {
    const body = Buffer.alloc(64 << 20, 0x5a);
    source = createServer((_q, r) => {
      r.writeHead(200, { 'content-length': body.length });
      r.end(body);
    });
    await new Promise<void>((r) => source.listen(0, '127.0.0.1', () => r()));
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-clash-bytes-'));
    app = await startApp(
      buildConfig({}, { egress: 'direct', listen: '127.0.0.1:0', admin: '127.0.0.1:0', dataDir, logFile: 'off' }),
      silentLogger(),
    );
    port = app.listening.admin!.port;
    token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  });

  afterAll(async () => {
    await app.stop();
    source.closeAllConnections();
    await new Promise<void>((r) => source.close(() => r()));
  });

  it('a client that reads at 200 KiB/s (real curl into pv -L) shows 150–250 KiB/s on /traffic and in its connection, not a spike', async () => {
    const traffic = await wsOpen(port, `/traffic?token=${token}`);
    // curl reads as fast as pv takes it from the pipe: the client's own pace. (curl's own
    // --limit-rate in Debian's 7.88 reads ~10 MB at once and then waits: a spike it really takes.)
    const reader = spawn(
      'sh',
      [
        '-c',
        `curl -s --socks5-hostname 127.0.0.1:${app.listening.proxy.port} http://127.0.0.1:${(source.address() as AddressInfo).port}/ | pv -q -L 200k > /dev/null`,
      ],
      { detached: true, stdio: 'ignore' },
    );
    try {
      await until(() => (traffic.messages.length >= 8 ? true : undefined), 15_000, 'eight seconds of /traffic');
      const down = traffic.messages.map((m) => (m as { down: number }).down / 1024);
      const said = `per-second KiB: ${down.map((k) => k.toFixed(0)).join(' ')}`;
      // The first seconds hold the pipe's and curl's own buffers; from then on, the client's pace.
      // pv and a busy machine make single seconds uneven (100, then 300): the rate is their mean,
      // and no second holds the multi-megabyte burst counting at write() showed (11 MiB here).
      const steady = down.slice(2, 8);
      const mean = steady.reduce((a, b) => a + b, 0) / steady.length;
      expect(mean, said).toBeGreaterThanOrEqual(150);
      expect(mean, said).toBeLessThanOrEqual(250);
      expect(Math.max(...down), said).toBeLessThan(1024);
      const conn = (await apiRequest(port, 'GET', '/connections', { token })).json<{
        connections: Array<{ download: number; startedAt: number }>;
      }>().connections[0]!;
      const seconds = (Date.now() - conn.startedAt) / 1000;
      expect(conn.download / 1024 / seconds).toBeLessThan(400);
    } finally {
      process.kill(-reader.pid!, 'SIGKILL');
      traffic.ws.close();
    }
  });
});
