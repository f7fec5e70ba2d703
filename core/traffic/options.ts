import { z } from 'zod';

/** What the user sets about the traffic ledger (#64), kept in the store (the Traffic view changes it). */
export const trafficOptionsSchema = z
  .object({
    /** Days of the ledger kept (older days are deleted at the next flush). */
    retentionDays: z.number().int().min(1).max(3650),
    /** Closed connections listed (the newest; older ones drop off). */
    closedMax: z.number().int().min(100).max(10_000),
    /** Keep the closed connections across restarts (in the database); off: memory only. */
    keepClosed: z.boolean(),
  })
  .strict();
export type TrafficOptions = z.infer<typeof trafficOptionsSchema>;

export const DEFAULT_TRAFFIC_OPTIONS: TrafficOptions = Object.freeze({
  retentionDays: 90,
  closedMax: 1000,
  keepClosed: false,
});

/** The store's key for the options (JSON). */
export const TRAFFIC_OPTIONS_KEY = 'traffic.options';

/** Rows the ledger keeps at most, whatever the retention: a year of a heavy user's days is far below (bench/traffic-db.ts). */
export const MAX_LEDGER_ROWS = 500_000;
/** Bytes the closed-connection list holds at most (its records' JSON), whatever closedMax says. */
export const MAX_CLOSED_BYTES = 4 * 1024 * 1024;
/** A rule or program name longer than this is cut (a ledger key part, and a row of the list). */
export const MAX_PART_CHARS = 200;

/** Reads stored options: anything missing or malformed falls back to its default, never throws. */
export function parseTrafficOptions(text: string | null): TrafficOptions {
  if (text === null) return DEFAULT_TRAFFIC_OPTIONS;
  try {
    const r = trafficOptionsSchema.partial().safeParse(JSON.parse(text));
    return r.success ? { ...DEFAULT_TRAFFIC_OPTIONS, ...r.data } : DEFAULT_TRAFFIC_OPTIONS;
  } catch {
    return DEFAULT_TRAFFIC_OPTIONS;
  }
}
