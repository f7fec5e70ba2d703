/**
 * The Clash-compatible subset. core/api/schemas.ts gathers every part of the contract; the
 * renderer imports it, so nothing here imports Node.
 */
import { z } from 'zod';

export const clashProxySchema = z.object({
  name: z.string(),
  type: z.string(),
  udp: z.boolean(),
  history: z.array(z.object({ time: z.string(), delay: z.number() })),
  now: z.string().optional(),
  all: z.array(z.string()).optional(),
});
export const clashProxiesSchema = z.object({ proxies: z.record(z.string(), clashProxySchema) });
export const clashSelectSchema = z.object({ name: z.string().min(1).max(255) });
export const clashDelaySchema = z.object({ delay: z.number() });
export const clashDelayQuerySchema = z.object({
  url: z.string().url(),
  timeout: z.coerce.number().int().min(1).max(60_000),
});
export const clashTrafficSchema = z.object({ up: z.number(), down: z.number() });
