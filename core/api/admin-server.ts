import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ErrorCodes, formatEndpoint, isGatehopError, type Endpoint, type Logger } from '../common/index.js';
import { checkAccess, allowedHostsFor, type AccessPolicy } from './access.js';
import type { AdminCore } from './admin-core.js';
import { registerClashRoutes } from './clash-routes.js';
import { ClashWebSockets } from './clash-ws.js';
import { EventStream } from './event-stream.js';
import { ApiFailure, parseOr400, readJson, sendEmpty, sendJson } from './http-util.js';
import { createMetrics, mirrorCounter, type Metrics } from './metrics.js';
import { Router } from './router.js';
import { latencyQuerySchema, modeRequestSchema, switchRequestSchema } from './schemas.js';
import { staticUi, type UiHandler } from './static-ui.js';
import { registerUiRoutes, wireSysproxyEvents } from './ui-routes.js';
import { connectionsView, nodesView, statusView } from './views.js';

export interface AdminServerOptions {
  host: string;
  port: number;
  token: string;
  /** Extra origins allowed to call the API from a browser (e.g. a Clash dashboard's). */
  corsOrigins?: readonly string[];
  sseMaxBufferedBytes?: number;
  heartbeatMs?: number;
}

/**
 * The admin API: Gatehop's JSON endpoints, a Server-Sent Events stream, Prometheus metrics and a
 * Clash-compatible subset, on one loopback port behind a bearer token, Host and Origin checks.
 */
export class AdminServer {
  readonly #server: Server;
  readonly #router = new Router();
  readonly #events: EventStream;
  readonly metrics: Metrics;
  readonly #log: Logger;
  readonly #unsubscribe: Array<() => void> = [];
  readonly #streams = new Set<ServerResponse>();
  readonly #websockets: ClashWebSockets;
  #policy: AccessPolicy | null = null;
  #address: string | null = null;
  #statusTimer: NodeJS.Timeout | null = null;
  #statusDirty = false;
  readonly #ui: UiHandler | null;
  readonly #refreshes = { seq: 0, running: null as Promise<void> | null };

