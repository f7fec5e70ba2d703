import { mkdtempSync, openSync, readdirSync, readFileSync, statSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, silentLogger } from '../../core/common/index.js';
import { MIGRATIONS, Store } from '../../core/store/index.js';

const log = silentLogger();
const PAGE = 4096;

/**
 * A real Gatehop database with the pin, a setting and the proxy snapshot written first (their
 * tables' own pages, near the start of the file) and then enough history and latency samples to
 * fill many more pages at its end.
 */
function populated(path: string): void {
  const s = new Store({ path, logger: log, flushMs: 60_000 });
  s.setSelection({ group: 'vpngate', nodeId: 'pinned-node', mode: 'manual' });
  s.setSetting('language', 'fa');
  s.saveProxySnapshot({ mode: 'none' });
  for (let i = 0; i < 3000; i++) {
    s.saveHistory({
      nodeId: `node-${i}`,
      successes: i,
      failures: 1,
      consecutiveFailures: 0,
      lastSuccessAt: Date.now(),
      lastFailureAt: null,
      backoffUntil: null,
      avgThroughputBps: 1e6,
      avgConnectMs: 40,
      left: null,
    });
    s.addLatency({ nodeId: `node-${i % 100}`, at: Date.now(), kind: 'url', ms: i, success: true });
  }
  s.close();
  // Everything in the main file (no WAL left beside it), as after a clean exit.
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** Overwrites the file's last `pages` pages with garbage, as a failing disk or a torn write would. */
function damageTail(path: string, pages: number): void {
  const size = statSync(path).size;
  const fd = openSync(path, 'r+');
  try {
    const junk = Buffer.alloc(PAGE, 0xa5);
    for (let p = 1; p <= pages; p++) writeSync(fd, junk, 0, PAGE, size - p * PAGE);
  } finally {
    closeSync(fd);
  }
}

describe('a damaged database (#32: never an exit at every start)', () => {
  it('found at open by quick_check: moved aside (kept), a fresh file made, the pin, settings and proxy snapshot carried over, history started again', () => {
    const d = mkdtempSync(join(tmpdir(), 'gh-damage-'));
    const path = join(d, 'gatehop.db');
    populated(path);
    expect(statSync(path).size / PAGE).toBeGreaterThan(40);
    damageTail(path, 20);
    // The landed open check read only sqlite_master, which lives on page 1: it passed this file.
    const s = new Store({ path, logger: log });
    expect(s.health).toBe('recovered');
    const incident = s.incident!;
    expect(incident).toMatchObject({ health: 'recovered', found: 'open' });
    expect(incident.carried).toEqual(expect.arrayContaining(['selection', 'settings', 'system_proxy_snapshot']));
    expect(incident.movedTo).toMatch(/gatehop\.db\.damaged-/);
    expect(statSync(incident.movedTo!).size).toBeGreaterThan(0); // kept, never deleted
    expect(s.selection('vpngate')).toEqual({ group: 'vpngate', nodeId: 'pinned-node', mode: 'manual' });
    expect(s.setting('language')).toBe('fa');
    expect(s.loadProxySnapshot()).toEqual({ mode: 'none' });
    expect(s.allHistory().size).toBe(0);
    s.saveHistory({ ...s.history('n'), successes: 1 });
    s.close();
    // The fresh file is whole, and a second start finds nothing wrong.
    const again = new Store({ path, logger: log });
    expect(again.health).toBe('ok');
    expect(again.history('n').successes).toBe(1);
    again.close();
  });

  it('met by a query while running: the same recovery, the query answered from the fresh file, no throw', () => {
    const d = mkdtempSync(join(tmpdir(), 'gh-damage-'));
    const path = join(d, 'gatehop.db');
    populated(path);
    const s = new Store({ path, logger: log });
    expect(s.health).toBe('ok');
    // The file is damaged under the running store (a disk error), and another write to it makes the
    // store's connection drop its page cache and read the damaged pages from disk.
    damageTail(path, 30);
    const other = new Database(path);
    other.prepare("INSERT OR REPLACE INTO settings (key, value) VALUES ('touched', 'by another connection')").run();
    other.close();
    expect(() => s.allHistory()).not.toThrow();
    expect(s.health).toBe('recovered');
    expect(s.incident).toMatchObject({ found: 'running' });
    expect(s.selection('vpngate')?.nodeId).toBe('pinned-node');
    s.setSetting('after', 'yes');
    expect(s.setting('after')).toBe('yes');
    s.close();
    expect(readdirSync(d).filter((f) => f.startsWith('gatehop.db.damaged-')).length).toBeGreaterThan(0);
  });

  it('a file from a newer Gatehop is refused with a clear coded error and left byte for byte as it was', () => {
    const d = mkdtempSync(join(tmpdir(), 'gh-damage-'));
    const path = join(d, 'gatehop.db');
    populated(path);
    const db = new Database(path);
    db.pragma(`user_version = ${MIGRATIONS.length + 5}`);
    db.close();
    const before = readFileSync(path);
    let err: unknown = null;
    try {
      new Store({ path, logger: log }).close();
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: ErrorCodes.STORE_TOO_NEW });
    expect((err as Error).message).toMatch(/newer Gatehop/);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readdirSync(d).filter((f) => f.includes('damaged'))).toEqual([]);
  });

  it('a failing query of another kind is logged and answered with nothing, never thrown into a timer', () => {
    const d = mkdtempSync(join(tmpdir(), 'gh-damage-'));
    const path = join(d, 'gatehop.db');
    const s = new Store({ path, logger: log });
    // A table dropped behind the store's back: every read of it fails with "no such table".
    const other = new Database(path);
    other.exec('DROP TABLE node_history');
    other.close();
    expect(s.allHistory().size).toBe(0);
    expect(() => s.saveHistory({ ...s.history('x'), successes: 2 })).not.toThrow();
    expect(s.health).toBe('ok');
    s.close();
  });
});
