import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import pino from 'pino';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clashProxiesSchema,
  connectionsSchema,
  EventStream,
  latencySchema,
  nodesSchema,
  statusSchema,
} from '../../core/api/index.js';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { LogTap } from '../../core/common/index.js';
import { apiRequest, SseReader } from '../helpers/admin-client.js';
import { eventually, until } from '../helpers/fds.js';
import { socksConnect } from '../helpers/socks-client.js';
import { startEchoServer, type TestTcpServer } from '../helpers/servers.js';

describe('admin API over the direct egress', () => {
  let app: RunningApp;
  let port = 0;
  let token = '';
  let echo: TestTcpServer;
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-admin-'));
  const tap = new LogTap();

  beforeAll(async () => {
    echo = await startEchoServer();
    const config = buildConfig(
      {},
      {
        egress: 'direct',
        listen: '127.0.0.1:0',
        admin: '127.0.0.1:0',
        dataDir,
        logFile: 'off',
        adminCorsOrigins: ['https://dash.example'],
      },
    );
    const logger = pino({ level: 'info', base: undefined }, pino.multistream([{ level: 'info', stream: tap.stream }]));
    app = await startApp(config, logger, { logTap: tap });
    port = app.listening.admin!.port;
    token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  });

  afterAll(async () => {
    await app.stop();
    await echo.close();
  });

  it('generates a token at first start, stored with mode 0600, and refuses requests without it', async () => {
    expect(token.length).toBeGreaterThanOrEqual(40);
    expect(statSync(join(dataDir, 'admin-token')).mode & 0o777).toBe(0o600);
    const none = await apiRequest(port, 'GET', '/status');
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(none.json()).toMatchObject({ error: 'GH_ERR_API_UNAUTHORIZED' });
    expect((await apiRequest(port, 'GET', '/status', { token: 'x'.repeat(43) })).status).toBe(401);
    // ?token= only where a client cannot send a header (#34): not on a plain request.
    const queried = await apiRequest(port, 'GET', `/status?token=${token}`);
    expect(queried.status).toBe(401);
    expect(queried.json()).toMatchObject({ message: expect.stringMatching(/Authorization: Bearer/) });
    expect(
      (await apiRequest(port, 'GET', `/status?token=${token}`, { headers: { accept: 'text/event-stream' } })).status,
    ).toBe(200);
  });

  it('refuses a Host that is not the API (DNS rebinding) and a foreign Origin; an allow-listed origin gets CORS', async () => {
    const rebound = await apiRequest(port, 'GET', '/status', { token, headers: { host: `evil.example:${port}` } });
    expect(rebound.status).toBe(403);
    expect(rebound.json()).toMatchObject({ error: 'GH_ERR_API_HOST' });
    expect((await apiRequest(port, 'GET', '/status', { token, headers: { host: `localhost:${port}` } })).status).toBe(
      200,
    );
    const foreign = await apiRequest(port, 'POST', '/mode', {
      token,
      body: { auto: true },
      headers: { origin: 'https://attacker.example' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.json()).toMatchObject({ error: 'GH_ERR_API_ORIGIN' });
    const allowed = await apiRequest(port, 'GET', '/status', { token, headers: { origin: 'https://dash.example' } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://dash.example');
    const preflight = await apiRequest(port, 'OPTIONS', '/proxies/GATEHOP', {
      headers: { origin: 'https://dash.example', 'access-control-request-method': 'PUT' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Authorization/);
    expect(preflight.headers['access-control-allow-private-network']).toBeUndefined();
    // A hosted dashboard (a public origin) calling loopback: Chromium's Private Network Access preflight.
    const pna = await apiRequest(port, 'OPTIONS', '/configs', {
      headers: {
        origin: 'https://dash.example',
        'access-control-request-method': 'PATCH',
        'access-control-request-private-network': 'true',
      },
    });
    expect(pna.status).toBe(204);
    expect(pna.headers['access-control-allow-private-network']).toBe('true');
    const pnaForeign = await apiRequest(port, 'OPTIONS', '/configs', {
      headers: { origin: 'https://attacker.example', 'access-control-request-private-network': 'true' },
    });
    expect([pnaForeign.status, pnaForeign.headers['access-control-allow-private-network']]).toEqual([403, undefined]);
    expect(
      (await apiRequest(port, 'OPTIONS', '/status', { headers: { origin: 'https://attacker.example' } })).status,
    ).toBe(403);
  });

  it('refuses oversized, malformed and invalid bodies, unknown paths and wrong methods with JSON errors', async () => {
    const big = await apiRequest(port, 'POST', '/switch', { token, body: `{"nodeId":"${'x'.repeat(20_000)}"}` });
    expect(big.status).toBe(413);
    const broken = await apiRequest(port, 'POST', '/mode', { token, body: '{"auto": tru' });
    expect(broken.status).toBe(400);
    expect(broken.json()).toMatchObject({ error: 'GH_ERR_API_BAD_REQUEST' });
    const invalid = await apiRequest(port, 'POST', '/mode', { token, body: { auto: 'yes' } });
    expect(invalid.status).toBe(400);
    expect(invalid.json<{ message: string }>().message).toMatch(/^body\.auto/);
    expect((await apiRequest(port, 'POST', '/mode', { token, body: { auto: true, extra: 1 } })).status).toBe(400);
    expect((await apiRequest(port, 'GET', '/nope', { token })).status).toBe(404);
    expect((await apiRequest(port, 'DELETE', '/status', { token })).status).toBe(405);
    // Switching needs a node pool.
    const sw = await apiRequest(port, 'POST', '/switch', { token, body: {} });
    expect(sw.status).toBe(409);
    expect(sw.json()).toMatchObject({ error: 'GH_ERR_API_UNSUPPORTED' });
  });

  it('answers /status, /nodes and /latency in the shapes of the shared schemas', async () => {
    const status = statusSchema.parse((await apiRequest(port, 'GET', '/status', { token })).json());
    expect(status).toMatchObject({
      egress: 'direct',
      active: { egressId: 'direct' },
      listen: { proxy: `127.0.0.1:${app.listening.proxy.port}`, admin: `127.0.0.1:${port}` },
    });
    // With the native module on glibc: malloc's totals (what the soak samples, #44).
    if (status.native.loaded && process.platform === 'linux')
      expect(status.native.malloc).toEqual({
        systemMb: expect.any(Number),
        inUseMb: expect.any(Number),
        freeMb: expect.any(Number),
      });
    if (status.native.malloc) expect(status.native.malloc.inUseMb).toBeGreaterThan(0);
    expect(nodesSchema.parse((await apiRequest(port, 'GET', '/nodes', { token })).json()).nodes).toEqual([]);
    expect(
      latencySchema.parse((await apiRequest(port, 'GET', '/latency?sinceMs=0', { token })).json()).samples,
    ).toEqual([]);
    expect((await apiRequest(port, 'GET', '/latency?sinceMs=yesterday', { token })).status).toBe(400);
  });

  it('lists live connections with their target and bytes, and DELETE closes one', async () => {
    const { client } = await socksConnect(app.listening.proxy.port, '127.0.0.1', echo.port);
    client.write('ping');
    await client.read(4);
    // Down counts what the client has taken: the kernel's queues are read, and a byte read but not
    // yet acknowledged (a delayed ACK) still counts as queued for a moment.
    const mine = await until(
      async () => {
        const list = connectionsSchema.parse((await apiRequest(port, 'GET', '/connections', { token })).json());
        const c = list.connections.find((x) => x.target === `127.0.0.1:${echo.port}`)!;
        return c.bytesDown === 4 ? c : undefined;
      },
      2_000,
      'the echo counted as taken',
    );
    expect(mine).toMatchObject({
      kind: 'socks5',
      egressId: 'direct',
      bytesUp: 4,
      bytesDown: 4,
      upload: 4,
      download: 4,
      metadata: { destinationPort: String(echo.port) },
    });
    expect((await apiRequest(port, 'DELETE', `/connections/${mine.id}`, { token })).status).toBe(204);
    await client.waitEnd(3_000);
    expect((await apiRequest(port, 'DELETE', `/connections/${mine.id}`, { token })).status).toBe(404);
  });

  it('serves Prometheus metrics that a text-format parser reads, named by the conventions', async () => {
    const res = await apiRequest(port, 'GET', '/metrics', { token });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const families = parsePrometheusTextFormat(res.text);
    const names = new Set(families.map((f) => f.name));
    for (const n of [
      'gatehop_sessions_active',
      'gatehop_sessions_total',
      'gatehop_proxy_bytes_total',
      'gatehop_switches_total',
      'gatehop_drain_sessions',
      'gatehop_process_resident_memory_bytes',
      'gatehop_event_loop_delay_seconds',
    ])
      expect(names).toContain(n);
    for (const f of families.filter((x) => x.name.startsWith('gatehop_'))) {
      if (f.type === 'COUNTER') expect(f.name).toMatch(/_total$/);
      expect(f.name).toMatch(/^[a-z0-9_]+$/);
    }
    const sessions = families.find((f) => f.name === 'gatehop_sessions_total')!;
    expect(Number(sessions.metrics[0]!.value)).toBeGreaterThanOrEqual(1);
  });

  it('streams status and nodes at once, then log lines, as Server-Sent Events', async () => {
    const sse = await SseReader.open(port, token);
    await until(() => (sse.events.some((e) => e.event === 'nodes') ? true : undefined), 3_000, 'initial events');
    expect(sse.events[0]!.event).toBe('status');
    statusSchema.parse(sse.events[0]!.data);
    pinoLine(tap, 'hello from the test');
    await until(
      () => sse.events.find((e) => e.event === 'log' && (e.data as { msg: string }).msg === 'hello from the test'),
      3_000,
      'a log event',
    );
    sse.close();
    // A window that opens later gets the recent log first (its Logs view is not empty), after status and nodes.
    const later = await SseReader.open(port, token);
    const backlog = await until(
      () => later.events.find((e) => e.event === 'log' && (e.data as { msg: string }).msg === 'hello from the test'),
      3_000,
      'the line in the backlog',
    );
    expect(later.events.indexOf(backlog)).toBeGreaterThan(later.events.findIndex((e) => e.event === 'nodes'));
    later.close();
  });

  it('keeps only the last lines for a window that opens later', () => {
    const small = new LogTap(3);
    for (const m of ['one', 'two', 'three', 'four']) pinoLine(small, m);
    small.stream.write('not json\n');
    expect(small.recent().map((l) => l.msg)).toEqual(['three', 'four']);
  });

  it('speaks the Clash subset dashboards use', async () => {
    expect((await apiRequest(port, 'GET', '/', { token })).json()).toEqual({ hello: 'clash' });
    expect((await apiRequest(port, 'GET', '/version', { token })).json()).toMatchObject({
      version: expect.stringMatching(/^gatehop-/),
    });
    const proxies = clashProxiesSchema.parse((await apiRequest(port, 'GET', '/proxies', { token })).json());
    expect(proxies.proxies.GATEHOP).toMatchObject({ type: 'Selector', all: [] });
    // GET /traffic streams one JSON line per second.
    const lines = await new Promise<string[]>((resolve, reject) => {
      const got: string[] = [];
      const req = request(
        { host: '127.0.0.1', port, path: '/traffic', headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            got.push(...c.split('\n').filter(Boolean));
            if (got.length >= 2) {
              req.destroy();
              resolve(got);
            }
          });
        },
      );
      req.on('error', (err) => (got.length >= 2 ? undefined : reject(err)));
      req.end();
    });
    for (const l of lines)
      expect(JSON.parse(l)).toEqual({
        up: expect.any(Number),
        down: expect.any(Number),
        upTotal: expect.any(Number),
        downTotal: expect.any(Number),
      });
    // GET /logs streams {type, payload} lines (older dashboards use HTTP streams).
    const log = await new Promise<string>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/logs?level=info', headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.setEncoding('utf8');
          res.once('data', (c: string) => {
            req.destroy();
            resolve(c.split('\n')[0]!);
          });
          pinoLine(tap, 'a line for the dashboard');
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(JSON.parse(log)).toEqual({ type: 'info', payload: 'a line for the dashboard' });
  });
});

describe('Clash WebSocket streams (metacubexd and zashboard open these instead of HTTP streams)', () => {
  let app: RunningApp;
  let port = 0;
  let token = '';
  const tap = new LogTap();

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-admin-ws-'));
    const config = buildConfig(
      {},
      {
        egress: 'direct',
        listen: '127.0.0.1:0',
        admin: '127.0.0.1:0',
        dataDir,
        logFile: 'off',
        adminCorsOrigins: ['https://dash.example'],
      },
    );
    const logger = pino({ level: 'info', base: undefined }, pino.multistream([{ level: 'info', stream: tap.stream }]));
    app = await startApp(config, logger, { logTap: tap });
    port = app.listening.admin!.port;
    token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  });

  afterAll(() => app.stop());

  const open = (path: string, origin?: string): Promise<{ ws: WebSocket; messages: unknown[] }> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, origin ? { origin } : {});
      const messages: unknown[] = [];
      ws.on('message', (m) => messages.push(JSON.parse(m.toString())));
      ws.once('open', () => resolve({ ws, messages }));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });

  it('streams /traffic and /memory every second and /connections with Clash shapes, token in the query', async () => {
    const traffic = await open(`/traffic?token=${token}`);
    const memory = await open(`/memory?token=${token}`);
    const conns = await open(`/connections?token=${token}&interval=200`, 'https://dash.example');
    await until(
      () =>
        traffic.messages.length >= 2 && memory.messages.length >= 1 && conns.messages.length >= 2 ? true : undefined,
      5_000,
      'messages on each stream',
    );
    expect(traffic.messages[0]).toEqual({
      up: expect.any(Number),
      down: expect.any(Number),
      upTotal: expect.any(Number),
      downTotal: expect.any(Number),
    });
    expect(memory.messages[0]).toEqual({ inuse: expect.any(Number), oslimit: 0 });
    connectionsSchema.parse(conns.messages[0]);
    for (const s of [traffic, memory, conns]) s.ws.close();
  });

  it('streams log lines at or above ?level= as {type, payload}', async () => {
    const logs = await open(`/logs?token=${token}&level=warning`);
    tap.stream.write(`${JSON.stringify({ level: 'info', time: Date.now(), msg: 'too quiet' })}\n`);
    tap.stream.write(`${JSON.stringify({ level: 'warn', time: Date.now(), msg: 'loud enough' })}\n`);
    await until(() => (logs.messages.length >= 1 ? true : undefined), 3_000, 'a log message');
    expect(logs.messages).toEqual([{ type: 'warning', payload: 'loud enough' }]);
    logs.ws.close();
  });

  it('refuses the upgrade without the token (401), from a foreign origin (403), and for an unknown stream (404)', async () => {
    await expect(open('/traffic')).rejects.toThrow('HTTP 401');
    await expect(open(`/traffic?token=${token}`, 'https://attacker.example')).rejects.toThrow('HTTP 403');
    await expect(open(`/nope?token=${token}`)).rejects.toThrow('HTTP 404');
  });

  it('drops a dashboard that stops reading instead of buffering for it', async () => {
    const logs = await open(`/logs?token=${token}`);
    const closed = new Promise((r) => logs.ws.once('close', r));
    (logs.ws as unknown as { _socket: import('node:net').Socket })._socket.pause();
    const blob = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 400 && logs.ws.readyState === logs.ws.OPEN; i++) {
      tap.stream.write(`${JSON.stringify({ level: 'info', time: Date.now(), msg: blob })}\n`);
      if (i % 20 === 0) await new Promise((r) => setImmediate(r));
    }
    (logs.ws as unknown as { _socket: import('node:net').Socket })._socket.resume();
    await closed;
    expect((await apiRequest(port, 'GET', '/metrics', { token })).text).toMatch(/^gatehop_api_ws_dropped_total 1$/m);
  });
});

