/**
 * Routing: the mode, rule sets, and a Clash config's rules brought over. core/api/schemas.ts
 * gathers every part of the contract; the renderer imports it, so nothing here imports Node.
 */
import { z } from 'zod';

export const routeModeSchema = z.enum(['rule', 'global', 'direct']);

export const ruleSetInfoSchema = z.object({
  name: z.string(),
  type: z.enum(['http', 'file']),
  behavior: z.enum(['domain', 'ipcidr', 'classical']),
  format: z.enum(['yaml', 'text', 'mrs']),
  entries: z.number().int(),
  badLines: z.number().int(),
  updatedAt: z.number().nullable(),
  /** Why the last load or refresh failed; the last good copy stays in use. */
  error: z.string().nullable(),
  refreshing: z.boolean(),
});
export type RuleSetInfoDto = z.infer<typeof ruleSetInfoSchema>;

/** Where flows go (issue #33): the mode, the table's size and problems, the rule sets. */
export const routingStatusSchema = z.object({
  mode: routeModeSchema,
  rules: z.number().int(),
  /** The user's rules (config `rules`) replace the default table. */
  custom: z.boolean(),
  errors: z.array(z.object({ source: z.string(), line: z.number().int(), text: z.string(), message: z.string() })),
  ruleSets: z.array(ruleSetInfoSchema),
  /** Flows by target since start (TCP connects and UDP peers). */
  routed: z.record(z.string(), z.number().int()),
});
export type RoutingStatusDto = z.infer<typeof routingStatusSchema>;

const routeTargetSchema = z.enum(['TUNNEL', 'DIRECT', 'REJECT']);

/**
 * A mihomo/Clash config's routing brought over (`POST /routing/import`, `gatehop import-rules`):
 * the YAML itself or a URL Gatehop fetches (directly, then through the tunnel). Without `apply`
 * it only reads the file and lists what its rules target; with it, the rules, sub-rules, rule sets
 * and mode are saved with each name mapped (given here, else saved from an earlier import, else
 * Gatehop's guess), and the mapping is kept for the next import.
 */
export const ruleImportRequestSchema = z
  .object({
    config: z
      .string()
      .min(1)
      .max(16 * 1024 * 1024)
      .optional(),
    url: z
      .string()
      .url()
      .regex(/^https?:\/\//i, 'must be an http or https URL')
      .optional(),
    mapping: z.record(z.string().min(1).max(256), routeTargetSchema).optional(),
    apply: z.boolean().default(false),
    /** Take the config's routing mode too (rule, global, direct): only when the user said so (#59). */
    setMode: z.boolean().default(false),
  })
  .strict()
  .refine((r) => (r.config === undefined) !== (r.url === undefined), {
    message: 'give the config text or its url, one of them',
  });

export const ruleImportResultSchema = z.object({
  mode: routeModeSchema.nullable(),
  rules: z.number().int(),
  subRules: z.array(z.string()),
  ruleSets: z.array(z.string()),
  targets: z.array(
    z.object({
      name: z.string(),
      /** Gatehop's guess: builtin, all-direct, all-reject, first-member, has-proxies, a-proxy, unknown. */
      guess: routeTargetSchema,
      why: z.string(),
      rules: z.number().int(),
      /** What an earlier import mapped it to. */
      saved: routeTargetSchema.nullable(),
      /** What it maps to now: given, else saved, else the guess. */
      use: routeTargetSchema,
    }),
  ),
  /** Names that are neither Gatehop's own targets nor mapped by an earlier import: the ones to ask about. */
  ask: z.array(z.string()),
  skipped: z.array(z.object({ what: z.string(), why: z.string() })),
  applied: z.boolean(),
  restartRequired: z.array(z.string()),
});
export type RuleImportRequest = z.input<typeof ruleImportRequestSchema>;
export type RuleImportResult = z.infer<typeof ruleImportResultSchema>;
