import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, silentLogger } from '../../core/common/index.js';
import { Store } from '../../core/store/index.js';
import { fetchNodeList, NodeList, type VpnGateNode } from '../../core/vpngate/index.js';
import { vpnGateCsv } from '../helpers/vpngate-fixtures.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); })));
});

/** A loopback endpoint that answers with `body` (or hangs with 'hang'); counts its hits. */
async function endpoint(body: string | 'hang' | ((n: number) => string), status = 200): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    if (body === 'hang') return;
    res.writeHead(status, { 'Content-Type': 'text/plain' });
    res.end(typeof body === 'function' ? body(hits) : body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/iphone/`, hits: () => hits };
}

const good = vpnGateCsv([{ host: 'public-vpn-1', ip: '203.0.113.1' }, { host: 'public-vpn-2', ip: '203.0.113.2' }]);
const log = silentLogger();

describe('fetching the node list', () => {
  it('takes the first endpoint that works and does not ask the later ones', async () => {
    const a = await endpoint(good);
    const b = await endpoint(good);
    const list = await fetchNodeList({ endpoints: [a.url, b.url], logger: log });
    expect(list.source).toBe(a.url);
    expect(list.nodes).toHaveLength(2);
    expect(b.hits()).toBe(0);
  });

  it('moves on past an HTML placeholder, an empty body, a truncated list, an error status and a hang', async () => {
    const html = await endpoint('<html><body>Please wait</body></html>');
    const empty = await endpoint('');
    const truncated = await endpoint(good.slice(0, good.length - 10));
    const error = await endpoint('nope', 503);
    const hang = await endpoint('hang');
    const ok = await endpoint(good);
    const list = await fetchNodeList({ endpoints: [html.url, empty.url, truncated.url, error.url, hang.url, ok.url], timeoutMs: 300, attempts: 1, logger: log });
    expect(list.source).toBe(ok.url);
    expect([html.hits(), empty.hits(), truncated.hits(), error.hits(), hang.hits()]).toEqual([1, 1, 1, 1, 1]);
  });

  it('refuses a body over the size cap', async () => {
    const big = await endpoint(good + 'x'.repeat(200_000));
    await expect(fetchNodeList({ endpoints: [big.url], maxBytes: 100_000, attempts: 1, logger: log })).rejects.toMatchObject({
      code: ErrorCodes.LIST_FETCH_FAILED,
      message: expect.stringMatching(/exceeds 100000/),
    });
  });

  it('retries the whole list with backoff before giving up', async () => {
    const flaky = await endpoint((n) => (n < 2 ? '' : good));
    const list = await fetchNodeList({ endpoints: [flaky.url], attempts: 3, backoffMs: 10, logger: log });
    expect(flaky.hits()).toBe(2);
    expect(list.nodes).toHaveLength(2);
  });
});

describe('NodeList', () => {
  function cacheOf(store: Store) {
    return { load: () => store.loadNodeList<VpnGateNode>(), save: (l: { fetchedAt: number; source: string; nodes: VpnGateNode[] }) => store.saveNodeList(l) };
  }

  it('caches a good list and serves the cache when every endpoint fails', async () => {
    const store = new Store({ path: ':memory:', logger: log });
    const ok = await endpoint(good);
    const first = new NodeList({ endpoints: [ok.url], staticNodes: [], cache: cacheOf(store), logger: log });
    await first.start();
    expect(first.nodes).toHaveLength(2);
    first.close();
    const down = await endpoint('', 500);
    const second = new NodeList({ endpoints: [down.url], staticNodes: [], cache: cacheOf(store), logger: log, fetch: { attempts: 1 } });
    await second.start();
    expect(second.nodes.map((n) => n.id)).toEqual(['public-vpn-1', 'public-vpn-2']);
    expect(second.source).toMatch(/^cache/);
    await second.refresh();
    expect(second.nodes).toHaveLength(2); // a failed refresh keeps what it had
    second.close();
    store.close();
  });

  it('with only static nodes fetches nothing', async () => {
    const store = new Store({ path: ':memory:', logger: log });
    const staticNode = { id: 'file:mine.ovpn' } as VpnGateNode;
    const list = new NodeList({ endpoints: [], staticNodes: [staticNode], cache: cacheOf(store), logger: log });
    await list.start();
    expect(list.nodes).toEqual([staticNode]);
    list.close();
    store.close();
  });
});
