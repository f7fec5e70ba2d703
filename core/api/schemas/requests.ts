/**
 * Switching, mode and latency requests. core/api/schemas.ts gathers every part of the contract;
 * the renderer imports it, so nothing here imports Node.
 */
import { z } from 'zod';

export const switchRequestSchema = z
  .object({
    nodeId: z.string().min(1).max(255).optional(),
    /** The user saw that the node was found to tamper and wants it anyway (GH_ERR_NODE_FLAGGED without it). */
    confirm: z.boolean().optional(),
  })
  .strict();
export const switchAcceptedSchema = z.object({ switchId: z.number().int() });

export const modeRequestSchema = z.object({ auto: z.boolean() }).strict();
export const modeResponseSchema = z.object({ mode: z.enum(['auto', 'manual']), pinned: z.string().nullable() });

export const latencyQuerySchema = z.object({
  nodeId: z.string().min(1).max(255).optional(),
  /** Samples at or after this time (ms since the epoch); default: the last hour. */
  sinceMs: z.coerce.number().int().min(0).optional(),
});
export const latencySampleSchema = z.object({
  nodeId: z.string(),
  at: z.number(),
  kind: z.enum(['tcp', 'url', 'dns']),
  ms: z.number().nullable(),
  success: z.boolean(),
});
export const latencySchema = z.object({ samples: z.array(latencySampleSchema) });
