/**
 * The node list's sources and state, a 'test all' run, the exit check. core/api/schemas.ts gathers
 * every part of the contract; the renderer imports it, so nothing here imports Node.
 */
import { z } from 'zod';

export const listViaSchema = z.enum(['direct', 'mirror', 'user', 'import', 'tunnel', 'upstream', 'cache', 'none']);
export type ListViaDto = z.infer<typeof listViaSchema>;

export const listSourceSchema = z.object({
  url: z.string(),
  kind: z.enum(['official', 'api', 'mirror', 'user']),
  /** How its last attempt went out; null before any. */
  via: z.enum(['direct', 'tunnel', 'upstream']).nullable(),
  /** null: not tried yet. */
  ok: z.boolean().nullable(),
  error: z.string().nullable(),
  at: z.number().nullable(),
});
export type ListSourceDto = z.infer<typeof listSourceSchema>;

export const listStatusSchema = z.object({
  /** The URL (or `import`) the current list came from; null before any list. */
  source: z.string().nullable(),
  via: listViaSchema,
  fetchedAt: z.number().nullable(),
  nodes: z.number().int(),
  refreshing: z.boolean(),
  sources: z.array(listSourceSchema),
  /** Rows of the current list that are not used, by reason (e.g. `loopback-address`, `remote-mismatch`). */
  skipped: z.record(z.string(), z.number().int()).default({}),
});
export type ListStatusDto = z.infer<typeof listStatusSchema>;

/** "Test all" (a URL test through every node): its progress, as events and in /status. */
export const nodeTestSchema = z.object({
  sweepId: z.number().int(),
  state: z.enum(['running', 'done', 'cancelled']),
  url: z.string(),
  total: z.number().int(),
  done: z.number().int(),
  ok: z.number().int(),
  failed: z.number().int(),
  last: z.object({ nodeId: z.string(), ms: z.number().nullable() }).nullable(),
  startedAt: z.number(),
});
export type NodeTestDto = z.infer<typeof nodeTestSchema>;

/** Where traffic leaves, measured through the active tunnel (config exitCheck.url). */
export const exitInfoSchema = z.object({
  nodeId: z.string().nullable(),
  address: z.string().nullable(),
  /** ISO code, when the echo service says it. */
  country: z.string().nullable(),
  at: z.number(),
  error: z.string().nullable(),
});
export type ExitInfoDto = z.infer<typeof exitInfoSchema>;
