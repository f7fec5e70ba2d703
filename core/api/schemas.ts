/**
 * The admin API's contract: request and response shapes as zod schemas. The server validates what
 * it receives against the request schemas and its tests validate what it sends against the
 * response schemas; the renderer imports this file too (it has no Node imports on purpose).
 */
import { z } from 'zod';

export const apiErrorSchema = z.object({ error: z.string(), message: z.string() });
export type ApiError = z.infer<typeof apiErrorSchema>;

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
const protocolField = { protocol: tunnelProtocolSchema.nullable() };

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

export const listViaSchema = z.enum(['direct', 'mirror', 'user', 'import', 'tunnel', 'upstream', 'cache', 'none']);
export type ListViaDto = z.infer<typeof listViaSchema>;

export const listSourceSchema = z.object({
  url: z.string(),
  kind: z.enum(['official', 'api', 'mirror', 'user']),
  /** How its last attempt went out; null before any. */
  via: z.enum(['direct', 'tunnel', 'upstream']).nullable(),
  /** null: not tried yet. */
  ok: z.boolean().nullable(),
  error: z.string().nullable(),
  at: z.number().nullable(),
});
export type ListSourceDto = z.infer<typeof listSourceSchema>;

export const listStatusSchema = z.object({
  /** The URL (or `import`) the current list came from; null before any list. */
  source: z.string().nullable(),
  via: listViaSchema,
  fetchedAt: z.number().nullable(),
  nodes: z.number().int(),
  refreshing: z.boolean(),
  sources: z.array(listSourceSchema),
  /** Rows of the current list that are not used, by reason (e.g. `loopback-address`, `remote-mismatch`). */
  skipped: z.record(z.string(), z.number().int()).default({}),
});
export type ListStatusDto = z.infer<typeof listStatusSchema>;

/** "Test all" (a URL test through every node): its progress, as events and in /status. */
export const nodeTestSchema = z.object({
  sweepId: z.number().int(),
  state: z.enum(['running', 'done', 'cancelled']),
  url: z.string(),
  total: z.number().int(),
  done: z.number().int(),
  ok: z.number().int(),
  failed: z.number().int(),
  last: z.object({ nodeId: z.string(), ms: z.number().nullable() }).nullable(),
  startedAt: z.number(),
});
export type NodeTestDto = z.infer<typeof nodeTestSchema>;

/** Where traffic leaves, measured through the active tunnel (config exitCheck.url). */
export const exitInfoSchema = z.object({
  nodeId: z.string().nullable(),
  address: z.string().nullable(),
  /** ISO code, when the echo service says it. */
  country: z.string().nullable(),
  at: z.number(),
  error: z.string().nullable(),
});
export type ExitInfoDto = z.infer<typeof exitInfoSchema>;

export const routeModeSchema = z.enum(['rule', 'global', 'direct']);

export const ruleSetInfoSchema = z.object({
  name: z.string(),
  type: z.enum(['http', 'file']),
  behavior: z.enum(['domain', 'ipcidr', 'classical']),
  format: z.enum(['yaml', 'text', 'mrs']),
  entries: z.number().int(),
  badLines: z.number().int(),
  updatedAt: z.number().nullable(),
  /** Why the last load or refresh failed; the last good copy stays in use. */
  error: z.string().nullable(),
  refreshing: z.boolean(),
});
export type RuleSetInfoDto = z.infer<typeof ruleSetInfoSchema>;

/** Where flows go (issue #33): the mode, the table's size and problems, the rule sets. */
export const routingStatusSchema = z.object({
  mode: routeModeSchema,
  rules: z.number().int(),
  /** The user's rules (config `rules`) replace the default table. */
  custom: z.boolean(),
  errors: z.array(z.object({ source: z.string(), line: z.number().int(), text: z.string(), message: z.string() })),
  ruleSets: z.array(ruleSetInfoSchema),
  /** Flows by target since start (TCP connects and UDP peers). */
  routed: z.record(z.string(), z.number().int()),
});
export type RoutingStatusDto = z.infer<typeof routingStatusSchema>;

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

export const nodeStateSchema = z.enum(['active', 'draining', 'standby', 'candidate', 'backoff']);

export const nodeSchema = z.object({
  id: z.string(),
  host: z.string(),
  ip: z.string(),
  port: z.number().int(),
  proto: z.enum(['tcp', 'udp']),
  country: z.string(),
  countryCode: z.string(),
  prior: z.number().nullable(),
  rttMs: z.number().nullable(),
  score: z.number().nullable(),
  scoreTerms: z
    .object({ latency: z.number(), prior: z.number(), history: z.number(), recentFailures: z.number() })
    .nullable(),
  successes: z.number().int(),
  failures: z.number().int(),
  lastSuccessAt: z.number().nullable(),
  lastFailureAt: z.number().nullable(),
  backoffUntil: z.number().nullable(),
  /**
   * Automatic selection left it in use for how it failed (#60), and keeps away from it until
   * `until` (a user's pick clears it). Null: not so. Absent: an older core.
   */
  left: z
    .object({
      shape: z.enum(['link', 'dns', 'connects', 'stall', 'slow', 'other', 'flapping']),
      at: z.number(),
      until: z.number(),
    })
    .nullable()
    .optional(),
  urlDelayMs: z.number().nullable(),
  state: nodeStateSchema,
  /** When a list last named it (the pool keeps nodes absent from the latest list); null for your own profiles. */
  lastListedAt: z.number().nullable(),
  /** Why the latest ranking left it out (backoff, left, unreachable, country-denied, not-in-top-k, needs-udp, tampers, ca-in-clear), or null. */
  excluded: z.string().nullable(),
  /**
   * The node refused modern TLS (an alert or a version or cipher error, never silence): its OpenVPN
   * control channel runs on TLS 1.0+ with weak ciphers. Remembered for 30 days.
   */
  weakTls: z.boolean(),
  /** Whether it was checked for tampering and what was found (null: this core runs no checks). */
  honesty: honestySchema.nullable(),
  /** Each protocol the node can be reached with, in the order it is tried, and what it did so far. */
  protocols: z.array(
    z.object({
      protocol: tunnelProtocolSchema,
      tried: z.number().int(),
      worked: z.number().int(),
      /** The latest attempt: true worked, false failed, null none yet. */
      lastOk: z.boolean().nullable(),
      lastError: z.string().nullable(),
      at: z.number().nullable(),
    }),
  ),
});
export type NodeDto = z.infer<typeof nodeSchema>;

