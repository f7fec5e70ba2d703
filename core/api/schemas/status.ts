/**
 * GET /status, and what the tray and the window read from it. core/api/schemas.ts gathers every
 * part of the contract; the renderer imports it, so nothing here imports Node.
 */
import { z } from 'zod';
import { type SwitchRecordDto, switchRecordSchema, switchStateSchema, tunnelProtocolSchema } from './common.js';
import { honestyVerdictSchema } from './honesty.js';
import { exitInfoSchema, listStatusSchema, nodeTestSchema } from './list.js';
import { routingStatusSchema } from './routing.js';

const nodeRef = {
  egressId: z.string(),
  nodeId: z.string().nullable(),
};

/**
 * Where a tunnel goes, with one meaning in every view: `host` is the node's host name (as
 * /nodes[].host), `ip` its server address (as /nodes[].ip); null when the node is not in the pool.
 */
const nodePlace = {
  host: z.string().nullable(),
  ip: z.string().nullable(),
};

const protocolField = { protocol: tunnelProtocolSchema.nullable() };

export const statusSchema = z.object({
  version: z.string(),
  uptimeS: z.number(),
  egress: z.enum(['direct', 'vpngate']),
  mode: z.enum(['auto', 'manual']),
  pinned: z.string().nullable(),
  /** The pinned node failed and the best node stands in for it. */
  pinFailed: z.string().nullable(),
  active: z
    .object({
      ...nodeRef,
      ...nodePlace,
      country: z.string().nullable(),
      proto: z.enum(['tcp', 'udp']).nullable(),
      ...protocolField,
      since: z.number(),
      state: z.string(),
      rttMs: z.number().nullable(),
      sessions: z.number().int(),
      /** What the honesty checks say of this node (null: this core runs none). */
      honesty: honestyVerdictSchema.nullable(),
    })
    .nullable(),
  draining: z.array(
    z.object({
      ...nodeRef,
      ...nodePlace,
      ...protocolField,
      sessions: z.number().int(),
      since: z.number(),
      graceEndsAt: z.number(),
    }),
  ),
  /**
   * The tunnels taking new sessions: the active one first (primary), then the balance members
   * (groups.balance.tunnels > 1 in auto mode). Empty with no tunnel (and with the direct egress).
   */
  members: z.array(
    z.object({
      ...nodeRef,
      ...protocolField,
      primary: z.boolean(),
      ...nodePlace,
      country: z.string().nullable(),
      since: z.number(),
      /** Failing probes or liveness: new sessions avoid it while it is replaced. */
      down: z.boolean(),
      sessions: z.number().int(),
      bytesUp: z.number(),
      bytesDown: z.number(),
      rttMs: z.number().nullable(),
      failures: z.number().int(),
    }),
  ),
  balance: z.object({
    strategy: z.enum(['failover', 'round-robin', 'least-sessions', 'lowest-latency']),
    tunnels: z.number().int(),
  }),
  standby: z.array(z.object({ ...nodeRef, ...nodePlace, ...protocolField, since: z.number() })),
  /**
   * The order nodes' protocols are tried in (tunnel.protocols), and the one this network was found
   * to need first (OpenVPN failing on several nodes while SSTP worked), with why; null with the direct egress.
   */
  protocols: z
    .object({
      order: z.array(tunnelProtocolSchema),
      preferred: tunnelProtocolSchema.nullable(),
      /** The protocol this network was found not to let through while `preferred` did. */
      blocked: tunnelProtocolSchema.nullable(),
      reason: z.string().nullable(),
      learn: z.boolean(),
      /**
       * What this network taught, kept across restarts (#44): when, until when no packet of the
       * blocked protocol is sent here, and how nodes were reached then; null: nothing learnt here.
       */
      lesson: z
        .object({
          at: z.number(),
          expiresAt: z.number(),
          path: z.enum(['direct', 'upstream']),
        })
        .nullable()
        .optional(),
    })
    .nullable(),
  sessions: z.object({ active: z.number().int(), total: z.number().int(), rejected: z.number().int() }),
  /** The honesty checks (null with the direct egress): on or off, how many nodes each verdict has, the latest finding. */
  honesty: z
    .object({
      enabled: z.boolean(),
      honest: z.number().int(),
      flagged: z.number().int(),
      unchecked: z.number().int(),
      checking: z.number().int(),
      lastFlagged: z.object({ nodeId: z.string(), verdict: honestyVerdictSchema, at: z.number() }).nullable(),
    })
    .nullable(),
  /**
   * The privacy opt-ins in force (config privacy). `encryptedDns` is what the active tunnel does
   * (the setting while none is up): a tunnel resolves names as it was opened, so a change applies
   * from the next one, which `encryptedDnsNext` says (#59: it was reported applied at once).
   */
  privacy: z.object({ encryptedDns: z.boolean(), encryptedDnsNext: z.boolean(), httpsOnly: z.boolean() }),
  /** Bytes relayed since start, both ways (a UI turns two samples into a rate). */
  traffic: z.object({ bytesUp: z.number(), bytesDown: z.number(), at: z.number() }),
  switches: z.object({
    total: z.number().int(),
    failed: z.number().int(),
    state: switchStateSchema,
    inProgress: z.number().int().nullable(),
    last: switchRecordSchema.nullable(),
  }),
  health: z
    .object({
      windows: z.number().int(),
      badWindows: z.number().int(),
      score: z.number().nullable(),
      reasons: z.array(z.string()),
      /** The last window's symptoms as ids (#60): link, dns, dns-slow, connects, stall, slow (a crawl), retransmit. Absent: an older core. */
      symptoms: z.array(z.enum(['link', 'dns', 'dns-slow', 'connects', 'stall', 'slow', 'retransmit'])).optional(),
      consecutiveBad: z.number().int(),
    })
    .nullable(),
  listen: z.object({ proxy: z.string(), admin: z.string().nullable() }),
  /** "Share with this network" (#63): on or off, listening, its port and how many devices; absent: not offered. */
  share: z
    .object({ enabled: z.boolean(), listening: z.boolean(), port: z.number().int(), devices: z.number().int() })
    .optional(),
  /** Today's bytes (#64): both ways, and of them through nodes. Absent: an older core, or an embedding without the ledger. */
  trafficToday: z.object({ day: z.string(), up: z.number(), down: z.number(), tunnel: z.number() }).optional(),
  /** `gatehop run` (Linux): whether it works here (and why not), and the programs captured now. Absent: an older core. */
  capture: z
    .object({
      available: z.boolean(),
      /** Why not: not Linux, the helper not built, the socket not listening, an embedder without it. */
      reason: z.enum(['platform', 'helper', 'socket', 'embedding']).nullable(),
      programs: z.array(
        z.object({
          id: z.number().int(),
          command: z.string(),
          startedAt: z.number(),
          connections: z.number().int(),
          udpFlows: z.number().int(),
        }),
      ),
    })
    .optional(),
  /**
   * Data the tunnel threads handed the main thread since the start (bytes), the scavenges that freed
   * it (common/transfer-collector.ts) and the longest (ms the main thread stood still); absent
   * without tunnel threads.
   */
  transfers: z.object({ bytes: z.number(), collections: z.number().int(), maxMs: z.number() }).optional(),
  /**
   * The main thread's V8 heap, MiB committed: its young generation (what V8 grows as survivors
   * accumulate, up to the start flag's cap: scripts/core-v8-flags.mjs) and all its spaces.
   */
  mainHeap: z.object({ youngMb: z.number(), committedMb: z.number() }).optional(),
  /** The main event loop's delay over the last window (what the tray, the window and /status wait behind). */
  eventLoop: z.object({ p50Ms: z.number(), p99Ms: z.number(), maxMs: z.number(), windowMs: z.number() }),
  /** Every open tunnel: where it runs and what memory it holds. */
  tunnels: z.array(
    z.object({
      ...nodeRef,
      thread: z.enum(['worker', 'main']),
      /** The worker's JS heap (worker threads only; null on the main thread, whose heap is shared). */
      heapBytes: z.number().nullable(),
      wasmMemoryBytes: z.number(),
      /** Its control channel runs on legacy TLS (TLS 1.0+, weak ciphers) because the server refused ours. */
      weakTls: z.boolean(),
      /**
       * Which node trust rule accepted the node's certificate (SECURITY.md): the node profile's own
       * private CA (chain alone), a public CA for the node's DDNS name, or the user's own profile.
       */
      trustRule: z.enum(['private-ca', 'public-ca-name', 'own-profile']).nullable(),
    }),
  ),
  /**
   * The native module (native/, gatehop-native): loaded, or why not (not built, turned off,
   * another ABI); everything it does has a JavaScript path. Heap trims done and the longest, ms.
   */
  native: z.object({
    loaded: z.boolean(),
    reason: z.string().nullable(),
    heapTrims: z.number().int(),
    heapTrimMaxMs: z.number(),
    /** Which data path tunnels run: 'native' (keyed crypto, batched UDP) or the 'javascript' fallback, and why. */
    dataPath: z.enum(['native', 'javascript']),
    dataPathReason: z.string().nullable(),
    /** The libcrypto the native data path uses (its version, and "the process" or the library's file). */
    crypto: z.string().nullable(),
    /**
     * glibc malloc across its arenas, MiB: taken from the OS, held by the program, free in the
     * arenas (fragmentation, or not yet trimmed). Absent without the native module or glibc 2.33.
     */
    malloc: z.object({ systemMb: z.number(), inUseMb: z.number(), freeMb: z.number() }).optional(),
  }),
  /** Tunnel worker threads started and failed (crashed, out of heap, hung) since start. */
  tunnelWorkers: z.object({
    started: z.number().int(),
    failures: z.number().int(),
    /** Threads created for tunnels, and tunnels that reused a thread an earlier one gave back. */
    threadsCreated: z.number().int(),
    threadsReused: z.number().int(),
    /** Threads waiting in the pool for the next tunnel now (each an event loop of its own, with its fds). */
    idleThreads: z.number().int(),
  }),
  /** Where the node list came from and every source Gatehop knows, with how each last went; null with the direct egress. */
  list: listStatusSchema.nullable(),
  /** The rule table; null where the embedder offers no routing. */
  routing: routingStatusSchema.nullable(),
  /** How nodes are reached from here: by address or DDNS name, straight or through the user's proxy. */
  reach: z
    .object({
      connectBy: z.enum(['ip', 'hostname']),
      /** The upstream proxy nodes and the list go through (no password), or null. */
      upstream: z.string().nullable(),
      /** Whether that proxy relays UDP for OpenVPN: learnt once, remembered. null without a SOCKS5 upstream for nodes. */
      upstreamUdp: z.enum(['unknown', 'works', 'fails']).nullable(),
      /** With upstream.nodes: fallback, how nodes are reached on this network now (direct first; the proxy where direct reached none); else null. */
      nodePath: z.enum(['direct', 'upstream']).nullable().optional(),
    })
    .nullable(),
  /** The running or last "Test all", or null. */
  nodeTest: nodeTestSchema.nullable(),
  /** Where am I: the exit address (and country) seen through the active tunnel; null when exitCheck.url is off or nothing was measured yet. */
  exit: exitInfoSchema.nullable(),
  /** The core runs inside the desktop app: start at login and restart are offered. */
  desktop: z.boolean(),
  /**
   * The database: ok, recovered (a damaged file was moved aside and a fresh one made) or memory-only
   * (nothing persists until restart); what happened, once. null without one (--egress direct).
   */
  store: z
    .object({
      health: z.enum(['ok', 'recovered', 'memory-only']),
      incident: z
        .object({
          health: z.enum(['recovered', 'memory-only']),
          at: z.number(),
          movedTo: z.string().nullable(),
          found: z.enum(['open', 'running']),
          reason: z.string(),
          carried: z.array(z.string()),
        })
        .nullable(),
    })
    .nullable(),
  /** No tunnel because the network is not there yet: why, and when the next retry runs. */
  network: z.object({
    state: z.enum(['ok', 'waiting']),
    reason: z.enum(['no-node-list', 'no-reachable-node', 'no-tunnel']).nullable(),
    since: z.number().nullable(),
    attempts: z.number().int(),
    nextAttemptAt: z.number().nullable(),
  }),
});
export type Status = z.infer<typeof statusSchema>;

