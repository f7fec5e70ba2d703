import { chmodSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import {
  detach,
  formatEndpoint,
  makePrivateDir,
  type Endpoint,
  type Logger,
  type TappedLine,
} from '../common/index.js';
import { checkAccess, mayStartPrograms, ownHosts, type AccessPolicy } from './access.js';
import type { AdminCore } from './admin-core.js';
import { registerClashRoutes } from './clash-routes.js';
import { ClashWebSockets } from './clash-ws.js';
import { EventStream } from './event-stream.js';
import { parseOr400, readJson, readText, sendEmpty, sendJson } from './http-util.js';
import { createMetrics, mirrorCounter, type Metrics } from './metrics.js';
import { RequestDispatch } from './request-dispatch.js';
import { externalUi, staticUi, type UiHandler } from './static-ui.js';
import { startRefresh } from './node-refresh.js';
import { failureOf, implementOperations, type OperationImpls } from './operations.js';
import { operations, opNames } from './contract.js';
import { z } from 'zod';
import { honestyOf, nodesView, statusView } from './views.js';

export interface AdminServerOptions {
  host: string;
  port: number;
  token: string;
  /** Extra origins allowed to call the API from a browser (e.g. a Clash dashboard's). */
  corsOrigins?: readonly string[];
  /** Names of this machine a browser may use for the API besides its address (config adminHosts). */
  hostNames?: readonly string[];
  sseMaxBufferedBytes?: number;
  heartbeatMs?: number;
  /**
   * A Unix socket to serve the same API on, in a folder only this user can enter (the data dir's
   * run/): the CLI's subcommands reach the core there, never by asking whatever answers on the
   * TCP port (#59). Not on Windows.
   */
  socketPath?: string;
  /** The dashboard's password login (dashboard-login.ts); absent: the token in the link is the only way in. */
  login?: {
    readonly available: boolean;
    verify(password: string, address: string, gone: () => boolean): Promise<boolean>;
  };
}

/**
 * The admin API: Gatehop's JSON endpoints, a Server-Sent Events stream, Prometheus metrics and a
 * Clash-compatible subset, on one loopback port behind a bearer token, Host and Origin checks.
 */
export class AdminServer {
  readonly #server: Server;
  /** The same API on opts.socketPath (null without one). */
  readonly #local: Server | null;
  /** Requests that came in by that socket. */
  readonly #viaSocket = new WeakSet<IncomingMessage>();
  readonly #router = new RequestDispatch();
  readonly #events: EventStream;
  readonly metrics: Metrics;
  /** The operations behind the routes; the desktop shell's IPC calls the same ones. */
  readonly operations: OperationImpls;
  readonly #log: Logger;
  readonly #unsubscribe: Array<() => void> = [];
  readonly #streams = new Set<ServerResponse>();
  readonly #websockets: ClashWebSockets;
  #policy: AccessPolicy | null = null;
  #address: string | null = null;
  #statusTimer: NodeJS.Timeout | null = null;
  #statusDirty = false;
  #nodesDirty = false;
  readonly #ui: UiHandler | null;
  readonly #externalUi: UiHandler | null;
  readonly #taps = new Set<(event: string, data: unknown) => void>();
  readonly #refreshes = { seq: 0, running: null as Promise<void> | null };

  constructor(
    private readonly core: AdminCore,
    private readonly opts: AdminServerOptions,
    logger: Logger,
  ) {
    this.#log = logger.child({ component: 'admin-api' });
    this.metrics = createMetrics(core);
    this.#ui = staticUi(core.uiDir);
    this.#externalUi = externalUi(core.externalUiDir);
    this.operations = implementOperations(
      core,
      () => this.#address,
      () => startRefresh(core, (event, data) => this.#publish(event, data), this.#refreshes),
    );
    this.#events = new EventStream({
      ...(opts.sseMaxBufferedBytes ? { maxBufferedBytes: opts.sseMaxBufferedBytes } : {}),
      ...(opts.heartbeatMs ? { heartbeatMs: opts.heartbeatMs } : {}),
    });
    mirrorCounter(
      this.metrics.registry,
      'gatehop_api_sse_dropped_total',
      'Event-stream clients dropped for not reading',
      [],
      () => [[{}, this.#events.dropped]],
    );
    this.#routes();
    const limits = { requestTimeout: 30_000, headersTimeout: 10_000, maxHeaderSize: 16 * 1024 };
    this.#server = createServer(limits, (req, res) => detach(this.#log, 'api-request', this.#handle(req, res)));
    // Only this user's processes reach a socket in a private folder, and no browser page reaches a
    // Unix socket at all: the Host check (a DNS-rebinding defence) has nothing to defend there, so
    // its requests are taken as addressed to this API. The token is asked as on TCP.
    this.#local = opts.socketPath
      ? createServer(limits, (req, res) => {
          if (this.#address) req.headers.host = this.#address;
          this.#viaSocket.add(req);
          detach(this.#log, 'api-request', this.#handle(req, res));
        })
      : null;
    this.#websockets = new ClashWebSockets(core, () => this.#policy);
    this.#server.on('upgrade', (req, socket, head) => this.#websockets.handleUpgrade(req, socket, head));
    mirrorCounter(
      this.metrics.registry,
      'gatehop_api_ws_dropped_total',
      'Dashboard WebSocket clients dropped for not reading',
      [],
      () => [[{}, this.#websockets.dropped]],
    );
    this.#wireEvents();
    // Live counters every second (rates and the traffic graph at 1 s, as proxy apps show them), for
    // SSE clients and in-process listeners alike (idle without either).
    this.#statusTimer = setInterval(() => this.#publishStatus(true), 1_000);
    this.#statusTimer.unref();
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
    this.#policy = {
      token: this.opts.token,
      isOwnHost: ownHosts(at.host, at.port, this.opts.hostNames ?? []),
      allowedOrigins: new Set(this.opts.corsOrigins ?? []),
    };
    // Without it the CLI cannot hand work to this core (it says so); the API itself is up.
    if (this.#local && this.opts.socketPath)
      await this.#listenLocal(this.#local, this.opts.socketPath).catch((err: Error) =>
        this.#log.warn(
          { event: 'admin-socket-unavailable', path: this.opts.socketPath, err: err.message },
          `the admin API's socket for the gatehop command could not listen: ${err.message}`,
        ),
      );
    return at;
  }

  /** The API on a Unix socket in a private folder (a socket left by a core that crashed is replaced). */
  async #listenLocal(server: Server, path: string): Promise<void> {
    makePrivateDir(dirname(path));
    rmSync(path, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    chmodSync(path, 0o600);
  }

  // ---- routes ----

  #routes(): void {
    const core = this.core;
    const r = this.#router;
    // Every operation of the contract, from the contract: route, input schema, success status.
    for (const name of opNames) {
      const op = operations[name];
      r.on(op.method, op.path, async ({ req, res, url, params }) => {
        // ?token= is the credential of clients that cannot send headers, not part of the input.
        const query = Object.fromEntries([...url.searchParams].filter(([k]) => k !== 'token'));
        const json = /^application\/json\b/i.test(req.headers['content-type'] ?? 'application/json');
        const raw =
          op.method === 'GET'
            ? query
            : op.method === 'DELETE'
              ? {}
              : op.textField && !json
                ? { [op.textField]: await readText(req, op.maxBodyBytes) }
                : await readJson(req, z.record(z.string(), z.unknown()), op.maxBodyBytes);
        const input = parseOr400(op.input, { ...raw, ...params }, op.method === 'GET' ? 'query' : 'body');
        const impl = this.operations[name] as (i: unknown) => unknown;
        const out = await impl(input);
        if (op.okStatus === 204) sendEmpty(res);
        else sendJson(res, op.okStatus ?? 200, out);
      });
    }
    r.on('GET', '/events', ({ res }) => {
      this.#streams.add(res);
      res.once('close', () => this.#streams.delete(res));
      this.#events.attach(res, [
        { event: 'status', data: statusView(core, this.#address) },
        { event: 'nodes', data: nodesView(core) },
        // The recent log, so a window that opens now has history in its Logs view.
        ...(core.logTap?.recent() ?? []).map((l) => ({ event: 'log', data: logEventOf(l) })),
      ]);
    });
    r.on('GET', '/metrics', async ({ res }) => {
      const text = await this.metrics.registry.metrics();
      res.writeHead(200, { 'content-type': this.metrics.registry.contentType, 'cache-control': 'no-store' });
      res.end(text);
    });
    registerClashRoutes(r, core, {
      streams: this.#streams,
      refreshNodes: () => startRefresh(core, (event, data) => this.#publish(event, data), this.#refreshes),
    });
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
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return sendJson(res, 405, {
          error: 'GH_ERR_API_METHOD',
          message: `${req.method} is not allowed on ${url.pathname}`,
        });
      if (url.pathname === '/ui/external' || url.pathname.startsWith('/ui/external/')) {
        if (!this.#externalUi)
          return sendJson(res, 404, {
            error: 'GH_ERR_API_NOT_FOUND',
            message:
              'no external dashboard: set externalUi to the folder of a Clash dashboard build (with its index.html)',
          });
        return this.#externalUi(req, res);
      }
      if (!this.#ui)
        return sendJson(res, 404, {
          error: 'GH_ERR_API_NOT_FOUND',
          message: 'the dashboard is not built (npm run build:ui)',
        });
      return this.#ui(req, res);
    }
    // The dashboard's password login (#63): asked before there is a token, so tokenless; Host and
    // Origin rules apply, and a wrong password waits its back-off (dashboard-login.ts).
    if (url.pathname === '/login') return this.#login(req, res, url);
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
        // Chromium asks before a public page (a hosted dashboard) reaches loopback (Private Network
        // Access); an origin allowed above may, as mihomo's allow-private-network lets it.
        ...(req.headers['access-control-request-private-network'] === 'true'
          ? { 'access-control-allow-private-network': 'true' }
          : {}),
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
    if (req.method === 'POST' && url.pathname.startsWith('/capture/')) {
      const may = mayStartPrograms(
        req.headers,
        this.#viaSocket.has(req) ? 'socket' : req.socket.remoteAddress,
        this.#policy!,
      );
      if (!may.ok) {
        sendJson(res, may.status, { error: may.error, message: may.message });
        return;
      }
    }
    try {
      const { handler, params } = this.#router.match(req.method ?? 'GET', url.pathname);
      await handler({ req, res, url, params });
    } catch (err) {
      const { status, code: error, message } = failureOf(err);
      if (status >= 500)
        this.#log.warn({ event: 'api-error', path: url.pathname, err: message }, `admin API ${url.pathname} failed`);
      if (res.headersSent) res.destroy();
      else sendJson(res, status, { error, message });
    }
  }

  async #login(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const pre = checkAccess(req.headers, url, this.#policy!, { tokenless: true });
    if (!pre.ok) return sendJson(res, pre.status, { error: pre.error, message: pre.message });
    const login = this.opts.login ?? null;
    if (req.method === 'GET') return sendJson(res, 200, { available: login?.available ?? false });
    if (req.method !== 'POST')
      return sendJson(res, 405, { error: 'GH_ERR_API_METHOD', message: `${req.method} is not allowed on /login` });
    if (!login?.available)
      return sendJson(res, 404, {
        error: 'GH_ERR_API_NOT_FOUND',
        message: 'no dashboard password is set (gatehop dashboard-password sets one)',
      });
    let password: string;
    try {
      ({ password } = await readJson(req, z.object({ password: z.string().min(1).max(1024) }).strict(), 4096));
    } catch (err) {
      const { status, code: error, message } = failureOf(err);
      return sendJson(res, status, { error, message });
    }
    const ok = await login.verify(password, req.socket.remoteAddress ?? '', () => req.socket.destroyed);
    if (!ok) {
      this.#log.info({ event: 'dashboard-login-failed', from: req.socket.remoteAddress }, 'a dashboard login failed');
      return sendJson(res, 401, { error: 'GH_ERR_API_LOGIN_FAILED', message: 'wrong password' });
    }
    sendJson(res, 200, { token: this.opts.token });
  }

  // ---- events ----

  #wireEvents(): void {
    const { controller, manager, selector, logTap, nodes } = this.core;
    const ev = { publish: (event: string, data: unknown) => this.#publish(event, data) };
    if (controller) {
      this.#unsubscribe.push(
        controller.onEvent((e) => {
          if (e.type === 'switch' || e.type === 'state')
            ev.publish(
              'switch',
              e.type === 'switch'
                ? { type: 'done', ...e.record }
                : { type: 'state', state: e.state, switchId: e.switchId, reason: e.reason },
            );
          if (e.type === 'switch' && e.record.outcome === 'switched') this.metrics.observeSwitch(e.record.durationMs);
          if (e.type === 'url-test')
            ev.publish('latency', {
              samples: [{ nodeId: e.nodeId, at: Date.now(), kind: 'url', ms: e.ms, success: e.ms !== null }],
            });
          if (e.type === 'mode' || e.type === 'pin-failed') ev.publish('switch', e);
          if (e.type === 'protocol-learned')
            ev.publish('switch', { type: 'protocol', preferred: e.preferred, blocked: e.blocked, reason: e.reason });
          this.#publishStatus(false);
        }),
      );
    }
    if (manager) {
      this.#unsubscribe.push(
        manager.onEvent((e) => {
          if (e.type === 'draining' || e.type === 'closed')
            ev.publish('drain', {
              type: e.type,
              egressId: e.egress.id,
              nodeId: (e.egress as { nodeId?: string }).nodeId ?? null,
              sessions: e.sessions,
              ...(e.type === 'draining' ? { graceEndsAt: e.graceEndsAt } : { reason: e.reason }),
            });
          this.#publishStatus(false);
        }),
      );
    }
    if (selector) {
      this.#unsubscribe.push(
        selector.onRanked((ranking) => {
          ev.publish('latency', {
            samples: ranking.ranked.map((r) => ({
              nodeId: r.node.id,
              at: ranking.at,
              kind: 'tcp' as const,
              ms: r.terms.rttMs,
              success: true,
            })),
          });
          this.#publishNodes();
        }),
      );
    }
    if (nodes) this.#unsubscribe.push(nodes.onChange(() => this.#publishNodes()));
    if (this.core.systemProxy) this.#unsubscribe.push(this.core.systemProxy.onEvent((e) => ev.publish('sysproxy', e)));
    if (this.core.profiles) this.#unsubscribe.push(this.core.profiles.onEvent((e) => ev.publish('profile', e)));
    if (this.core.delaySweep) this.#unsubscribe.push(this.core.delaySweep.onProgress((p) => ev.publish('test', p)));
    if (this.core.exit) this.#unsubscribe.push(this.core.exit.onChange((e) => ev.publish('exit', e)));
    if (this.core.honesty)
      this.#unsubscribe.push(
        this.core.honesty.onVerdict((r) => {
          ev.publish('honesty', { nodeId: r.nodeId, honesty: honestyOf(this.core, r.nodeId) });
          this.#publishNodes();
        }),
      );
    if (logTap) this.#unsubscribe.push(logTap.subscribe((l) => ev.publish('log', logEventOf(l))));
  }

  /**
   * Every event the SSE clients get, also for in-process listeners (the desktop shell's IPC), so
   * both see one feed. Returns an unsubscribe function.
   */
  onEvent(fn: (event: string, data: unknown) => void): () => void {
    this.#taps.add(fn);
    return () => this.#taps.delete(fn);
  }

  #publish(event: string, data: unknown): void {
    this.#events.publish(event, data);
    for (const fn of [...this.#taps]) {
      try {
        fn(event, data);
      } catch (err) {
        this.#log.error({ event: 'listener-failed', err: (err as Error).message }, 'an event listener threw');
      }
    }
  }

  /**
   * The node list goes out once per tick however many changes made it (a refresh both replaces
   * the list and ranks it): at thousands of nodes it is megabytes, built and sent once.
   */
  #publishNodes(): void {
    if (this.#nodesDirty) return;
    this.#nodesDirty = true;
    setImmediate(() => {
      this.#nodesDirty = false;
      if (this.#events.clients === 0 && this.#taps.size === 0) return;
      this.#publish('nodes', nodesView(this.core));
    });
  }

  /** Status goes out on changes (coalesced to one per tick) and every second for the live counters. */
  #publishStatus(periodic: boolean): void {
    if (this.#events.clients === 0 && this.#taps.size === 0) return;
    if (periodic) {
      this.#publish('status', statusView(this.core, this.#address));
      return;
    }
    if (this.#statusDirty) return;
    this.#statusDirty = true;
    setImmediate(() => {
      this.#statusDirty = false;
      this.#publish('status', statusView(this.core, this.#address));
    });
  }

  async close(): Promise<void> {
    for (const off of this.#unsubscribe.splice(0)) off();
    if (this.#statusTimer) clearInterval(this.#statusTimer);
    this.#statusTimer = null;
    this.metrics.close();
    this.#events.close();
    this.#websockets.close();
    for (const s of [...this.#streams]) s.destroy();
    for (const server of [this.#server, ...(this.#local?.listening ? [this.#local] : [])]) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    }
  }
}

/** A log line as the event stream carries it (the contract's log event). */
function logEventOf(l: TappedLine): { time: number; level: string; msg: string; event?: string } {
  return { time: l.time, level: l.level, msg: l.msg, ...(typeof l.event === 'string' ? { event: l.event } : {}) };
}
