import { z } from 'zod';
import type { Credentials } from './credentials.js';
import { allowFromEntryProblem } from './client-filter.js';

export const proxyOptionsSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(1080),
    maxSessions: z.number().int().positive().default(1024),
    handshakeTimeoutMs: z.number().int().positive().default(10_000),
    connectTimeoutMs: z.number().int().positive().default(15_000),
    idleTimeoutMs: z.number().int().positive().default(300_000),
    /** Request line plus headers of one HTTP proxy request. */
    maxHeaderBytes: z
      .number()
      .int()
      .min(1024)
      .max(1 << 20)
      .default(16 * 1024),
    /**
     * Who may connect, judged on the address before anything is read (#63): `local` (this machine
     * and the networks it is on) and any address blocks (`192.168.2.0/24`) you add; others are
     * refused unheard, even with a password.
     */
    allowFrom: z
      .array(
        z.string().superRefine((e, ctx) => {
          const problem = allowFromEntryProblem(e);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }),
      )
      .min(1)
      .default(['local']),
  })
  .strict();

export type ProxyOptions = Readonly<z.infer<typeof proxyOptionsSchema>> & {
  /** null: no authentication (NO_AUTH); the app decides whether that is allowed. */
  readonly credentials: Credentials | null;
};
