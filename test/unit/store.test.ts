import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, truncateSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { MIGRATIONS, Store, WEAK_TLS_REMEMBER_MS } from '../../core/store/index.js';
import { isRoot } from '../helpers/netns.js';

const log = silentLogger();
const dir = (): string => mkdtempSync(join(tmpdir(), 'gh-store-'));

describe('Store', () => {
  it('creates the schema from an empty file and keeps data across reopen', () => {
    const path = join(dir(), 'g.db');
    const a = new Store({ path, logger: log });
    expect(a.schemaVersion).toBe(MIGRATIONS.length);
    a.setSelection({ group: 'GATEHOP', nodeId: 'n1', mode: 'manual' });
    a.saveHistory({ ...a.history('n1'), successes: 3, failures: 1 });
    a.addLatency({ nodeId: 'n1', at: Date.now(), kind: 'tcp', ms: 12.5, success: true });
    a.saveNodeList({ fetchedAt: 1000, source: 'test', nodes: [{ id: 'n1' }] });
    a.close();
    const b = new Store({ path, logger: log });
    expect(b.selection('GATEHOP')).toEqual({ group: 'GATEHOP', nodeId: 'n1', mode: 'manual' });
    expect(b.history('n1')).toMatchObject({ successes: 3, failures: 1 });
    expect(b.latency('n1', 0)).toHaveLength(1);
    expect(b.loadNodeList()).toEqual({ fetchedAt: 1000, source: 'test', via: 'direct', nodes: [{ id: 'n1' }] });
    expect(b.firstSeen('n1')).toEqual({ firstSeen: 1000, lastSeen: 1000 });
    expect(b.health).toBe('ok');
    b.close();
  });

  it('remembers per node that it refused modern TLS, for WEAK_TLS_REMEMBER_MS, across restarts, and forgets it with the node (#34)', () => {
    const path = join(dir(), 'g.db');
    const a = new Store({ path, logger: log });
    const now = Date.now();
    a.rememberWeakTls('old-node', now - WEAK_TLS_REMEMBER_MS - 1);
    a.rememberWeakTls('weak-node', now);
    a.rememberWeakTls('gone-node', now);
    a.close();
    const b = new Store({ path, logger: log });
    expect([...b.weakTlsNodes(now - WEAK_TLS_REMEMBER_MS)].sort()).toEqual(['gone-node', 'weak-node']);
    b.forgetNodes(['gone-node']);
    expect([...b.weakTlsNodes(0)].sort()).toEqual(['old-node', 'weak-node']);
    b.close();
  });

  it('migrates a database of the previous schema without losing its rows', () => {
    const path = join(dir(), 'old.db');
    const old = new Database(path);
    old.exec(MIGRATIONS[0]!);
    old.pragma('user_version = 1');
    old
      .prepare("INSERT INTO node_history (node_id, successes, failures, consecutive_failures) VALUES ('keep', 7, 2, 0)")
      .run();
    old.close();
    const s = new Store({ path, logger: log });
    expect(s.schemaVersion).toBe(MIGRATIONS.length);
    expect(s.history('keep')).toMatchObject({ successes: 7, failures: 2 });
    s.saveProxySnapshot({ http: 'x' });
    expect(s.loadProxySnapshot()).toEqual({ http: 'x' });
    s.close();
  });

  it('keeps a verdict’s clean checks in a row (v5, #59); a v4 verdict reads as none; forgetHonesty forgets verdicts alone', () => {
    const path = join(dir(), 'v4.db');
    const old = new Database(path);
    for (const m of MIGRATIONS.slice(0, 4)) old.exec(m);
    old.pragma('user_version = 4');
    old
      .prepare(
        "INSERT INTO node_honesty (node_id, verdict, evidence_json, inconclusive_json, checked_at, duration_ms, bytes, accepted) VALUES ('n', 'dns-tampering', '[]', '[]', 1, 2, 3, 1)",
      )
      .run();
    old.close();
    const s = new Store({ path, logger: log });
    expect(s.honestyRecords()).toEqual([expect.objectContaining({ nodeId: 'n', accepted: true, cleanChecks: 0 })]);
    s.saveHonesty({ ...s.honestyRecords()[0]!, cleanChecks: 2 });
    s.saveHistory({ ...s.history('n'), successes: 4 });
    expect(s.honestyRecords()[0]).toMatchObject({ verdict: 'dns-tampering', cleanChecks: 2 });
    s.forgetHonesty(['n']);
    expect(s.honestyRecords()).toEqual([]);
    expect(s.history('n')).toMatchObject({ successes: 4 });
    s.close();
  });

  it('keeps why a node was left and until when (v6, #60) across a restart; a v5 row reads as never left', () => {
    const path = join(dir(), 'v5.db');
    const old = new Database(path);
    for (const m of MIGRATIONS.slice(0, 5)) old.exec(m);
    old.pragma('user_version = 5');
    old
      .prepare("INSERT INTO node_history (node_id, successes, failures, consecutive_failures) VALUES ('n', 3, 1, 1)")
      .run();
    old.close();
    const s = new Store({ path, logger: log, flushMs: 0 });
    expect(s.history('n')).toMatchObject({ successes: 3, left: null });
    s.saveHistory({ ...s.history('n'), left: { shape: 'connects', at: 10, until: 20 } });
    s.close();
    const again = new Store({ path, logger: log });
    expect(again.history('n').left).toEqual({ shape: 'connects', at: 10, until: 20 });
    again.close();
  });

  it('moves a v2 cached list into the pool that remembers, with when each node was seen (issue #20)', () => {
    const path = join(dir(), 'v2.db');
    const old = new Database(path);
    old.exec(MIGRATIONS[0]!);
    old.exec(MIGRATIONS[1]!);
    old.pragma('user_version = 2');
    old.prepare('INSERT INTO node_list (id, fetched_at, source, nodes_json) VALUES (1, 5000, ?, ?)').run(
      'https://www.vpngate.net/api/iphone/',
      JSON.stringify([
        { id: 'a', ip: '203.0.113.1' },
        { id: 'b', ip: '203.0.113.2' },
      ]),
    );
    old.prepare('INSERT INTO nodes (id, first_seen, last_seen) VALUES (?, ?, ?)').run('a', 1000, 5000);
    old.prepare('INSERT INTO nodes (id, first_seen, last_seen) VALUES (?, ?, ?)').run('b', 5000, 5000);
    old.prepare('INSERT INTO nodes (id, first_seen, last_seen) VALUES (?, ?, ?)').run('gone', 10, 20);
    old.close();
    const s = new Store({ path, logger: log });
    expect(s.loadListMeta()).toEqual({
      fetchedAt: 5000,
      source: 'https://www.vpngate.net/api/iphone/',
      via: 'direct',
      nodes: 2,
    });
    expect(s.loadPool(0)).toEqual([
      { node: { id: 'a', ip: '203.0.113.1' }, firstSeen: 1000, lastListed: 5000 },
      { node: { id: 'b', ip: '203.0.113.2' }, firstSeen: 5000, lastListed: 5000 },
    ]);
    s.close();
  });

  it.each([
    ['written over with garbage', (p: string) => writeFileSync(p, Buffer.alloc(64 * 1024, 0xab))],
    ['truncated mid-page', (p: string) => truncateSync(p, 1500)],
  ])('moves a database %s aside, starts empty, and keeps working', (_what, damage) => {
    const d = dir();
    const path = join(d, 'g.db');
    const s = new Store({ path, logger: log });
    s.saveHistory({ ...s.history('n1'), successes: 1 });
    s.close();
    damage(path);
    const again = new Store({ path, logger: log });
    expect(again.health).toBe('recovered');
    expect(again.history('n1').successes).toBe(0);
    again.saveHistory({ ...again.history('n2'), successes: 5 });
    expect(again.history('n2').successes).toBe(5);
    again.close();
    expect(readdirSync(d).some((f) => f.startsWith('g.db.damaged-'))).toBe(true);
  });

  it('falls back to memory when the file cannot be opened at all', () => {
    const d = dir();
    mkdirSync(join(d, 'g.db')); // a directory where the file should be
    const s = new Store({ path: join(d, 'g.db'), logger: log });
    expect(s.health).toBe('memory-only');
    s.setSetting('k', 'v');
    expect(s.setting('k')).toBe('v');
    s.close();
  });

  it.skipIf(!isRoot)('degrades to memory with a warning when the disk fills up, never crashing', () => {
    const d = dir();
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', d]);
    try {
      const s = new Store({ path: join(d, 'g.db'), logger: log, flushMs: 1 });
      for (let i = 0; i < 20_000 && s.health === 'ok'; i++) {
        s.addLatency({ nodeId: `node-${i % 50}`, at: Date.now(), kind: 'url', ms: i, success: true });
        if (i % 200 === 0) s.flush();
      }
      expect(s.health).toBe('memory-only');
      s.setSetting('still', 'works');
      expect(s.setting('still')).toBe('works');
      s.close();
      expect(statSync(d).isDirectory()).toBe(true);
    } finally {
      execFileSync('umount', [d]);
    }
  });

  it('drops latency samples older than the window when flushing', () => {
    const s = new Store({ path: ':memory:', logger: log, latencyWindowMs: 60_000 });
    s.addLatency({ nodeId: 'n', at: Date.now() - 120_000, kind: 'tcp', ms: 1, success: true });
    s.addLatency({ nodeId: 'n', at: Date.now(), kind: 'tcp', ms: 2, success: true });
    s.flush();
    expect(s.latency('n', 0).map((x) => x.ms)).toEqual([2]);
    s.close();
  });
});
