import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { ErrorCodes, GATEHOP_VERSION, isGatehopError } from '../common/index.js';
import { GROUP_NAME } from '../groups/index.js';
import type { AdminCore } from './admin-core.js';
import { subscribeClashLogs, trafficMeter } from './clash-streams.js';
import {
  configsOf,
  FROM_CLASH,
  groupOf,
  nodeNames,
  PROVIDER_NAME,
  providerOf,
  proxiesOf,
  proxyOf,
  ruleProvidersOf,
  rulesOf,
} from './clash-views.js';
import { DashboardStorage, MAX_DASHBOARD_VALUE_BYTES } from './dashboard-storage.js';
import { ApiFailure, parseOr400, readJson, readText, sendEmpty, sendJson, supported } from './http-util.js';
import type { RequestDispatch } from './request-dispatch.js';
import { clashDelayQuerySchema, clashSelectSchema } from './schemas.js';
import { allSessions } from './views.js';

/** Clash answers its errors as `{message}`; Gatehop's `{error, message}` carries both. */
const clashError = (status: number, message: string): ApiFailure =>
  new ApiFailure(status, status === 404 ? 'GH_ERR_API_NOT_FOUND' : 'GH_ERR_API_BAD_REQUEST', message);

const patchSchema = z.record(z.string(), z.unknown());
/** A provider health check answers when its sweep ends, or after this long. */
const HEALTHCHECK_WAIT_MS = 30_000;

export interface ClashRouteDeps {
  /** Re-fetches the node list (PUT /providers/proxies/VPNGate). */
  refreshNodes(): { refreshId: number };
  /** Open HTTP streams, closed with the server. */
  streams: Set<ServerResponse>;
}

/**
 * The Clash/mihomo external-controller surface that yacd, metacubexd and zashboard call (the table
 * in core/api/README.md), each mapped onto Gatehop. GET /connections and DELETE
 * /connections/:id are Gatehop's own operations (one shape for both).
 */
