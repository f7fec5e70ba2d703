/**
 * GET /nodes and a list import. core/api/schemas.ts gathers every part of the contract; the
 * renderer imports it, so nothing here imports Node.
 */
import { z } from 'zod';
import { tunnelProtocolSchema } from './common.js';
import { honestySchema } from './honesty.js';
import { listViaSchema } from './list.js';

export const nodeStateSchema = z.enum(['active', 'draining', 'standby', 'candidate', 'backoff']);

export const nodeSchema = z.object({
  id: z.string(),
  host: z.string(),
  ip: z.string(),
  port: z.number().int(),
  proto: z.enum(['tcp', 'udp']),
  country: z.string(),
  countryCode: z.string(),
  prior: z.number().nullable(),
  rttMs: z.number().nullable(),
  score: z.number().nullable(),
  scoreTerms: z
    .object({ latency: z.number(), prior: z.number(), history: z.number(), recentFailures: z.number() })
    .nullable(),
  successes: z.number().int(),
  failures: z.number().int(),
  lastSuccessAt: z.number().nullable(),
  lastFailureAt: z.number().nullable(),
  backoffUntil: z.number().nullable(),
  /**
   * Automatic selection left it in use for how it failed (#60), and keeps away from it until
   * `until` (a user's pick clears it). Null: not so. Absent: an older core.
   */
  left: z
    .object({
      shape: z.enum(['link', 'dns', 'connects', 'stall', 'slow', 'other', 'flapping']),
      at: z.number(),
      until: z.number(),
    })
    .nullable()
    .optional(),
  urlDelayMs: z.number().nullable(),
  state: nodeStateSchema,
  /** When a list last named it (the pool keeps nodes absent from the latest list); null for your own profiles. */
  lastListedAt: z.number().nullable(),
  /** Why the latest ranking left it out (backoff, left, unreachable, country-denied, not-in-top-k, needs-udp, tampers, ca-in-clear), or null. */
  excluded: z.string().nullable(),
  /**
   * The node refused modern TLS (an alert or a version or cipher error, never silence): its OpenVPN
   * control channel runs on TLS 1.0+ with weak ciphers. Remembered for 30 days.
   */
  weakTls: z.boolean(),
  /** Whether it was checked for tampering and what was found (null: this core runs no checks). */
  honesty: honestySchema.nullable(),
  /** Each protocol the node can be reached with, in the order it is tried, and what it did so far. */
  protocols: z.array(
    z.object({
      protocol: tunnelProtocolSchema,
      tried: z.number().int(),
      worked: z.number().int(),
      /** The latest attempt: true worked, false failed, null none yet. */
      lastOk: z.boolean().nullable(),
      lastError: z.string().nullable(),
      at: z.number().nullable(),
    }),
  ),
});
export type NodeDto = z.infer<typeof nodeSchema>;

export const nodesSchema = z.object({
  nodes: z.array(nodeSchema),
  fetchedAt: z.number().nullable(),
  source: z.string(),
  via: listViaSchema,
});

export const importRequestSchema = z
  .object({
    csv: z
      .string()
      .min(1, 'the file is empty')
      .max(16 * 1024 * 1024),
  })
  .strict();
export const importResultSchema = z.object({
  /** Nodes taken from the file. */
  imported: z.number().int(),
  /** Rows left out, by reason. */
  skipped: z.record(z.string(), z.number().int()),
  /** Nodes in the pool now. */
  nodes: z.number().int(),
});
export type ImportResult = z.infer<typeof importResultSchema>;
export type Nodes = z.infer<typeof nodesSchema>;
