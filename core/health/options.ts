import { z } from 'zod';
import { wholeNumber } from '../common/index.js';

/** Health sampling and anti-flap thresholds; every one configurable (config `health:`). */
export const healthOptionsSchema = z
  .object({
    /** One sample (a window) of the active egress this often. */
    intervalMs: wholeNumber(100, 15_000),
    /** Consecutive bad windows before a switch is requested; a single bad sample never does. */
    badWindows: wholeNumber(1, 3),
    /** A window scoring below this (0..1) is bad. */
    threshold: z.number().min(0).max(1).default(0.5),
    /** An in-tunnel DNS answer slower than this costs the window. */
    dnsSlowMs: z.number().int().positive().default(1_500),
    /** CONNECT attempts in a window before their failure rate counts. */
    minConnectAttempts: wholeNumber(1, 3),
    /** A failure rate above this costs the window. */
    maxConnectFailureRate: z.number().min(0).max(1).default(0.5),
    /** Netstack retransmissions per segment sent above this cost the window (with enough segments). */
    maxRetransmissionRate: z.number().min(0).max(1).default(0.25),
    minSegments: wholeNumber(1, 100),
    /** Anti-flap: automatic switches at most this often. */
    minSwitchIntervalMs: wholeNumber(0, 60_000),
    /** Anti-flap: a candidate must score this much better (0.2 = 20 %) than the current node. */
    betterBy: z.number().min(0).default(0.2),
    /** After a failed switch, automatic switching waits this long, doubling up to the max. */
    failureBackoffMs: wholeNumber(0, 30_000),
    failureBackoffMaxMs: wholeNumber(0, 480_000),
    /**
     * A node left for how it failed in use (names, connects, a stall) stays out of automatic
     * selection this long (#60): a half-dead volunteer machine seldom mends in minutes, and its
     * tunnel coming up again says nothing about what failed. A user's pick overrules it.
     */
    leftHoldMs: wholeNumber(0, 30 * 60_000),
    /**
     * A window in which every connect failed, to this many distinct places or more and none
     * reached, is urgent (#60): the node is left at once, as a dead one is. One site that is down
     * (a user retrying it) never is.
     */
    urgentFailedHosts: wholeNumber(1, 3),
    /**
     * A node whose tunnel in use drops twice within this long is flapping (#60): left and held
     * away like a node that failed in use. A back-off alone would not do, since each tunnel that
     * comes up again resets it.
     */
    flapWindowMs: wholeNumber(0, 10 * 60_000),
    /**
     * Bulk downloads slower than this (bytes/s) through the node in use make a window bad (#60), when
     * a node in the pool is known to deliver `crawlFasterBy` times as much: a volunteer's machine
     * slowed to a crawl is left while a much faster one is there. 0 turns it off.
     */
    crawlBps: wholeNumber(0, 64 * 1024),
    crawlFasterBy: z.number().min(1).default(5),
  })
  .strict();

export type HealthOptions = z.infer<typeof healthOptionsSchema>;

export function healthOptions(input: z.input<typeof healthOptionsSchema> = {}): HealthOptions {
  return Object.freeze(healthOptionsSchema.parse(input));
}
