/**
 * Connections, the event stream's names and log lines. core/api/schemas.ts gathers every part of
 * the contract; the renderer imports it, so nothing here imports Node.
 */
import { z } from 'zod';

/** A connection in both dialects: Gatehop's fields and the Clash dashboard fields. */
export const connectionSchema = z.object({
  id: z.string(),
  kind: z.enum(['socks5', 'http', 'capture']),
  client: z.string(),
  target: z.string().nullable(),
  egressId: z.string().nullable(),
  nodeId: z.string().nullable(),
  bytesUp: z.number(),
  bytesDown: z.number(),
  startedAt: z.number(),
  // Clash
  metadata: z.object({
    network: z.literal('tcp'),
    type: z.string(),
    sourceIP: z.string(),
    sourcePort: z.string(),
    destinationIP: z.string(),
    destinationPort: z.string(),
    host: z.string(),
    inboundIP: z.string(),
    inboundPort: z.string(),
    inboundName: z.string(),
    inboundUser: z.string(),
    dnsMode: z.string(),
    process: z.string(),
    processPath: z.string(),
    remoteDestination: z.string(),
    sniffHost: z.string(),
    specialProxy: z.string(),
    specialRules: z.string(),
  }),
  upload: z.number(),
  download: z.number(),
  start: z.string(),
  chains: z.array(z.string()),
  rule: z.string(),
  rulePayload: z.string(),
  /** Where the rule table sent this connection's latest flow, and by which rule (null before one was routed). */
  route: z
    .object({ target: z.enum(['TUNNEL', 'DIRECT', 'REJECT']), rule: z.string(), payload: z.string() })
    .nullable()
    .default(null),
});
export const connectionsSchema = z.object({
  downloadTotal: z.number(),
  uploadTotal: z.number(),
  connections: z.array(connectionSchema),
});

/** Server-sent event names on GET /events. */
export const eventNames = ['status', 'nodes', 'latency', 'switch', 'drain', 'log', 'refresh', 'sysproxy'] as const;
export type EventName = (typeof eventNames)[number];

export const logEventSchema = z.object({
  time: z.number(),
  level: z.string(),
  msg: z.string(),
  event: z.string().optional(),
});