/** How the active node fails, in one word for the tray and the window (#60). */
export type FailingShape = 'link' | 'dns' | 'connects' | 'stall' | 'slow' | 'other';

/**
 * What the active node's health windows see go wrong, while they go wrong (null when the last
 * window was good, or an older core sent no symptoms): a user whose pages fail is told why, and
 * that Gatehop leaves the node if it goes on, instead of only "the proxy is broken".
 */
export function failingShapeOf(h: Status['health']): FailingShape | null {
  if (!h || h.consecutiveBad < 1) return null;
  const seen = new Set(h.symptoms ?? []);
  for (const shape of ['link', 'dns', 'connects', 'stall', 'slow'] as const) if (seen.has(shape)) return shape;
  return 'other';
}

/** How long after Gatehop left a failing node the tray and the window still say so. */
export const MOVE_SHOWN_MS = 10 * 60_000;

/**
 * The last switch, when it left a node for failing and came up elsewhere within MOVE_SHOWN_MS
 * (#60): the user whose pages failed a minute ago is told when Gatehop moved, where to, and why.
 */
export function recentMoveOf(
  switches: Status['switches'],
  now: number,
): { leftFor: NonNullable<SwitchRecordDto['leftFor']>; from: string; to: string; at: number } | null {
  const r = switches.last;
  if (!r?.leftFor || r.outcome !== 'switched' || !r.from || !r.to || now - r.at > MOVE_SHOWN_MS) return null;
  return { leftFor: r.leftFor, from: r.from, to: r.to, at: r.at };
}
