/**
 * What an honesty check of a node found. core/api/schemas.ts gathers every part of the contract;
 * the renderer imports it, so nothing here imports Node.
 */
import { z } from 'zod';

/** What an honesty check of a node found (core/honesty; SECURITY.md "Honesty checks"). */
export const honestyVerdictSchema = z.enum([
  'honest',
  'dns-tampering',
  'http-tampering',
  'tls-interception',
  'unchecked',
]);
export type HonestyVerdictDto = z.infer<typeof honestyVerdictSchema>;
export const honestySchema = z.object({
  verdict: honestyVerdictSchema,
  /** When the last check ended; null: never checked. */
  checkedAt: z.number().nullable(),
  /** What was asked, what was expected, what came back: the evidence behind a tampering verdict. */
  evidence: z.array(
    z.object({
      check: z.enum(['dns', 'nxdomain', 'http', 'tls']),
      target: z.string(),
      expected: z.string(),
      got: z.string(),
    }),
  ),
  /** Checks that could not conclude, with why. */
  inconclusive: z.array(z.string()),
  /** The user chose to use it anyway (manual picks only; automatic selection never takes it). */
  accepted: z.boolean(),
  /** Clean checks in a row since it was flagged; at cleanChecksToClear the flag goes (#59). */
  cleanChecks: z.number().int(),
  cleanChecksToClear: z.number().int(),
  /** A check is running now. */
  checking: z.boolean(),
  durationMs: z.number().nullable(),
  bytes: z.number().nullable(),
});
export type HonestyDto = z.infer<typeof honestySchema>;
