import { isIPv4 } from 'node:net';
import { z } from 'zod';

/**
 * The messages between TUN mode's root supervisor and the core it runs as the user (#59), over
 * the IPC channel of the core's process. The core is the less trusted side: the supervisor takes
 * only these shapes, each field bounded, and builds every command line from its own flags; the
 * socket path the core names is opened by the helper only after it has become the user.
 */

/** Named only for the tests and the messages: the one flag a supervised core's environment carries. */
export const SUPERVISED_ENV = 'GATEHOP_TUN_SUPERVISED';

const tunUp = z
  .object({
    kind: z.literal('tun-up'),
    /** The capture socket the helper relays the device to (a Unix socket path, as bind takes it). */
    socketPath: z.string().min(2).max(107).startsWith('/'),
    /** The device's own address, the first of its /30. */
    tunAddress: z.string().refine((a) => isIPv4(a), 'an IPv4 address'),
    mtu: z.number().int().min(576).max(65_535),
    /** The capture ticket's one-time key (the helper presents it on the socket). */
    key: z.string().regex(/^[A-Za-z0-9_-]{16,120}$/),
  })
  .strict();

const tunDown = z.object({ kind: z.literal('tun-down') }).strict();

export const coreMessageSchema = z.discriminatedUnion('kind', [tunUp, tunDown]);
export type CoreMessage = z.infer<typeof coreMessageSchema>;
export type TunUpRequest = z.infer<typeof tunUp>;

export type SupervisorMessage =
  /** The device, nftables, routes and rules are in place. */
  | { kind: 'tun-ready' }
  | { kind: 'tun-failed'; message: string }
  /** The helper exited while TUN mode was on: the device and its routes are gone. */
  | { kind: 'tun-lost'; code: number | null; stderr: string }
  /** tun-down done: the host's traffic is back on its own routes. */
  | { kind: 'tun-down-done' };

/** A message from the core, or null for anything else (logged by the supervisor, never acted on). */
export function parseCoreMessage(m: unknown): CoreMessage | null {
  const r = coreMessageSchema.safeParse(m);
  return r.success ? r.data : null;
}
