import type { ServerResponse } from 'node:http';
import { ErrorCodes, GATEHOP_VERSION, isGatehopError } from '../common/index.js';
import { GROUP_NAME } from '../groups/index.js';
import type { AdminCore } from './admin-core.js';
import { subscribeClashLogs, trafficMeter } from './clash-streams.js';
import { ApiFailure, parseOr400, readJson, sendEmpty, sendJson } from './http-util.js';
import type { Router } from './router.js';
import { clashDelayQuerySchema, clashSelectSchema } from './schemas.js';

/**
 * The subset of the Clash external-controller API that dashboards (yacd, metacubexd, zashboard)
 * use to show and pick proxies: one Selector group "GATEHOP" whose members are the nodes (LoadBalance
 * while several tunnels balance in auto mode).
 * GET /connections and DELETE /connections/:id are shared with Gatehop's own API (one shape).
 */
export function registerClashRoutes(r: Router, core: AdminCore, streams: Set<ServerResponse>): void {
  const nodeNames = (): string[] => core.nodes?.nodes.map((n) => n.id) ?? [];
  const history = (nodeId: string) => {
    const d = core.controller?.urlDelays.get(nodeId);
    return d && d.ms !== null ? [{ time: new Date(d.at).toISOString(), delay: Math.round(d.ms) }] : [];
  };
  const proxyOf = (nodeId: string) => ({ name: nodeId, type: 'OpenVPN', udp: true, history: history(nodeId) });
  // Balancing over several tunnels (auto mode, tunnels > 1) is Clash's load-balance group, which its
  // API spells LoadBalance; "now" is then the primary member.
  const balancing = (): boolean => core.controller?.mode === 'auto' && (core.controller?.balance.tunnels ?? 1) > 1;
  const group = () => ({
    name: GROUP_NAME,
    type: balancing() ? 'LoadBalance' : 'Selector',
    udp: true,
    history: [],
    now: core.controller?.active?.node.id ?? core.controller?.pinned ?? '',
    all: nodeNames(),
  });

  r.on('GET', '/', ({ res }) => sendJson(res, 200, { hello: 'clash' }));
  r.on('GET', '/version', ({ res }) => sendJson(res, 200, { version: `gatehop-${GATEHOP_VERSION}`, meta: false }));
  r.on('GET', '/proxies', ({ res }) => {
    const proxies: Record<string, unknown> = { [GROUP_NAME]: group() };
    for (const id of nodeNames()) proxies[id] = proxyOf(id);
    sendJson(res, 200, { proxies });
  });
  r.on('GET', '/proxies/:name', ({ params, res }) => {
    if (params.name === GROUP_NAME) return sendJson(res, 200, group());
    if (!nodeNames().includes(params.name!)) throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no proxy ${params.name}`);
    sendJson(res, 200, proxyOf(params.name!));
  });
  r.on('PUT', '/proxies/:name', async ({ req, params, res }) => {
    if (params.name !== GROUP_NAME) throw new ApiFailure(400, 'GH_ERR_API_BAD_REQUEST', `only the ${GROUP_NAME} group can be selected`);
    const { name } = await readJson(req, clashSelectSchema);
    const c = core.controller;
    if (!c) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'switching needs the vpngate egress');
    if (!nodeNames().includes(name)) throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no proxy ${name}`);
    c.switchNow({ nodeId: name, reason: `dashboard selected ${name}` });
    sendEmpty(res);
  });
  r.on('GET', '/proxies/:name/delay', async ({ params, url, res }) => {
    const q = parseOr400(clashDelayQuerySchema, Object.fromEntries(url.searchParams), 'query');
    const c = core.controller;
    if (!c) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', 'delay tests need the vpngate egress');
    if (!nodeNames().includes(params.name!)) throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no proxy ${params.name}`);
    try {
      sendJson(res, 200, { delay: Math.round(await c.delayTest(params.name!, q.url, q.timeout)) });
    } catch (err) {
      if (isGatehopError(err, ErrorCodes.NODE_UNKNOWN)) throw err;
      const timedOut = (err as Error).name === 'TimeoutError' || isGatehopError(err, ErrorCodes.EGRESS_CONNECT_TIMEOUT) || /timed? ?out/i.test((err as Error).message);
      // Clash: 504 for a timeout, 503 for any other failure.
      sendJson(res, timedOut ? 504 : 503, { message: timedOut ? 'Timeout' : `An error occurred in the delay test: ${(err as Error).message}` });
    }
  });
  r.on('GET', '/logs', ({ url, res }) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.flushHeaders(); // the stream is open now, before its first line
    streams.add(res);
    const off = subscribeClashLogs(core, url.searchParams.get('level'), (line) => {
      if (res.writableLength > 64 * 1024) return void res.destroy();
      res.write(`${JSON.stringify(line)}\n`);
    });
    res.once('close', () => {
      off();
      streams.delete(res);
    });
  });
  r.on('GET', '/traffic', ({ res }) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.flushHeaders(); // the stream is open now, before its first line
    streams.add(res);
    const sample = trafficMeter(core);
    const timer = setInterval(() => {
      // A client that stopped reading gets no more (and is dropped past a small backlog).
      if (res.writableLength > 64 * 1024) return void res.destroy();
      res.write(`${JSON.stringify(sample())}\n`);
    }, 1_000);
    res.once('close', () => {
      clearInterval(timer);
      streams.delete(res);
    });
  });
}
