import type { Connection } from './sql.js';

/**
 * The tables whose rows a fresh file takes over from a damaged one, each as far as it reads. The
 * traffic ledger's sums (up to 500,000 rows) start afresh: carrying them would read them all into
 * memory at once, at start-up.
 */
const CARRIED_TABLES = [
  'share_devices',
  'node_honesty',
  'selection',
  'settings',
  'system_proxy_snapshot',
  'list_sources',
  'node_list',
  'nodes',
] as const;

export type CarriedRows = Map<string, { columns: string[]; rows: unknown[][] }>;

/** What still reads of the tables worth keeping; a table that does not read is left behind. */
export function carryOut(conn: Connection): CarriedRows {
  const out: CarriedRows = new Map();
  for (const table of CARRIED_TABLES) {
    try {
      const stmt = conn.prepare(`SELECT * FROM ${table}`).raw(true);
      const columns = stmt.columns().map((c) => c.name);
      out.set(table, { columns, rows: stmt.all() as unknown[][] });
    } catch {
      // Damaged where this table lives (or no such table in an old schema): it starts empty.
    }
  }
  return out;
}

/** The carried rows into the fresh file, table by table; the names of the tables that took. */
export function carryIn(conn: Connection, carried: CarriedRows): string[] {
  const kept: string[] = [];
  for (const [table, { columns, rows }] of carried) {
    if (rows.length === 0) continue;
    try {
      const known = new Set(
        conn
          .prepare(`SELECT * FROM ${table} LIMIT 0`)
          .columns()
          .map((c) => c.name),
      );
      const idx = columns.map((c, i) => [c, i] as const).filter(([c]) => known.has(c));
      const ins = conn.prepare(
        `INSERT OR REPLACE INTO ${table} (${idx.map(([c]) => c).join(', ')}) VALUES (${idx.map(() => '?').join(', ')})`,
      );
      conn.transaction(() => {
        for (const r of rows) ins.run(...idx.map(([, i]) => r[i]));
      })();
      kept.push(table);
    } catch {
      // A row the fresh schema refuses: this table starts empty.
    }
  }
  return kept;
}

export function closeQuietly(conn: Connection | null): void {
  try {
    conn?.close();
  } catch {
    // Already closed, or too damaged to close cleanly: nothing more can be done with it.
  }
}
