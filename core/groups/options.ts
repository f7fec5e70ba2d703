import { z } from 'zod';
import { wholeNumber } from '../common/index.js';
import { BALANCE_STRATEGIES } from '../egress/index.js';
import { failFilterSchema, probeSpecSchema } from '../selector/index.js';

/** Node groups and switching (config `groups:`). */
export const groupOptionsSchema = z
  .object({
    /** auto: the URL-test group picks; manual: the user's pinned node (the selector group). */
    mode: z.enum(['auto', 'manual']).default('auto'),
    /** Manual mode's node when none was persisted yet. */
    defaultNode: z.string().min(1).optional(),
    /** A pinned node that fails: move traffic to the best node, remember the pin, return when it recovers. */
    fallbackWhenPinnedFails: z.boolean().default(true),
    /** Keep the next-best node's tunnel up so a switch needs no handshake. */
    warmStandby: z.boolean().default(false),
    /** Candidates tried per switch before it counts as failed. */
    maxAttempts: wholeNumber(1, 3),
    connectTimeoutMs: z.number().int().positive().default(20_000),
    urlTest: z
      .object({
        url: z.string().url().default('http://cp.cloudflare.com/generate_204'),
        intervalMs: wholeNumber(1_000, 180_000),
        /** A node must be faster than the current one by more than this to win. */
        toleranceMs: wholeNumber(0, 50),
        timeoutMs: z.number().int().positive().default(5_000),
        /** No sessions for this long pauses testing; the next session resumes it. */
        idleTimeoutMs: z
          .number()
          .int()
          .positive()
          .default(30 * 60_000),
        /** The status that passes (default: 204 for a generate_204 URL, else any 2xx). */
        expectedStatus: z.number().int().min(100).max(599).optional(),
      })
      .strict()
      .prefault({}),
    /** In-tunnel probes of the active node (GOST style): tcp, http, cmd; the first runs at once. */
    probes: z.array(probeSpecSchema).max(8).default([]),
    /** maxFails failures within failTimeoutMs mark a node dead until a probe succeeds; maxLatencyMs skips slow nodes. */
    failFilter: failFilterSchema.prefault({}),
    /**
     * Several tunnels at once in auto mode: `tunnels` member tunnels on distinct nodes, each new
     * session picking one by `strategy` and keeping it for life. 1 is a single tunnel (manual mode
     * always uses one: the pin).
     */
    balance: z
      .object({
        strategy: z.enum(BALANCE_STRATEGIES).default('round-robin'),
        tunnels: z.number().int().min(1).max(4).default(1),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type GroupOptions = z.infer<typeof groupOptionsSchema>;

export function groupOptions(input: z.input<typeof groupOptionsSchema> = {}): GroupOptions {
  return Object.freeze(groupOptionsSchema.parse(input));
}