function pinoLine(tap: LogTap, msg: string): void {
  tap.stream.write(`${JSON.stringify({ level: 'info', time: Date.now(), msg })}\n`);
}

describe('event stream backpressure', () => {
  it('drops a consumer that stops reading instead of buffering for it, and memory stays flat', async () => {
    const events = new EventStream({ maxBufferedBytes: 256 * 1024 });
    const server = createServer((_req, res) => events.attach(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    // A raw client that sends the request and never reads a byte.
    const sock = connect(port, '127.0.0.1');
    sock.pause();
    sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually(() => events.clients === 1, 3_000, 'attached');
    const payload = { blob: 'x'.repeat(64 * 1024) };
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 3_000 && events.clients > 0; i++) {
      events.publish('status', payload); // ~190 MiB if it were all kept
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await eventually(() => events.clients === 0, 5_000, 'the stalled consumer dropped');
    expect(events.dropped).toBe(1);
    global.gc?.();
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(32 * 1024 * 1024);
    sock.destroy();
    events.close();
    await new Promise<void>((r) => server.close(() => r()));
  });
  it('keeps a consumer that reads: a burst of node lists several times the cap reaches it whole', async () => {
    const events = new EventStream({ maxBufferedBytes: 256 * 1024, stallMs: 2_000 });
    const server = createServer((_req, res) => events.attach(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    let got = '';
    const sock = connect(port, '127.0.0.1');
    sock.on('data', (c: Buffer) => (got += c.toString('latin1')));
    sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually(() => events.clients === 1, 3_000, 'attached');
    // What a refresh at 5,000 nodes sends in one tick: two lists of ~3× the cap, then the status.
    const list = { nodes: 'n'.repeat(768 * 1024) };
    events.publish('nodes', list);
    events.publish('nodes', list);
    events.publish('status', { ok: true });
    await eventually(() => got.includes('event: status'), 5_000, 'the status after the lists');
    expect(got.match(/event: nodes/g)).toHaveLength(2);
    expect(events.dropped).toBe(0);
    expect(events.clients).toBe(1);
    sock.destroy();
    events.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('drops a consumer that stays behind the cap for stallMs, even below the hard cap', async () => {
    const events = new EventStream({
      maxBufferedBytes: 64 * 1024,
      stallMs: 300,
      hardMaxBufferedBytes: 64 * 1024 * 1024,
    });
    const server = createServer((_req, res) => events.attach(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const sock = connect(port, '127.0.0.1');
    sock.pause();
    sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually(() => events.clients === 1, 3_000, 'attached');
    events.publish('nodes', { blob: 'x'.repeat(8 * 1024 * 1024) }); // past the socket buffers: behind
    const behindAt = Date.now();
    await eventually(
      () => (events.publish('status', { t: Date.now() }), events.clients === 0),
      5_000,
      'the stalled consumer dropped',
    );
    expect(Date.now() - behindAt).toBeGreaterThanOrEqual(300);
    expect(events.dropped).toBe(1);
    sock.destroy();
    events.close();
    await new Promise<void>((r) => server.close(() => r()));
  });
});
