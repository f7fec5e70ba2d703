/**
 * Where the bytes went (#64): the ledger adds each ended flow to its day's row (network, node,
 * route, rule, program, device), counts what is not written yet, keeps days for the retention and
 * no more rows than its cap, exports CSV that reads back as the rows, and erases everything; the
 * closed-connection list stays bounded under a flood. A real SQLite file throughout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import type { FlowRecord } from '../../core/contracts/index.js';
import { Store } from '../../core/store/index.js';
import { CSV_COLUMNS, TrafficBook, dayOf, daysBefore } from '../../core/traffic/index.js';

const log = silentLogger();
const dirs: string[] = [];
const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of open.splice(0)) o.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function storeAt(): { path: string; store: Store } {
  const dir = mkdtempSync(join(tmpdir(), 'gatehop-traffic-'));
  dirs.push(dir);
  const path = join(dir, 'gatehop.db');
  const store = new Store({ path, logger: log });
  open.push(store);
  return { path, store };
}

const NOW = Date.parse('2026-12-07T15:00:00');
function flow(over: Partial<FlowRecord> = {}): FlowRecord {
  return {
    id: '1',
    listener: 'local',
    kind: 'socks5',
    client: '127.0.0.1:50000',
    user: null,
    host: 'example.org',
    port: 443,
    route: 'TUNNEL',
    rule: 'MATCH',
    rulePayload: '',
    nodeId: 'node-a',
    program: null,
    bytesUp: 100,
    bytesDown: 1000,
    startedAt: NOW - 5000,
    endedAt: NOW,
    end: 'closed',
    errCode: null,
    ...over,
  };
}

function book(
  store: Store | null,
  now = () => NOW,
  network = { key: 'net1', label: 'wlan0 192.168.1.x' },
): TrafficBook {
  const b = new TrafficBook({
    repo: store?.traffic ?? null,
    settings: store,
    network: () => network,
    logger: log,
    flushMs: 3_600_000,
    now,
  });
  open.unshift(b); // closed before its store
  return b;
}

describe('TrafficBook', () => {
  it('adds flows up by node, network, route, rule, program and device, before and after they are written', () => {
    const { store } = storeAt();
    const b = book(store);
    b.record(flow(), '');
    b.record(flow({ nodeId: 'node-b', bytesUp: 1, bytesDown: 2 }), '');
    b.record(
      flow({ route: 'DIRECT', nodeId: null, rule: 'DOMAIN-SUFFIX', rulePayload: 'ir', bytesUp: 10, bytesDown: 20 }),
      '',
    );
    b.record(flow({ program: 'curl', bytesUp: 5, bytesDown: 5 }), "Mum's phone");
    const before = b.summary(7, false);
    b.flush();
    const after = b.summary(7, false);
    for (const s of [before, after]) {
      expect(s.total).toEqual({ up: 116, down: 1027, flows: 4 });
      expect(s.byNode.find((p) => p.key === 'node-a')).toMatchObject({ up: 105, down: 1005, flows: 2 });
      expect(s.byNode.find((p) => p.key === '')).toMatchObject({ up: 10, down: 20 });
      expect(s.byRoute.map((p) => [p.key, p.up + p.down])).toEqual([
        ['TUNNEL', 1113],
        ['DIRECT', 30],
      ]);
      expect(s.byRule.find((p) => p.key === 'DOMAIN-SUFFIX,ir')?.down).toBe(20);
      expect(s.byProgram.find((p) => p.key === 'curl')?.flows).toBe(1);
      expect(s.byDevice.find((p) => p.key === "Mum's phone")?.up).toBe(5);
      expect(s.byNetwork).toEqual([{ key: 'net1', label: 'wlan0 192.168.1.x', up: 116, down: 1027, flows: 4 }]);
      expect(s.days).toHaveLength(7);
      expect(s.days.at(-1)).toEqual({ day: dayOf(NOW), tunnel: 1113, direct: 30, up: 116, down: 1027 });
    }
    expect(b.summary(7, true).total).toEqual({ up: 106, down: 1007, flows: 3 });
    expect(b.today()).toEqual({ day: '2026-12-07', up: 116, down: 1027, tunnel: 1113 });
  });

  it('adds a second write to the day’s row instead of a second row, and a flow counts on the day it ended', () => {
    const { store } = storeAt();
    const b = book(store);
    b.record(flow(), '');
    b.flush();
    b.record(flow(), '');
    b.record(flow({ endedAt: Date.parse('2026-12-06T23:59:59') }), '');
    b.flush();
    const rows = store.traffic.trafficRows('2026-12-01', '2026-12-31');
    expect(rows.map((r) => [r.day, r.bytesDown, r.flows])).toEqual([
      ['2026-12-06', 1000, 1],
      ['2026-12-07', 2000, 2],
    ]);
  });

  it('reads the past days once, yet shows a flow that ended yesterday and was written after that', () => {
    const { store } = storeAt();
    const b = book(store);
    b.record(flow({ endedAt: NOW - 86_400_000 }), '');
    b.flush();
    expect(b.summary(7, false).total.flows).toBe(1);
    // Written after midnight, but it ended before: yesterday's sum changes.
    b.record(flow({ endedAt: NOW - 86_400_000 }), '');
    b.flush();
    const s = b.summary(7, false);
    expect(s.total.flows).toBe(2);
    expect(s.days.at(-2)!.down).toBe(2000);
    b.record(flow(), '');
    b.flush();
    expect(b.summary(7, false).total.flows).toBe(3);
  });

  it('deletes days past the retention at a flush, and keeps what is inside it', () => {
    const { store } = storeAt();
    const b = book(store);
    b.setOptions({ retentionDays: 3 });
    for (let d = 0; d < 6; d++) b.record(flow({ endedAt: NOW - d * 86_400_000 }), '');
    b.flush();
    const days = store.traffic.trafficRows('2000-01-01', '2100-01-01').map((r) => r.day);
    expect(days).toEqual([daysBefore(NOW, 2), daysBefore(NOW, 1), dayOf(NOW)]);
  });

  it('deletes the oldest whole days once the table holds more rows than its cap, never the newest day', () => {
    const { store } = storeAt();
    const rows = [];
    for (let d = 0; d < 10; d++)
      for (let n = 0; n < 5; n++)
        rows.push({
          day: daysBefore(NOW, d),
          network: 'k',
          node: `n${n}`,
          route: 'TUNNEL',
          rule: '',
          program: '',
          device: '',
          bytesUp: 1,
          bytesDown: 1,
          flows: 1,
        });
    store.traffic.addTraffic(rows, [{ key: 'k', label: 'L', firstSeen: 0, lastSeen: 0 }]);
    expect(store.traffic.pruneTraffic('2000-01-01', 22)).toBe(30);
    expect(new Set(store.traffic.trafficRows('2000-01-01', '2100-01-01').map((r) => r.day)).size).toBe(4);
    // A single day bigger than the cap stays.
    expect(store.traffic.pruneTraffic('2000-01-01', 1)).toBe(15);
    expect(store.traffic.trafficRows('2000-01-01', '2100-01-01')).toHaveLength(5);
    expect(store.traffic.trafficNetworks()).toHaveLength(1);
  });

  it('exports CSV that reads back as the rows, a formula-looking name defused', () => {
    const { store } = storeAt();
    const b = book(store);
    b.record(flow({ nodeId: '=HYPERLINK("x")', program: 'a, "b"' }), 'phone\nx');
    b.record(flow({ route: 'DIRECT', nodeId: null }), '');
    const { filename, csv } = b.csv(30);
    expect(filename).toBe(`gatehop-traffic-${daysBefore(NOW, 29)}-to-2026-12-07.csv`);
    const back = parse(csv, { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(back[0]!)).toEqual([...CSV_COLUMNS]);
    const rows = b.summary(30, false);
    expect(back.reduce((n, r) => n + Number(r.bytes_down), 0)).toBe(rows.total.down);
    const odd = back.find((r) => r.route === 'TUNNEL')!;
    expect(odd).toMatchObject({
      node: `'=HYPERLINK("x")`,
      program: 'a, "b"',
      device: 'phone\nx',
      network_label: 'wlan0 192.168.1.x',
    });
  });

  it('erases every count, network and closed connection, written or not', () => {
    const { store } = storeAt();
    const b = book(store);
    b.setOptions({ keepClosed: true });
    b.record(flow(), '');
    b.flush();
    b.record(flow(), '');
    b.erase();
    expect(b.summary(30, false).total).toEqual({ up: 0, down: 0, flows: 0 });
    expect(b.closed('', 100).connections).toEqual([]);
    b.flush();
    expect(store.traffic.trafficRows('2000-01-01', '2100-01-01')).toEqual([]);
    expect(store.traffic.trafficNetworks()).toEqual([]);
    expect(store.traffic.closedFlows()).toEqual([]);
  });

  it('keeps closed connections across a restart only when the user turned that on', () => {
    const { path, store } = storeAt();
    const b = book(store);
    b.record(flow({ id: 'before' }), '');
    b.setOptions({ keepClosed: true });
    b.record(flow({ id: 'after', host: 'kept.example' }), '');
    b.close();
    store.close();
    const again = new Store({ path, logger: log });
    open.push(again);
    const b2 = book(again);
    expect(b2.options.keepClosed).toBe(true);
    expect(b2.closed('', 10).connections.map((c) => c.id)).toEqual(['after']);
    b2.setOptions({ keepClosed: false });
    expect(again.traffic.closedFlows()).toEqual([]);
  });

  it('reads malformed stored options as the defaults', () => {
    const { store } = storeAt();
    store.setSetting('traffic.options', '{"retentionDays": -4');
    expect(book(store).options).toEqual({ retentionDays: 90, closedMax: 1000, keepClosed: false });
    store.setSetting('traffic.options', '{"retentionDays": 0, "keepClosed": true}');
    expect(book(store).options.retentionDays).toBe(90);
  });

  it('counts in memory without a database, pruned by the retention too', () => {
    let now = NOW;
    const b = book(null, () => now);
    b.setOptions({ retentionDays: 2 });
    b.record(flow(), '');
    b.flush();
    expect(b.today().down).toBe(1000);
    now += 3 * 86_400_000;
    b.flush();
    expect(b.summary(10, false).total.flows).toBe(0);
  });
});

describe('closed connections', () => {
  it('stay bounded in rows and bytes under a flood of short connections, newest first', () => {
    const b = book(null);
    b.setOptions({ closedMax: 500 });
    for (let i = 0; i < 100_000; i++) b.record(flow({ id: String(i), host: `h${i % 1000}.example` }), '');
    const c = b.closed('', 10_000);
    expect(c.held).toBe(500);
    expect(c.connections).toHaveLength(500);
    expect(c.connections[0]!.id).toBe('99999');
    expect(b.closed('h700.example', 10).connections.map((x) => x.id)).toEqual(['99700']);
  });

  it('bound their bytes whatever the row limit: long names push old rows out sooner', () => {
    const b = book(null);
    b.setOptions({ closedMax: 10_000 });
    const long = 'x'.repeat(2000);
    for (let i = 0; i < 10_000; i++) b.record(flow({ id: String(i), host: `${long}${i}` }), '');
    const held = b.closed('', 10_000).held;
    expect(held).toBeLessThan(10_000);
    expect(held * 2200).toBeLessThan(4 * 1024 * 1024 * 1.25);
  });

  it('are found by every word of a search, in host, rule, node, program and how they ended', () => {
    const b = book(null);
    b.record(flow({ id: 'a', host: 'video.example', end: 'reset', errCode: 'ECONNRESET' }), '');
    b.record(flow({ id: 'b', host: 'mail.example', program: 'thunderbird', route: 'DIRECT', nodeId: null }), '');
    b.record(
      flow({
        id: 'c',
        host: 'ads.example',
        route: 'REJECT',
        nodeId: null,
        rule: 'DOMAIN-KEYWORD',
        rulePayload: 'ads',
        end: 'refused',
      }),
      '',
    );
    const ids = (q: string) => b.closed(q, 10).connections.map((c) => c.id);
    expect(ids('reset')).toEqual(['a']);
    expect(ids('THUNDERBIRD direct')).toEqual(['b']);
    expect(ids('keyword refused')).toEqual(['c']);
    expect(ids('node-a example')).toEqual(['a']);
  });
});