  constructor(
    private readonly core: AdminCore,
    private readonly opts: AdminServerOptions,
    logger: Logger,
  ) {
    this.#log = logger.child({ component: 'admin-api' });
    this.metrics = createMetrics(core);
    this.#ui = staticUi(core.uiDir);
    this.#events = new EventStream({ ...(opts.sseMaxBufferedBytes ? { maxBufferedBytes: opts.sseMaxBufferedBytes } : {}), ...(opts.heartbeatMs ? { heartbeatMs: opts.heartbeatMs } : {}) });
    mirrorCounter(this.metrics.registry, 'gatehop_api_sse_dropped_total', 'Event-stream clients dropped for not reading', [], () => [[{}, this.#events.dropped]]);
    this.#routes();
    this.#server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000, maxHeaderSize: 16 * 1024 }, (req, res) => void this.#handle(req, res));
    this.#websockets = new ClashWebSockets(core, () => this.#policy);
    this.#server.on('upgrade', (req, socket, head) => this.#websockets.handleUpgrade(req, socket, head));
    mirrorCounter(this.metrics.registry, 'gatehop_api_ws_dropped_total', 'Dashboard WebSocket clients dropped for not reading', [], () => [[{}, this.#websockets.dropped]]);
    this.#wireEvents();
  }

  get address(): string | null {
    return this.#address;
  }

  get eventStream(): EventStream {
    return this.#events;
  }

  async listen(): Promise<Endpoint> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.opts.port, this.opts.host, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    const a = this.#server.address();
    const at = { host: this.opts.host, port: typeof a === 'object' && a ? a.port : this.opts.port };
    this.#address = formatEndpoint(at);
    this.#policy = { token: this.opts.token, allowedHosts: allowedHostsFor(at.host, at.port), allowedOrigins: new Set(this.opts.corsOrigins ?? []) };
    this.#statusTimer = setInterval(() => this.#publishStatus(true), 2_000);
    this.#statusTimer.unref();
    return at;
  }

  // ---- routes ----

  #routes(): void {
    const core = this.core;
    const r = this.#router;
    r.on('GET', '/status', ({ res }) => sendJson(res, 200, statusView(core, this.#address)));
    r.on('GET', '/nodes', ({ res }) => sendJson(res, 200, nodesView(core)));
    r.on('POST', '/switch', async ({ req, res }) => {
      const body = await readJson(req, switchRequestSchema);
      const c = this.#controller();
      const { switchId } = c.switchNow(body.nodeId ? { nodeId: body.nodeId } : {});
      sendJson(res, 202, { switchId });
    });
    r.on('POST', '/mode', async ({ req, res }) => {
      const body = await readJson(req, modeRequestSchema);
      const c = this.#controller();
      c.setMode(body.auto);
      sendJson(res, 200, { mode: c.mode, pinned: c.pinned });
    });
    r.on('GET', '/latency', ({ url, res }) => {
      const q = parseOr400(latencyQuerySchema, Object.fromEntries(url.searchParams), 'query');
      const since = q.sinceMs ?? Date.now() - 3600_000;
      sendJson(res, 200, { samples: core.store?.latency(q.nodeId ?? null, since) ?? [] });
    });
    r.on('GET', '/connections', ({ res }) => sendJson(res, 200, connectionsView(core)));
    r.on('DELETE', '/connections/:id', ({ params, res }) => {
      const s = [...core.proxy.sessions].find((x) => String(x.id) === params.id);
      if (!s) throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no connection ${params.id}`);
      s.forceClose('closed by the admin API');
      sendEmpty(res);
    });
    r.on('GET', '/events', ({ res }) => {
      this.#streams.add(res);
      res.once('close', () => this.#streams.delete(res));
      this.#events.attach(res, [
        { event: 'status', data: statusView(core, this.#address) },
        { event: 'nodes', data: nodesView(core) },
      ]);
    });
    r.on('GET', '/metrics', async ({ res }) => {
      const text = await this.metrics.registry.metrics();
      res.writeHead(200, { 'content-type': this.metrics.registry.contentType, 'cache-control': 'no-store' });
      res.end(text);
    });
    registerUiRoutes(r, core, (event, data) => this.#events.publish(event, data), this.#refreshes);
    registerClashRoutes(r, core, this.#streams);
  }

  #controller() {
    const c = this.core.controller;
    if (!c) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'switching needs the vpngate egress (this core runs --egress direct)');
    return c;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://admin.invalid');
    } catch {
      sendJson(res, 400, { error: 'GH_ERR_API_BAD_REQUEST', message: 'unreadable request target' });
      return;
    }
    // The dashboard's files hold no data: served without the token, Host and Origin rules apply.
    if (url.pathname === '/ui' || url.pathname.startsWith('/ui/')) {
      const pre = checkAccess(req.headers, url, this.#policy!, { tokenless: true });
      if (!pre.ok) return sendJson(res, pre.status, { error: pre.error, message: pre.message });
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'GH_ERR_API_METHOD', message: `${req.method} is not allowed on ${url.pathname}` });
      if (!this.#ui) return sendJson(res, 404, { error: 'GH_ERR_API_NOT_FOUND', message: 'the dashboard is not built (npm run build:ui)' });
      return this.#ui(req, res);
    }
    const verdict = checkAccess(req.headers, url, this.#policy!);
    if (verdict.ok && verdict.origin) {
      res.setHeader('access-control-allow-origin', verdict.origin);
      res.setHeader('vary', 'Origin');
    }
    if (req.method === 'OPTIONS' && req.headers.origin) {
      const pre = checkAccess(req.headers, url, this.#policy!, { tokenless: true });
      if (!pre.ok) {
        sendJson(res, pre.status, { error: pre.error, message: pre.message });
        return;
      }
      res.writeHead(204, {
        'access-control-allow-origin': req.headers.origin,
        'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
        'access-control-allow-headers': 'Authorization, Content-Type',
        'access-control-max-age': '600',
        vary: 'Origin',
      });
      res.end();
      return;
    }
    if (!verdict.ok) {
      if (verdict.status === 401) res.setHeader('www-authenticate', 'Bearer realm="gatehop"');
      sendJson(res, verdict.status, { error: verdict.error, message: verdict.message });
      return;
    }
    try {
      const { handler, params } = this.#router.match(req.method ?? 'GET', url.pathname);
      await handler({ req, res, url, params });
    } catch (err) {
      const [status, error, message] =
        err instanceof ApiFailure
          ? [err.status, err.error, err.message]
          : isGatehopError(err, ErrorCodes.NODE_UNKNOWN)
            ? [404, err.code, err.message]
            : isGatehopError(err, ErrorCodes.SWITCH_IN_PROGRESS) || isGatehopError(err, ErrorCodes.SYSPROXY_UNSUPPORTED)
              ? [409, err.code, err.message]
              : isGatehopError(err, ErrorCodes.CONFIG_INVALID)
                ? [400, err.code, err.message]
                : isGatehopError(err, ErrorCodes.SYSPROXY_DENIED)
                  ? [403, err.code, err.message]
              : isGatehopError(err)
                ? [502, err.code, err.message]
                : [500, 'GH_ERR_API_INTERNAL', (err as Error).message];
      if (status >= 500) this.#log.warn({ event: 'api-error', path: url.pathname, err: message }, `admin API ${url.pathname} failed`);
      if (res.headersSent) res.destroy();
      else sendJson(res, status, { error, message });
    }
  }

  // ---- events ----

  #wireEvents(): void {
    const { controller, manager, selector, logTap, nodes } = this.core;
    const ev = this.#events;
    if (controller) {
      this.#unsubscribe.push(
        controller.onEvent((e) => {
          if (e.type === 'switch' || e.type === 'state') ev.publish('switch', e.type === 'switch' ? { type: 'done', ...e.record } : { type: 'state', state: e.state, switchId: e.switchId, reason: e.reason });
          if (e.type === 'switch' && e.record.outcome === 'switched') this.metrics.observeSwitch(e.record.durationMs);
          if (e.type === 'url-test') ev.publish('latency', { nodeId: e.nodeId, at: Date.now(), kind: 'url', ms: e.ms, success: e.ms !== null });
          if (e.type === 'mode' || e.type === 'pin-failed') ev.publish('switch', e);
          this.#publishStatus(false);
        }),
      );
    }
    if (manager) {
      this.#unsubscribe.push(
        manager.onEvent((e) => {
          if (e.type === 'draining' || e.type === 'closed') ev.publish('drain', { type: e.type, egressId: e.egress.id, nodeId: (e.egress as { nodeId?: string }).nodeId ?? null, sessions: e.sessions, ...(e.type === 'draining' ? { graceEndsAt: e.graceEndsAt } : { reason: e.reason }) });
          this.#publishStatus(false);
        }),
      );
    }
    if (selector) {
      this.#unsubscribe.push(
        selector.onRanked((ranking) => {
          for (const r of ranking.ranked) ev.publish('latency', { nodeId: r.node.id, at: ranking.at, kind: 'tcp', ms: r.terms.rttMs, success: true });
          ev.publish('nodes', nodesView(this.core));
        }),
      );
    }
    if (nodes) this.#unsubscribe.push(nodes.onChange(() => ev.publish('nodes', nodesView(this.core))));
    const offSysproxy = wireSysproxyEvents(this.core, (event, data) => ev.publish(event, data));
    if (offSysproxy) this.#unsubscribe.push(offSysproxy);
    if (logTap) this.#unsubscribe.push(logTap.subscribe((l) => ev.publish('log', { time: l.time, level: l.level, msg: l.msg, ...(typeof l.event === 'string' ? { event: l.event } : {}) })));
  }

  /** Status goes out on changes (coalesced to one per tick) and every 2 s for the live counters. */
  #publishStatus(periodic: boolean): void {
    if (this.#events.clients === 0) return;
    if (periodic) {
      this.#events.publish('status', statusView(this.core, this.#address));
      return;
    }
    if (this.#statusDirty) return;
    this.#statusDirty = true;
    setImmediate(() => {
      this.#statusDirty = false;
      this.#events.publish('status', statusView(this.core, this.#address));
    });
  }

  async close(): Promise<void> {
    for (const off of this.#unsubscribe.splice(0)) off();
    if (this.#statusTimer) clearInterval(this.#statusTimer);
    this.#statusTimer = null;
    this.#events.close();
    this.#websockets.close();
    for (const s of [...this.#streams]) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
  }
}
