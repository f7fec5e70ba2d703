/**
 * "Where did my bytes go" (#64): the traffic ledger's summary, the closed connections, the export,
 * the erase and the user's options, as the window, `gatehop traffic` and the tray read them. The
 * operations live here beside their schemas (contract.ts spreads them in). No Node imports.
 */
import { z } from 'zod';
import { none, op } from '../op-shape.js';

const totals = { up: z.number(), down: z.number(), flows: z.number().int() };
export const trafficPartSchema = z.object({ key: z.string(), label: z.string(), ...totals });
/** The bounds are core/traffic's (options.ts): a change outside them is refused here with a 400. */
export const trafficOptionsViewSchema = z.object({
  retentionDays: z.number().int().min(1).max(3650),
  closedMax: z.number().int().min(100).max(10_000),
  keepClosed: z.boolean(),
});
export const trafficSummarySchema = z.object({
  from: z.string(),
  to: z.string(),
  nodesOnly: z.boolean(),
  total: z.object(totals),
  days: z.array(
    z.object({ day: z.string(), tunnel: z.number(), direct: z.number(), up: z.number(), down: z.number() }),
  ),
  byNode: z.array(trafficPartSchema),
  byNetwork: z.array(trafficPartSchema),
  byRoute: z.array(trafficPartSchema),
  byRule: z.array(trafficPartSchema),
  byProgram: z.array(trafficPartSchema),
  byDevice: z.array(trafficPartSchema),
  options: trafficOptionsViewSchema,
  /** Kept in the database (false: a core without one counts in memory until it stops). */
  persistent: z.boolean(),
});
export type TrafficSummaryView = z.infer<typeof trafficSummarySchema>;

export const closedConnectionSchema = z.object({
  id: z.string(),
  listener: z.enum(['local', 'lan']),
  kind: z.enum(['socks5', 'http', 'capture']),
  client: z.string(),
  user: z.string().nullable(),
  host: z.string(),
  port: z.number().int(),
  route: z.enum(['TUNNEL', 'DIRECT', 'REJECT']).nullable(),
  rule: z.string().nullable(),
  rulePayload: z.string().nullable(),
  nodeId: z.string().nullable(),
  program: z.string().nullable(),
  bytesUp: z.number(),
  bytesDown: z.number(),
  startedAt: z.number(),
  endedAt: z.number(),
  end: z.enum(['closed', 'reset', 'timeout', 'refused', 'error', 'shutdown']),
  errCode: z.string().nullable(),
});
export type ClosedConnection = z.infer<typeof closedConnectionSchema>;
export const closedConnectionsSchema = z.object({
  connections: z.array(closedConnectionSchema),
  /** How many are held (at most `max`), and whether they are kept across restarts. */
  held: z.number().int(),
  max: z.number().int(),
  kept: z.boolean(),
});
export type ClosedConnections = z.infer<typeof closedConnectionsSchema>;

/** A boolean in a query string ('true'/'false') or in an IPC call's input. */
const flag = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'true' || v === '1');
const days = z.coerce.number().int().min(1).max(3650);

export const trafficOps = {
  /** Bytes by day, node, network, route, rule, program and device over the last `days` days. */
  getTraffic: op({
    method: 'GET',
    // GET /traffic itself is Clash's throughput stream (dashboards read it): the ledger lives beside it.
    path: '/traffic/summary',
    input: z.object({ days: days.optional(), nodesOnly: flag.optional() }).strict(),
    output: trafficSummarySchema,
  }),
  /** The closed connections matching `q` (every word), newest first. */
  getClosedConnections: op({
    method: 'GET',
    path: '/traffic/closed',
    input: z
      .object({ q: z.string().max(200).optional(), limit: z.coerce.number().int().min(1).max(10_000).optional() })
      .strict(),
    output: closedConnectionsSchema,
  }),
  /** The ledger's rows of the last `days` days as CSV (one row per day and combination). */
  exportTraffic: op({
    method: 'GET',
    path: '/traffic/export',
    input: z.object({ days: days.optional() }).strict(),
    output: z.object({ filename: z.string(), csv: z.string() }),
  }),
  /** How long days are kept, how many closed connections are listed, and whether they survive a restart. */
  setTrafficOptions: op({
    method: 'PUT',
    path: '/traffic/options',
    input: trafficOptionsViewSchema.partial().strict(),
    output: trafficOptionsViewSchema,
  }),
  /** Forgets every count and closed connection. */
  eraseTraffic: op({ method: 'DELETE', path: '/traffic/ledger', input: none, output: z.null(), okStatus: 204 }),
} as const;
