/**
 * The contract's shared pieces: errors, protocols, a switch's record. core/api/schemas.ts gathers
 * every part of the contract; the renderer imports it, so nothing here imports Node.
 */
import { z } from 'zod';

export const apiErrorSchema = z.object({ error: z.string(), message: z.string() });
export type ApiError = z.infer<typeof apiErrorSchema>;

export const switchStateSchema = z.enum(['idle', 'selecting', 'connecting', 'promoting', 'draining']);

/** What carries a tunnel: OpenVPN (UDP or TCP), MS-SSTP (PPP in HTTPS) or SoftEther's SE-VPN. */
export const tunnelProtocolSchema = z.enum(['openvpn', 'sstp', 'sevpn']);
export type TunnelProtocolDto = z.infer<typeof tunnelProtocolSchema>;

/** An order protocols are tried in (config tunnel.protocols, a node's own order): each at most once. */
export const protocolOrderSchema = z
  .array(tunnelProtocolSchema)
  .min(1, 'at least one protocol')
  .max(3)
  .refine((a) => new Set(a).size === a.length, 'each protocol at most once');

/** A node's id, as the list names it (its VPN Gate host name) or a profile file's. */
const nodeIdKey = z.string().min(1).max(253);

/** The user's own protocol order per node (config tunnel.nodeProtocols): it replaces tunnel.protocols for that node. */
export const nodeProtocolsSchema = z
  .record(nodeIdKey, protocolOrderSchema)
  .refine((o) => Object.keys(o).length <= 10_000, 'at most 10000 nodes');

export const switchRecordSchema = z.object({
  id: z.number().int(),
  at: z.number(),
  kind: z.enum(['user', 'auto', 'urgent']),
  reason: z.string(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  outcome: z.enum(['switched', 'failed', 'no-candidate', 'skipped']),
  durationMs: z.number(),
  /** The protocol of the tunnel switched to. */
  protocol: tunnelProtocolSchema.optional(),
  error: z.string().optional(),
  /** Why the node in use was left (#60): how it failed in use, or died (its tunnel went). Absent: not left for failing, or an older core. */
  leftFor: z.enum(['link', 'dns', 'connects', 'stall', 'slow', 'other', 'died', 'flapping']).optional(),
});
export type SwitchRecordDto = z.infer<typeof switchRecordSchema>;
