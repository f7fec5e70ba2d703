import type { DbAccess } from './sql.js';
import { TRAFFIC_DIMENSIONS, type TrafficAggregates, type TrafficNetwork, type TrafficRow } from './types.js';

interface TrafficRowDb {
  day: string;
  network: string;
  node: string;
  route: string;
  rule: string;
  program: string;
  device: string;
  bytes_up: number;
  bytes_down: number;
  flows: number;
}

/**
 * The traffic ledger's rows and the closed connections a user chose to keep (#64). core/traffic
 * owns what they mean and when they are written; this keeps them, adds to a day's row in place,
 * and deletes by age and size.
 */
export class TrafficRepo {
  constructor(private readonly db: DbAccess) {}

  /** Adds each row's bytes and flows to what its day and combination already hold, in one transaction. */
  addTraffic(rows: readonly TrafficRow[], networks: readonly TrafficNetwork[]): void {
    if (rows.length === 0 && networks.length === 0) return;
    this.db.write('add traffic', (q) =>
      q.transaction(() => {
        for (const r of rows)
          q.run(
            `INSERT INTO traffic_days (day, network, node, route, rule, program, device, bytes_up, bytes_down, flows)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (day, network, node, route, rule, program, device) DO UPDATE SET
               bytes_up = bytes_up + excluded.bytes_up, bytes_down = bytes_down + excluded.bytes_down,
               flows = flows + excluded.flows`,
            r.day,
            r.network,
            r.node,
            r.route,
            r.rule,
            r.program,
            r.device,
            r.bytesUp,
            r.bytesDown,
            r.flows,
          );
        for (const n of networks)
          q.run(
            `INSERT INTO traffic_networks (key, label, first_seen, last_seen) VALUES (?, ?, ?, ?)
             ON CONFLICT (key) DO UPDATE SET label = excluded.label, last_seen = excluded.last_seen`,
            n.key,
            n.label,
            n.firstSeen,
            n.lastSeen,
          );
      }),
    );
  }

  /** The rows of days `from` to `to` (YYYY-MM-DD, inclusive), oldest first. */
  trafficRows(from: string, to: string): TrafficRow[] {
    const rows = this.db.read(
      'read traffic',
      (q) =>
        q.all<TrafficRowDb>(
          'SELECT * FROM traffic_days WHERE day >= ? AND day <= ? ORDER BY day, network, node, route, rule, program, device',
          from,
          to,
        ),
      [],
    );
    return rows.map((r) => ({
      day: r.day,
      network: r.network,
      node: r.node,
      route: r.route,
      rule: r.rule,
      program: r.program,
      device: r.device,
      bytesUp: r.bytes_up,
      bytesDown: r.bytes_down,
      flows: r.flows,
    }));
  }

  /**
   * Days `from`..`to` added up in SQLite (by day and route, and by each dimension), optionally only
   * the rows through nodes: the window's summary without reading every row into JavaScript.
   */
  trafficAggregates(from: string, to: string, nodesOnly: boolean): TrafficAggregates {
    const where = `WHERE day >= ? AND day <= ?${nodesOnly ? " AND route = 'TUNNEL'" : ''}`;
    const sums = 'SUM(bytes_up) AS up, SUM(bytes_down) AS down, SUM(flows) AS flows';
    const empty: TrafficAggregates = {
      days: [],
      parts: { node: [], network: [], route: [], rule: [], program: [], device: [] },
    };
    return this.db.read(
      'add traffic up',
      (q) => {
        const out: TrafficAggregates = { days: [], parts: { ...empty.parts } };
        out.days = q.all(`SELECT day, route, ${sums} FROM traffic_days ${where} GROUP BY day, route`, from, to);
        // The dimension is one of six fixed column names, never input.
        for (const d of TRAFFIC_DIMENSIONS)
          out.parts[d] = q.all(`SELECT ${d} AS key, ${sums} FROM traffic_days ${where} GROUP BY ${d}`, from, to);
        return out;
      },
      empty,
    );
  }

  trafficNetworks(): TrafficNetwork[] {
    return this.db
      .read(
        'read traffic networks',
        (q) => q.all<TrafficNetwork & { first_seen: number; last_seen: number }>('SELECT * FROM traffic_networks'),
        [],
      )
      .map((r) => ({ key: r.key, label: r.label, firstSeen: r.first_seen, lastSeen: r.last_seen }));
  }

  /**
   * Deletes days before `beforeDay`, then, while more than `maxRows` rows are left, the oldest
   * whole days; networks no row names any more go with them. Returns the rows deleted.
   */
  pruneTraffic(beforeDay: string, maxRows: number): number {
    let deleted = 0;
    this.db.write('prune traffic', (q) =>
      q.transaction(() => {
        const count = () => q.get<{ n: number }>('SELECT COUNT(*) AS n FROM traffic_days')!.n;
        const before = count();
        q.run('DELETE FROM traffic_days WHERE day < ?', beforeDay);
        // Whole days go, oldest first; the newest day stays whatever its size (today is being counted).
        const days = () => q.get<{ n: number }>('SELECT COUNT(DISTINCT day) AS n FROM traffic_days')!.n;
        for (let n = count(); n > maxRows && days() > 1; n = count()) {
          const oldest = q.get<{ day: string }>('SELECT MIN(day) AS day FROM traffic_days')!.day;
          q.run('DELETE FROM traffic_days WHERE day = ?', oldest);
        }
        q.run('DELETE FROM traffic_networks WHERE key NOT IN (SELECT DISTINCT network FROM traffic_days)');
        deleted = before - count();
      }),
    );
    return deleted;
  }

  /** Everything the ledger and the kept closed connections hold, gone (the "Erase" button). */
  eraseTraffic(): void {
    this.db.write('erase traffic', (q) =>
      q.transaction(() => {
        q.run('DELETE FROM traffic_days');
        q.run('DELETE FROM traffic_networks');
        q.run('DELETE FROM closed_flows');
      }),
    );
  }

  /** Appends closed connections (as JSON) and keeps only the newest `keep`. */
  addClosedFlows(records: ReadonlyArray<{ endedAt: number; json: string }>, keep: number): void {
    this.db.write('keep closed connections', (q) =>
      q.transaction(() => {
        for (const r of records)
          q.run('INSERT INTO closed_flows (ended_at, record_json) VALUES (?, ?)', r.endedAt, r.json);
        q.run('DELETE FROM closed_flows WHERE seq <= (SELECT MAX(seq) FROM closed_flows) - ?', keep);
      }),
    );
  }

  /** The kept closed connections' JSON, oldest first. */
  closedFlows(): string[] {
    return this.db
      .read(
        'read closed connections',
        (q) => q.all<{ record_json: string }>('SELECT record_json FROM closed_flows ORDER BY seq'),
        [],
      )
      .map((r) => r.record_json);
  }

  clearClosedFlows(): void {
    this.db.write('forget closed connections', (q) => q.run('DELETE FROM closed_flows'));
  }
}
