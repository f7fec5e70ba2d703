/**
 * Issue #11: a start without network (the list endpoint refuses) must not leave Gatehop without
 * nodes until the 20-minute refresh. The endpoint comes up later on the same port; the list is
 * fetched by the back-off retry, and /status says what it is waiting for throughout.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { statusSchema, type Status } from '../../core/api/index.js';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { LogTap } from '../../core/common/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { until } from '../helpers/fds.js';
import { vpnGateCsv } from '../helpers/vpngate-fixtures.js';
import { freePort } from '../helpers/ports.js';

describe('a start while the list endpoint is down', () => {
  let app: RunningApp | null = null;
  let server: Server | null = null;
  afterAll(async () => {
    await app?.stop();
    if (server)
      await new Promise<void>((r) => {
        server!.closeAllConnections();
        server!.close(() => r());
      });
  });

  it('reports that it waits for the network, then fetches the list by itself once the endpoint answers', async () => {
    const apiPort = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-late-'));
    const tap = new LogTap();
    const lines: string[] = [];
    tap.subscribe((l) => lines.push(l.msg));
    const logger = pino({ level: 'info', base: undefined }, pino.multistream([{ level: 'info', stream: tap.stream }]));
    const config = buildConfig(
      { recovery: { initialMs: 200, maxMs: 1000 }, selector: { probe: { timeoutMs: 300 } } },
      {
        egress: 'vpngate',
        api: [`http://127.0.0.1:${apiPort}/api/iphone/`],
        listen: '127.0.0.1:0',
        admin: '127.0.0.1:0',
        dataDir,
        logFile: 'off',
      },
    );
    app = await startApp(config, logger, { logTap: tap, unsafeLoopbackNodes: true });
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const status = async (): Promise<Status> =>
      statusSchema.parse((await apiRequest(app!.listening.admin!.port, 'GET', '/status', { token })).json());

    expect(app.nodes!.nodes).toHaveLength(0);
    let s: Status | undefined;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      s = await status();
      if (s.network.state === 'waiting' && s.network.attempts >= 1) break;
    }
    expect(s!.network).toMatchObject({ state: 'waiting', reason: 'no-node-list' });
    expect(s!.active).toBeNull();
    expect(lines.some((m) => m.startsWith('waiting for the network'))).toBe(true);

    // The "network comes up": the endpoint now answers on the port Gatehop keeps asking.
    let hits = 0;
    server = createServer((req, res) => {
      // The list; its site's mirror directory (/en/sites.aspx, read since #20) is another request.
      if (req.url?.startsWith('/api/iphone/')) hits++;
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(
        vpnGateCsv([
          { host: 'public-vpn-1', ip: '127.0.0.1' },
          { host: 'public-vpn-2', ip: '127.0.0.1' },
        ]),
      );
    });
    await new Promise<void>((r) => server!.listen(apiPort, '127.0.0.1', () => r()));

    await until(() => (app!.nodes!.nodes.length === 2 ? true : undefined), 10_000, 'the list to be fetched');
    expect(hits).toBe(1);
    // The fixture's nodes do not serve OpenVPN: still waiting, now for a node that answers.
    let network: Status['network'] | undefined;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      network = (await status()).network;
      if (network.reason === 'no-reachable-node') break;
    }
    expect(network).toMatchObject({ state: 'waiting', reason: 'no-reachable-node' });
    expect(lines.some((m) => /retry \d+: no node list yet/.test(m))).toBe(true);
  });
});