export function registerClashRoutes(r: RequestDispatch, core: AdminCore, deps: ClashRouteDeps): void {
  const controller = () => supported(core.controller, 'this needs the vpngate egress (the core runs --egress direct)');
  const knownNode = (name: string): string => {
    if (!nodeNames(core).includes(name)) throw clashError(404, `Resource not found: no proxy ${name}`);
    return name;
  };
  const delay = async (res: ServerResponse, name: string, query: URLSearchParams): Promise<void> => {
    const q = parseOr400(clashDelayQuerySchema, Object.fromEntries(query), 'query');
    const c = controller();
    knownNode(name);
    try {
      sendJson(res, 200, { delay: Math.round(await c.delayTest(name, q.url, q.timeout)) });
    } catch (err) {
      if (isGatehopError(err, ErrorCodes.NODE_UNKNOWN)) throw err;
      const timedOut =
        (err as Error).name === 'TimeoutError' ||
        isGatehopError(err, ErrorCodes.EGRESS_CONNECT_TIMEOUT) ||
        /timed? ?out/i.test((err as Error).message);
      // Clash: 504 for a timeout, 503 for any other failure.
      sendJson(res, timedOut ? 504 : 503, {
        message: timedOut ? 'Timeout' : `An error occurred in the delay test: ${(err as Error).message}`,
      });
    }
  };
  const sweep = () => {
    if (!core.delaySweep) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'node tests need the vpngate egress');
    return core.delaySweep;
  };

  r.on('GET', '/', ({ res }) => sendJson(res, 200, { hello: 'clash' }));

  // mihomo's dashboard storage (zashboard keeps its settings here).
  const storage = core.dashboardStorageDir ? new DashboardStorage(core.dashboardStorageDir) : null;
  const store = (): DashboardStorage => {
    if (!storage) throw clashError(404, 'Resource not found: no dashboard storage here');
    return storage;
  };
  r.on('GET', '/storage/:key', ({ res, params }) => sendJson(res, 200, store().get(params.key!)));
  r.on('PUT', '/storage/:key', async ({ req, res, params }) => {
    store().put(params.key!, await readText(req, MAX_DASHBOARD_VALUE_BYTES));
    sendEmpty(res);
  });
  r.on('DELETE', '/storage/:key', ({ res, params }) => {
    store().delete(params.key!);
    sendEmpty(res);
  });
  // meta: the mihomo extensions metacubexd and zashboard use exist here (group delay, `fixed`
  // with DELETE to clear it, /memory, provider health checks); premium: no rule providers.
  r.on('GET', '/version', ({ res }) =>
    sendJson(res, 200, { version: `gatehop-${GATEHOP_VERSION}`, meta: true, premium: false }),
  );

  // ---- configs, rules ----
  r.on('GET', '/configs', ({ res }) => sendJson(res, 200, configsOf(core)));
  r.on('PATCH', '/configs', async ({ req, res }) => {
    const body = await readJson(req, patchSchema);
    const refused = Object.keys(body).filter((k) => k !== 'mode' && k !== 'log-level');
    if (refused.length > 0)
      throw clashError(
        400,
        `${refused.join(', ')}: not changeable through the Clash API in Gatehop (the proxy's address and ports are in Gatehop's Settings; it has no TUN, DNS or LAN switch of its own)`,
      );
    // Validate everything before changing anything.
    let auto: boolean | null = null;
    let routeMode: 'rule' | 'global' | 'direct' | null = null;
    if (body.mode !== undefined) {
      const m = scalarText(body.mode).toLowerCase();
      if (m === 'rule' || m === 'global' || m === 'direct') {
        if (!core.routing)
          throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'routing is not offered in this embedding');
        routeMode = m;
      } else if (m === 'auto' || m === 'manual') {
        // Gatehop's node selection (auto: it picks; manual: your pick), as earlier versions named it here.
        auto = m === 'auto';
        controller();
      } else throw clashError(400, `mode ${m}: one of rule, global, direct`);
    }
    let level: string | null = null;
    if (body['log-level'] !== undefined) {
      level = FROM_CLASH[scalarText(body['log-level']).toLowerCase()] ?? null;
      if (!level)
        throw clashError(400, `log-level ${scalarText(body['log-level'])}: one of debug, info, warning, error, silent`);
      if (!core.logLevel)
        throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'the log level is not changeable in this embedding');
    }
    if (auto !== null) controller().setMode(auto);
    if (routeMode) await core.routing!.setMode(routeMode);
    if (level) core.logLevel!.set(level);
    sendEmpty(res);
  });
  r.on('PUT', '/configs', async ({ req, res }) => {
    const body = await readJson(
      req,
      z.object({ path: z.string().optional(), payload: z.string().optional() }).passthrough(),
    );
    if (body.payload || body.path)
      throw clashError(
        400,
        'Gatehop does not load Clash configs; PUT /configs with no path or payload reloads its own config',
      );
    if (!core.reload) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'reload is not available in this embedding');
    await core.reload();
    sendEmpty(res);
  });
  r.on('GET', '/rules', ({ res }) => sendJson(res, 200, rulesOf(core)));
  r.on('GET', '/providers/rules', ({ res }) => sendJson(res, 200, ruleProvidersOf(core)));
  r.on('PUT', '/providers/rules/:name', async ({ params, res }) => {
    const done = await core.routing?.refresh(params.name!);
    if (!done) throw clashError(404, `Resource not found: no rule provider ${params.name}`);
    if (done.error) throw clashError(503, `rule provider ${params.name}: ${done.error}`);
    sendEmpty(res);
  });

  // ---- the node list as a proxy provider ----
  const provider = (name: string): void => {
    if (name !== PROVIDER_NAME || !core.nodes) throw clashError(404, `Resource not found: no provider ${name}`);
  };
  r.on('GET', '/providers/proxies', ({ res }) =>
    sendJson(res, 200, { providers: core.nodes ? { [PROVIDER_NAME]: providerOf(core) } : {} }),
  );
  r.on('GET', '/providers/proxies/:name', ({ params, res }) => {
    provider(params.name!);
    sendJson(res, 200, providerOf(core));
  });
  r.on('PUT', '/providers/proxies/:name', ({ params, res }) => {
    provider(params.name!);
    deps.refreshNodes();
    sendEmpty(res);
  });
  // Test all: answered when the checks are done, as mihomo does (yacd reads each proxy's history
  // right after the answer); a sweep that runs long is answered at 30 s with what it has.
  r.on('GET', '/providers/proxies/:name/healthcheck', async ({ params, res }) => {
    provider(params.name!);
    const s = sweep();
    s.start({ url: controller().urlTestUrl, timeoutMs: 5_000 });
    await s.wait(HEALTHCHECK_WAIT_MS);
    sendEmpty(res);
  });
  r.on('GET', '/providers/proxies/:name/:proxy/healthcheck', async ({ params, url, res }) => {
    provider(params.name!);
    await delay(res, params.proxy!, url.searchParams);
  });

  // ---- the group and its nodes ----
  r.on('GET', '/proxies', ({ res }) => sendJson(res, 200, { proxies: proxiesOf(core) }));
  r.on('GET', '/proxies/:name', ({ params, res }) =>
    sendJson(res, 200, params.name === GROUP_NAME ? groupOf(core) : proxyOf(core, knownNode(params.name!))),
  );
  r.on('PUT', '/proxies/:name', async ({ req, params, res }) => {
    if (params.name !== GROUP_NAME)
      throw clashError(400, `Selector update error: only the ${GROUP_NAME} group can be selected`);
    const { name } = await readJson(req, clashSelectSchema);
    knownNode(name);
    // A dashboard cannot ask "are you sure?": a node found to tamper is picked in Gatehop's own window.
    const verdict = core.honesty?.blocked(name);
    if (verdict)
      throw clashError(
        409,
        `${name} was found to tamper with traffic (${verdict}): pick it in Gatehop's window to use it anyway`,
      );
    controller().pick(name, `dashboard selected ${name}`);
    sendEmpty(res);
  });
  // mihomo: clears a pin on an automatic group. Gatehop: back to auto mode.
  r.on('DELETE', '/proxies/:name', ({ params, res }) => {
    if (params.name !== GROUP_NAME) throw clashError(400, `${params.name} is not a group`);
    controller().setMode(true);
    sendEmpty(res);
  });
  r.on('GET', '/proxies/:name/delay', ({ params, url, res }) => delay(res, params.name!, url.searchParams));
  // mihomo: tests every member, answers {name: delay} for those that answered. Gatehop tests every
  // node a few at a time and answers what finished within twice the per-node timeout; the rest
  // go on and land in the proxies' history.
  r.on('GET', '/group/:name/delay', async ({ params, url, res }) => {
    if (params.name !== GROUP_NAME) throw clashError(404, `Resource not found: no group ${params.name}`);
    const q = parseOr400(clashDelayQuerySchema, Object.fromEntries(url.searchParams), 'query');
    sweep().start({ url: q.url, timeoutMs: q.timeout });
    const results = await sweep().wait(Math.max(q.timeout * 2, 5_000));
    sendJson(res, 200, Object.fromEntries([...results].filter(([, ms]) => ms !== null)));
  });

  // ---- connections (GET and DELETE /connections/:id are the contract's) ----
  r.on('DELETE', '/connections', ({ res }) => {
    for (const { session } of allSessions(core)) session.forceClose('closed by the user (all)');
    sendEmpty(res);
  });

  // ---- HTTP streams (older dashboards; newer ones open the same as WebSockets) ----
  const stream = (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.flushHeaders(); // the stream is open now, before its first line
    deps.streams.add(res);
  };
  r.on('GET', '/logs', ({ url, res }) => {
    stream(res);
    const off = subscribeClashLogs(core, url.searchParams.get('level'), (line) => {
      if (res.writableLength > 64 * 1024) return void res.destroy();
      res.write(`${JSON.stringify(line)}\n`);
    });
    res.once('close', () => {
      off();
      deps.streams.delete(res);
    });
  });
  r.on('GET', '/traffic', ({ res }) => {
    stream(res);
    const sample = trafficMeter(core);
    const timer = setInterval(() => {
      // A client that stopped reading gets no more (and is dropped past a small backlog).
      if (res.writableLength > 64 * 1024) return void res.destroy();
      res.write(`${JSON.stringify(sample())}\n`);
    }, 1_000);
    res.once('close', () => {
      clearInterval(timer);
      deps.streams.delete(res);
    });
  });
}

/** A field a dashboard sent, as text: a string as it is, anything else as JSON (never "[object Object]"). */
function scalarText(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
}
