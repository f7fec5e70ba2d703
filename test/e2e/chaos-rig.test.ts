/**
 * The chaos suite (#60): real SoftEther nodes on the rig, faults made inside the node's own
 * namespace (a killed server, a black hole, a full server, a silent resolver, a dead uplink, a
 * crawl; large packets dropped is test/e2e/mtu-rig.test.ts, since transfers survive it there), a
 * new request by a fresh name every 250 ms through a real core. Each shape: new requests work
 * again through another node; for a silent resolver, a download by address through the node (a healthy path)
 * arrives whole across the move; a node left for how it failed says so in /nodes and /status.
 * Outcomes only: the times go to `npm run bench:failover` (bench/README.md). Windows of 5 s and
 * short back-offs keep it within CI's budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodesSchema } from '../../core/api/index.js';
import {
  failoverLogTail,
  runShape,
  startFailoverCore,
  type FailoverCore,
  type Shape,
} from '../../bench/lib/failover.js';
import { apiRequest } from '../helpers/admin-client.js';
import { isRoot } from '../helpers/netns.js';
import { Rig } from '../rig/rig.js';

describe.skipIf(!isRoot)('node failure shapes on the rig (#60)', () => {
  let rig: Rig;
  let core: FailoverCore;
  beforeAll(async () => {
    rig = await Rig.up({ nodes: 3, openvpn: [], bigMib: 4, client: true });
    core = await startFailoverCore(rig, {
      health: { intervalMs: 5_000, minSwitchIntervalMs: 10_000 },
      selector: { backoff: { initialMs: 5_000, maxMs: 20_000 } },
    });
  }, 240_000);
  afterAll(async () => {
    await core?.stop();
    rig?.down();
  });

  const shape = async (s: Shape) => {
    const r = await runShape(rig, core, s, { timeoutMs: 90_000, windowMs: 5_000 });
    console.log(JSON.stringify(r));
    if (r.recoveredMs === null) {
      const nodes = nodesSchema.parse(
        (await apiRequest(core.adminPort, 'GET', '/nodes', { token: core.token })).json(),
      );
      const seen = nodes.nodes.map((n) => ({ id: n.id, state: n.state, excluded: n.excluded, left: n.left?.shape }));
      expect.fail(`${s}: no request through another node\n${JSON.stringify(seen)}\n${failoverLogTail(core.logFile)}`);
    }
    expect(r.recoveredVia).not.toBe(r.node);
    return r;
  };

  it('a killed node: new requests go through another node', async () => {
    const r = await shape('kill');
    // Its tunnel closed (a reset) or went silent, whichever the core saw first: told as such.
    const last = (await core.status()).switches.last;
    expect(last).toMatchObject({ from: r.node, outcome: 'switched', kind: 'urgent' });
    expect(['died', 'link']).toContain(last?.leftFor);
  }, 240_000);

  it('a black-holed node: new requests go through another node', async () => {
    await shape('blackhole');
  }, 240_000);

  it('the node in use dies while the next best is full (takes no new session): Gatehop moves on past the refusal', async () => {
    const r = await shape('full');
    expect(r.fullNode).toBeDefined();
    expect(r.recoveredVia).not.toBe(r.fullNode);
    expect(r.viaFullNode).toBe(0);
  }, 240_000);

  it('a node whose resolver goes silent is left and remembered; a download by address through it arrives whole', async () => {
    const r = await shape('dns-dead');
    expect(r.healthyDownloadOk, r.healthyDownloadError).toBe(true);
    expect((await core.status()).switches.last).toMatchObject({ from: r.node, leftFor: 'dns' });
    await expectLeft(r.node, 'dns');
  }, 240_000);

  it('a node whose uplink dies (the tunnel and its resolver answer) is left at once and remembered', async () => {
    const r = await shape('uplink-dead');
    expect((await core.status()).switches.last).toMatchObject({ from: r.node, kind: 'urgent', leftFor: 'connects' });
    await expectLeft(r.node, 'connects');
  }, 240_000);

  it('a node slowed to a crawl (50 KB/s) while the others are known to deliver far more is left as slow, and remembered', async () => {
    const r = await shape('crawl');
    // What the core had seen each node deliver, the crawling one included, before the fault.
    expect(Object.values(r.learnt!).every((bps) => bps > 5 * 50_000)).toBe(true);
    expect((await core.status()).switches.last).toMatchObject({ from: r.node, kind: 'auto', leftFor: 'slow' });
    await expectLeft(r.node, 'slow');
  }, 240_000);

  async function expectLeft(node: string, why: string): Promise<void> {
    const nodes = nodesSchema.parse(
      (await apiRequest(core.adminPort, 'GET', '/nodes', { token: core.token })).json(),
    ).nodes;
    expect(nodes.find((n) => n.id === node)?.left).toMatchObject({ shape: why });
  }
});
