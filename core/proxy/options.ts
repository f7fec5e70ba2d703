import { z } from 'zod';
import type { IncomingMessage, ServerResponse } from 'node:http';
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

/**
 * Who a client is: a user name and password checked (an auth file's `Credentials`, or the devices
 * a shared listener knows), and, for a listener that admits enrolled devices, the user a client is
 * taken for by its address alone (a phone's stock Wi-Fi proxy setting sends no password).
 */
export interface ClientCredentials {
  /** Whether `password` is `username`'s; `address` is the client's (for back-off), `gone` whether it left meanwhile. */
  verify(username: string, password: string, address?: string, gone?: () => boolean): Promise<boolean>;
  /** The user a client at `address` is without a password, or null: it must give one. */
  admitted?(address: string): string | null;
}

/**
 * Pages a listener answers itself: origin-form requests (`GET /…`) other than the PAC, asked of the
 * proxy rather than through it (the shared listener's page for a phone). Answered without proxy
 * credentials, like the PAC: whatever a page needs it checks itself.
 */
export interface LocalPages {
  /** Answers and returns true, or returns false (a 404 follows). `pac()` is this listener's PAC script, if routing has one. */
  serve(req: IncomingMessage, res: ServerResponse, pac: () => string | null): boolean | Promise<boolean>;
}

export type ProxyOptions = Readonly<z.infer<typeof proxyOptionsSchema>> & {
  /** null: no authentication (NO_AUTH); the app decides whether that is allowed. */
  readonly credentials: ClientCredentials | null;
  /** The listener's own pages (none by default). */
  readonly pages?: LocalPages;
};
