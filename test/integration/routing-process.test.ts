import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from '../../core/app/index.js';
import { startRoutingApp } from '../helpers/routing-app.js';
import { curl } from '../helpers/curl.js';
import { socksConnect } from '../helpers/socks-client.js';

/** Issue #33: PROCESS-NAME and PROCESS-PATH rules match the real program behind a connection (Linux: /proc). */
describe.runIf(process.platform === 'linux')('routing by the local program (#33)', () => {
  let app: RunningApp;
  let web: Server;
  let port = 0;
  beforeAll(async () => {
    web = createServer((_q, r) => r.end('reached'));
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
    port = (web.address() as AddressInfo).port;
    app = await startRoutingApp(['PROCESS-NAME,curl,REJECT', 'MATCH,DIRECT']);
  });
  afterAll(async () => {
    await app.stop();
    await new Promise<void>((r) => web.close(() => r()));
  });

  it('a real curl is refused by PROCESS-NAME,curl while this Node process gets through', async () => {
    const c = await curl(['--socks5', `127.0.0.1:${app.listening.proxy.port}`, `http://127.0.0.1:${port}/`]);
    expect(c.code).not.toBe(0);
    expect(c.stderr).toMatch(/not allowed|ruleset|connection to proxy closed|SOCKS5/i);
    // This process is node, not curl: its CONNECT succeeds.
    const { client, reply } = await socksConnect(app.listening.proxy.port, '127.0.0.1', port);
    expect(reply[1]).toBe(0x00);
    client.destroy();
    expect(app.proxy.stats.routed.REJECT).toBe(1);
  });
});