export const nodesSchema = z.object({
  nodes: z.array(nodeSchema),
  fetchedAt: z.number().nullable(),
  source: z.string(),
  via: listViaSchema,
});

export const importRequestSchema = z
  .object({
    csv: z
      .string()
      .min(1, 'the file is empty')
      .max(16 * 1024 * 1024),
  })
  .strict();
export const importResultSchema = z.object({
  /** Nodes taken from the file. */
  imported: z.number().int(),
  /** Rows left out, by reason. */
  skipped: z.record(z.string(), z.number().int()),
  /** Nodes in the pool now. */
  nodes: z.number().int(),
});
export type ImportResult = z.infer<typeof importResultSchema>;
export type Nodes = z.infer<typeof nodesSchema>;

export const switchRequestSchema = z
  .object({
    nodeId: z.string().min(1).max(255).optional(),
    /** The user saw that the node was found to tamper and wants it anyway (GH_ERR_NODE_FLAGGED without it). */
    confirm: z.boolean().optional(),
  })
  .strict();
export const switchAcceptedSchema = z.object({ switchId: z.number().int() });

export const modeRequestSchema = z.object({ auto: z.boolean() }).strict();
export const modeResponseSchema = z.object({ mode: z.enum(['auto', 'manual']), pinned: z.string().nullable() });

export const latencyQuerySchema = z.object({
  nodeId: z.string().min(1).max(255).optional(),
  /** Samples at or after this time (ms since the epoch); default: the last hour. */
  sinceMs: z.coerce.number().int().min(0).optional(),
});
export const latencySampleSchema = z.object({
  nodeId: z.string(),
  at: z.number(),
  kind: z.enum(['tcp', 'url', 'dns']),
  ms: z.number().nullable(),
  success: z.boolean(),
});
export const latencySchema = z.object({ samples: z.array(latencySampleSchema) });

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

// ---- the Clash-compatible subset ----

export const clashProxySchema = z.object({
  name: z.string(),
  type: z.string(),
  udp: z.boolean(),
  history: z.array(z.object({ time: z.string(), delay: z.number() })),
  now: z.string().optional(),
  all: z.array(z.string()).optional(),
});
export const clashProxiesSchema = z.object({ proxies: z.record(z.string(), clashProxySchema) });
export const clashSelectSchema = z.object({ name: z.string().min(1).max(255) });
export const clashDelaySchema = z.object({ delay: z.number() });
export const clashDelayQuerySchema = z.object({
  url: z.string().url(),
  timeout: z.coerce.number().int().min(1).max(60_000),
});
export const clashTrafficSchema = z.object({ up: z.number(), down: z.number() });

const routeTargetSchema = z.enum(['TUNNEL', 'DIRECT', 'REJECT']);

/**
 * A mihomo/Clash config's routing brought over (`POST /routing/import`, `gatehop import-rules`):
 * the YAML itself or a URL Gatehop fetches (directly, then through the tunnel). Without `apply`
 * it only reads the file and lists what its rules target; with it, the rules, sub-rules, rule sets
 * and mode are saved with each name mapped (given here, else saved from an earlier import, else
 * Gatehop's guess), and the mapping is kept for the next import.
 */
export const ruleImportRequestSchema = z
  .object({
    config: z
      .string()
      .min(1)
      .max(16 * 1024 * 1024)
      .optional(),
    url: z
      .string()
      .url()
      .regex(/^https?:\/\//i, 'must be an http or https URL')
      .optional(),
    mapping: z.record(z.string().min(1).max(256), routeTargetSchema).optional(),
    apply: z.boolean().default(false),
    /** Take the config's routing mode too (rule, global, direct): only when the user said so (#59). */
    setMode: z.boolean().default(false),
  })
  .strict()
  .refine((r) => (r.config === undefined) !== (r.url === undefined), {
    message: 'give the config text or its url, one of them',
  });

export const ruleImportResultSchema = z.object({
  mode: routeModeSchema.nullable(),
  rules: z.number().int(),
  subRules: z.array(z.string()),
  ruleSets: z.array(z.string()),
  targets: z.array(
    z.object({
      name: z.string(),
      /** Gatehop's guess: builtin, all-direct, all-reject, first-member, has-proxies, a-proxy, unknown. */
      guess: routeTargetSchema,
      why: z.string(),
      rules: z.number().int(),
      /** What an earlier import mapped it to. */
      saved: routeTargetSchema.nullable(),
      /** What it maps to now: given, else saved, else the guess. */
      use: routeTargetSchema,
    }),
  ),
  /** Names that are neither Gatehop's own targets nor mapped by an earlier import: the ones to ask about. */
  ask: z.array(z.string()),
  skipped: z.array(z.object({ what: z.string(), why: z.string() })),
  applied: z.boolean(),
  restartRequired: z.array(z.string()),
});
export type RuleImportRequest = z.input<typeof ruleImportRequestSchema>;
export type RuleImportResult = z.infer<typeof ruleImportResultSchema>;
