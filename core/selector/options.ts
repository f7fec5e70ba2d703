import { z } from 'zod';

export const selectorOptionsSchema = z
  .object({
    weights: z
      .object({
        score: z.number().min(0).default(0.4),
        speed: z.number().min(0).default(0.3),
        sessions: z.number().min(0).default(0.15),
        uptime: z.number().min(0).default(0.15),
        /** How recently a list named the node (the pool keeps nodes for days): full weight when just listed, halving every freshnessHalfLifeMs. */
        freshness: z.number().min(0).default(0.3),
        /** A tunnel to the node worked within the pool's memory. */
        worked: z.number().min(0).default(0.2),
      })
      .strict()
      .default({ score: 0.4, speed: 0.3, sessions: 0.15, uptime: 0.15, freshness: 0.3, worked: 0.2 }),
    freshnessHalfLifeMs: z
      .number()
      .int()
      .positive()
      .default(12 * 3600_000),
    /** Only these countries (ISO codes) unpenalised when non-empty. */
    countryAllow: z.array(z.string().length(2)).default([]),
    /** Never used. */
    countryDeny: z.array(z.string().length(2)).default([]),
    countryPenalty: z.number().min(0).default(1),
    preferProto: z.enum(['tcp', 'udp', 'any']).default('any'),
    protocolPenalty: z.number().min(0).default(0.1),
    topK: z.number().int().positive().default(12),
    probe: z
      .object({
        samples: z.number().int().min(1).max(10).default(3),
        timeoutMs: z.number().int().positive().default(3000),
        concurrency: z.number().int().positive().default(8),
      })
      .strict()
      .default({ samples: 3, timeoutMs: 3000, concurrency: 8 }),
    /** score = alpha/rttMs + beta·prior + gamma·successRate − delta·recentFailures */
    alpha: z.number().min(0).default(1000),
    beta: z.number().min(0).default(10),
    gamma: z.number().min(0).default(5),
    delta: z.number().min(0).default(2),
    backoff: z
      .object({
        initialMs: z.number().int().positive().default(60_000),
        maxMs: z
          .number()
          .int()
          .positive()
          .default(8 * 3600_000),
      })
      .strict()
      .default({ initialMs: 60_000, maxMs: 8 * 3600_000 }),
  })
  .strict();

export type SelectorOptions = z.infer<typeof selectorOptionsSchema>;

export function selectorOptions(input: z.input<typeof selectorOptionsSchema> = {}): SelectorOptions {
  return Object.freeze(selectorOptionsSchema.parse(input));
}
