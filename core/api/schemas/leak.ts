/**
 * The leak self-test (#64): what the window's "Leak test" card shows. The core measures the exit,
 * the resolver and this computer's IPv6; the WebRTC part runs in the window itself (a browser's
 * WebRTC is what leaks), with the STUN server named here. No Node imports.
 */
import { z } from 'zod';
import { none, op } from '../op-shape.js';

export const leakReportSchema = z.object({
  at: z.number(),
  /** The node the test went through (null: no tunnel was up). */
  nodeId: z.string().nullable(),
  /** Where sites see traffic through the node come from. */
  exit: z.object({
    url: z.string().nullable(),
    address: z.string().nullable(),
    country: z.string().nullable(),
    error: z.string().nullable(),
  }),
  /** The resolver that looked up a name of the test's own, asked through the node. */
  resolver: z.object({
    url: z.string().nullable(),
    address: z.string().nullable(),
    /** Names in tunnels go by DNS over HTTPS through them (privacy.encryptedDns). */
    encrypted: z.boolean(),
    error: z.string().nullable(),
  }),
  /** This computer's own IPv6 (what a program that does not use the proxy would leave by). */
  ipv6: z.object({
    /** A global IPv6 address of this computer, or null. */
    address: z.string().nullable(),
    /** An IPv6 default route exists (null: cannot be told here). */
    defaultRoute: z.boolean().nullable(),
  }),
  /** The OS proxy setting points at Gatehop (null: cannot be told). */
  systemProxy: z.boolean().nullable(),
  /** The STUN server the window's WebRTC check asks (config leakTest.stunUrl; null: not tested). */
  stunUrl: z.string().nullable(),
});
export type LeakReport = z.infer<typeof leakReportSchema>;

export const leakOps = {
  /** Runs the core's part of the leak test now, through the active node. */
  runLeakTest: op({ method: 'POST', path: '/leak-test', input: none, output: leakReportSchema }),
} as const;
