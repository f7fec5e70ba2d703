/**
 * The one contract between the core and every UI: each operation's HTTP route and its input and
 * output schemas, and each event's schema. The admin API validates with it, the renderer's
 * CoreClient (HTTP) and the Electron preload/main (IPC) are derived from it, so no channel name
 * or route is written twice. No Node imports: the renderer bundles this file.
 */
import { z } from 'zod';
import {
  connectionsSchema,
  importRequestSchema,
  importResultSchema,
  latencyQuerySchema,
  latencySampleSchema,
  latencySchema,
  logEventSchema,
  modeRequestSchema,
  modeResponseSchema,
  nodesSchema,
  routeModeSchema,
  routingStatusSchema,
  ruleImportRequestSchema,
  ruleImportResultSchema,
  ruleSetInfoSchema,
  statusSchema,
  tunnelProtocolSchema,
  protocolOrderSchema,
  nodeProtocolsSchema,
  nodeTestSchema,
  exitInfoSchema,
  switchAcceptedSchema,
  switchRecordSchema,
  switchRequestSchema,
  switchStateSchema,
  honestySchema,
  shareStateSchema,
  sharedDeviceSchema,
} from './schemas.js';
export type { ShareState, SharedDevice, TrafficSummaryView, ClosedConnections, ClosedConnection } from './schemas.js';
import { idParam, none, op, type Operation } from './op-shape.js';
export type { Operation } from './op-shape.js';
import { trafficOps } from './schemas/traffic.js';
import { profileEventSchema, profileOps } from './schemas/profiles.js';
import { leakOps } from './schemas/leak.js';

// ---- settings: what a user changes in the window ----

const hostPortText = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be HOST:PORT');
const countryCode = z.string().regex(/^[A-Z]{2}$/, 'must be a two-letter country code');

/** A rule set's name as RULE-SET names it. */
export const ruleProviderName = z.string().regex(/^[\w.-]{1,64}$/, 'a rule set name is letters, digits, _ . -');

/** A mihomo rule-provider: a rule set from a URL or a file (config `ruleProviders.<name>`, saved settings). */
export const ruleProviderSchema = z
  .object({
    type: z.enum(['http', 'file']),
    behavior: z.enum(['domain', 'ipcidr', 'classical']),
    /** yaml (a `payload:` list) or text (one entry per line); unset: a `payload:` list is read as yaml, else the extension decides (.txt, .list: text). */
    format: z.enum(['yaml', 'text', 'mrs']).optional(),
    url: z
      .string()
      .url()
      .regex(/^https?:\/\//i, 'must be an http or https URL')
      .optional(),
    /** type file: where it is; type http: where the last good copy is kept (default <data-dir>/rule-sets/<name>). */
    path: z.string().min(1).optional(),
    /** Seconds between refreshes of an http set (mihomo's unit); default a day. */
    interval: z
      .number()
      .int()
      .min(60)
      .max(30 * 86_400)
      .default(86_400),
  })
  .strict()
  .refine((p) => (p.type === 'http' ? !!p.url : !!p.path), {
    message: 'an http rule set needs url, a file rule set needs path',
  });
export type RuleProviderSetting = z.infer<typeof ruleProviderSchema>;

export const settingsSchema = z
  .object({
    /** The proxy's listen address (needs a restart). */
    listen: hostPortText,
    /** Proxy credentials file; null = no authentication (only allowed on loopback). */
    authFile: z.string().min(1).nullable(),
    countryAllow: z.array(countryCode).max(250),
    countryDeny: z.array(countryCode).max(250),
    preferProto: z.enum(['tcp', 'udp', 'any']),
    autoSelect: z
      .object({
        intervalMs: z
          .number()
          .int()
          .min(1_000)
          .max(24 * 3_600_000),
        toleranceMs: z.number().int().min(0).max(5_000),
        url: z.string().url(),
      })
      .strict(),
    drainGraceMs: z
      .number()
      .int()
      .min(0)
      .max(24 * 3_600_000),
    /** The order nodes' protocols are tried in (config tunnel.protocols): all three, some, or one alone. */
    protocols: protocolOrderSchema,
    /** A node's own order, replacing `protocols` for it (config tunnel.nodeProtocols); the Nodes view sets it. */
    nodeProtocols: nodeProtocolsSchema,
    /** More places that serve the VPN Gate list (config vpngate.sources); tried when the official ones fail. */
    listSources: z
      .array(
        z
          .string()
          .url('must be a URL')
          .regex(/^https?:\/\//i, 'must be an http or https URL'),
      )
      .max(50),
    /** Routing (config mode): rule (the rule table decides), global (everything through the tunnel), direct. */
    mode: z.enum(['rule', 'global', 'direct']),
    /** The user's rule table in mihomo's syntax (config rules); null: the default table. */
    rules: z.array(z.string().max(4096)).max(100_000).nullable(),
    /** Rule sets the rules name with RULE-SET (config ruleProviders): a country preset adds its domestic list here. */
    ruleProviders: z.record(ruleProviderName, ruleProviderSchema),
    /** Named rule lists for SUB-RULE lines (config subRules; what an imported Clash config's sub-rules become). */
    subRules: z.record(z.string().min(1).max(128), z.array(z.string().max(4096)).max(100_000)),
    language: z.enum(['auto', 'en', 'zh-CN', 'zh-TW', 'fa']),
    /** Start Gatehop when the user logs in: the desktop app's own setting (null in the dashboard of a core without one). */
    startAtLogin: z.boolean().nullable(),
    /**
     * Kill switch (config systemProxy.killSwitch; live): when Gatehop stops, normally or not, the
     * system proxy stays pointed at it, so programs that use it fail closed instead of going direct.
     */
    killSwitch: z.boolean(),
    /** Desktop notifications by kind (the tray app reads them; live). */
    notifications: z.object({ switched: z.boolean(), lost: z.boolean(), sysproxyChanged: z.boolean() }).strict(),
    /**
     * Trust and privacy: check nodes for tampering (config honesty.enabled) and with which plain-HTTP
     * URLs (null: the published defaults; named ones are compared with the copy through another node that passed its checks, #59);
     * encrypted DNS in the tunnel; HTTPS only through volunteer nodes (config privacy).
     */
    privacy: z
      .object({
        checkNodes: z.boolean(),
        checkUrls: z
          .array(
            z
              .string()
              .url('must be a URL')
              .regex(/^http:\/\//i, 'must be a plain http:// URL (the check is that nobody changes it on the way)'),
          )
          .min(1)
          .max(8)
          .nullable(),
        encryptedDns: z.boolean(),
        httpsOnly: z.boolean(),
      })
      .strict(),
  })
  .strict();
export type Settings = z.infer<typeof settingsSchema>;

export const settingsUpdateSchema = settingsSchema.partial().strict();
export const settingsResultSchema = z.object({
  settings: settingsSchema,
  /** Keys whose new values take effect only after Gatehop restarts. */
  restartRequired: z.array(z.string()),
});

/** POST /reload: what a reload applied, and what keeps its old value until a restart. */
export const reloadResultSchema = z.object({
  applied: z.array(z.string()),
  restartRequired: z.array(z.string()),
  listen: z.string(),
});
export type ReloadResult = z.infer<typeof reloadResultSchema>;

// ---- system proxy ----

export const sysproxyStateSchema = z.object({
  supported: z.boolean(),
  backend: z.string().nullable(),
  current: z.string().nullable(),
  enabled: z.boolean(),
  error: z.string().nullable(),
});
export type SysproxyState = z.infer<typeof sysproxyStateSchema>;

// ---- events ----

export const refreshEventSchema = z.object({
  refreshId: z.number().int(),
  phase: z.enum(['fetching', 'probing', 'done', 'failed']),
  nodes: z.number().int().nullable(),
  message: z.string().nullable(),
});
export const switchEventSchema = z.union([
  switchRecordSchema.extend({ type: z.literal('done') }),
  z.object({ type: z.literal('state'), state: switchStateSchema, switchId: z.number().int(), reason: z.string() }),
  z.object({ type: z.literal('mode'), mode: z.enum(['auto', 'manual']), pinned: z.string().nullable() }),
  z.object({ type: z.literal('pin-failed'), nodeId: z.string(), reason: z.string() }),
  /** This network was found to need another protocol first (or the configured order again). */
  z.object({
    type: z.literal('protocol'),
    preferred: tunnelProtocolSchema.nullable(),
    /** The protocol this network was found not to let through (absent from older cores). */
    blocked: tunnelProtocolSchema.nullable().optional(),
    reason: z.string(),
  }),
]);
export const drainEventSchema = z.object({
  type: z.enum(['draining', 'closed']),
  egressId: z.string(),
  nodeId: z.string().nullable(),
  sessions: z.number().int(),
  graceEndsAt: z.number().optional(),
  reason: z.string().optional(),
});
export const sysproxyEventSchema = z.object({ type: z.string(), message: z.string() });

/** What `gatehop run` gets to start its helper (a one-time key, good for a minute). */
export const captureTicketSchema = z.object({
  socketPath: z.string(),
  key: z.string(),
  gatewayAddress: z.string(),
  tunAddress: z.string(),
  mtu: z.number().int().min(576).max(65_535),
});
export type CaptureTicketDto = z.infer<typeof captureTicketSchema>;
export const captureSessionsSchema = z.object({
  sessions: z.array(
    z.object({
      id: z.number(),
      command: z.string(),
      startedAt: z.number(),
      connections: z.number(),
      udpFlows: z.number(),
    }),
  ),
});

export const events = {
  status: statusSchema,
  nodes: nodesSchema,
  /** Latency samples, one event per ranking (every ranked node) or URL test: a batch, not an event per node. */
  latency: z.object({ samples: z.array(latencySampleSchema) }),
  switch: switchEventSchema,
  drain: drainEventSchema,
  log: logEventSchema,
  refresh: refreshEventSchema,
  sysproxy: sysproxyEventSchema,
  /** "Test all" progress: once when it starts, after each node, once when it ends. */
  test: nodeTestSchema,
  /** Where am I: a new measurement of the exit. */
  exit: exitInfoSchema,
  /** A node's honesty check ended (or started): its verdict now. */
  honesty: z.object({ nodeId: z.string(), honesty: honestySchema }),
  /** A network's profile went on or off (#64). */
  profile: profileEventSchema,
} as const;
export type EventMap = { [K in keyof typeof events]: z.infer<(typeof events)[K]> };
export type EventKey = keyof EventMap;
export const eventKeys = Object.keys(events) as EventKey[];

// ---- operations ----

export const operations = {
  getStatus: op({ method: 'GET', path: '/status', input: none, output: statusSchema }),
  getNodes: op({ method: 'GET', path: '/nodes', input: none, output: nodesSchema }),
  refreshNodes: op({
    method: 'POST',
    path: '/nodes/refresh',
    input: none,
    output: z.object({ refreshId: z.number().int() }),
    okStatus: 202,
  }),
  /** A list file the user has (CSV as the body, or JSON {csv}): its nodes join the pool. */
  importNodes: op({
    method: 'POST',
    path: '/nodes/import',
    input: importRequestSchema,
    output: importResultSchema,
    maxBodyBytes: 16 * 1024 * 1024 + 1024,
    textField: 'csv',
  }),
  getLatency: op({ method: 'GET', path: '/latency', input: latencyQuerySchema.strict(), output: latencySchema }),
  getConnections: op({ method: 'GET', path: '/connections', input: none, output: connectionsSchema }),
  closeConnection: op({
    method: 'DELETE',
    path: '/connections/:id',
    input: idParam('id'),
    output: z.null(),
    okStatus: 204,
  }),
  switchNode: op({
    method: 'POST',
    path: '/switch',
    input: switchRequestSchema,
    output: switchAcceptedSchema,
    okStatus: 202,
  }),
  setMode: op({ method: 'POST', path: '/mode', input: modeRequestSchema, output: modeResponseSchema }),
  /** Routing mode (rule, global, direct): live, and kept for the next start. */
  setRouteMode: op({
    method: 'PUT',
    path: '/routing/mode',
    input: z.object({ mode: routeModeSchema }).strict(),
    output: routingStatusSchema,
  }),
  /** Fetches an http rule set (or re-reads a file one) now; the last good copy stays if that fails. */
  refreshRuleSet: op({
    method: 'POST',
    path: '/routing/rule-sets/:name/refresh',
    input: z.object({ name: z.string().min(1) }).strict(),
    output: ruleSetInfoSchema,
  }),
  /** A mihomo/Clash config's rules, sub-rules, rule sets and mode, with its group names mapped (read, or applied). */
  importRules: op({
    method: 'POST',
    path: '/routing/import',
    input: ruleImportRequestSchema,
    output: ruleImportResultSchema,
    maxBodyBytes: 16 * 1024 * 1024 + 64 * 1024,
  }),
  closeDraining: op({
    method: 'DELETE',
    path: '/draining/:egressId',
    input: idParam('egressId'),
    output: z.null(),
    okStatus: 204,
  }),
  reload: op({ method: 'POST', path: '/reload', input: none, output: reloadResultSchema }),
  /** `gatehop run`: a one-time key to its capture socket, for one program (named by `command`). */
  openCapture: op({
    method: 'POST',
    path: '/capture/sessions',
    input: z.object({ command: z.string().min(1).max(200) }).strict(),
    output: captureTicketSchema,
  }),
  /**
   * "Run a program through Gatehop…" (Linux): the core starts `command` (words, or a .desktop
   * file) captured; with `terminal`, in the user's terminal (their shell when command is empty).
   */
  runCaptured: op({
    method: 'POST',
    path: '/capture/run',
    input: z.object({ command: z.string().max(4096), terminal: z.boolean().default(false) }).strict(),
    output: z.object({ pid: z.number().int(), command: z.array(z.string()) }),
  }),
  /** The programs captured now (`gatehop run`). */
  getCaptureSessions: op({ method: 'GET', path: '/capture/sessions', input: none, output: captureSessionsSchema }),
  getSettings: op({ method: 'GET', path: '/settings', input: none, output: settingsResultSchema }),
  putSettings: op({ method: 'PUT', path: '/settings', input: settingsUpdateSchema, output: settingsResultSchema }),
  /** "Test all": a URL test through every node (or those named), a few at a time; progress comes as `test` events. */
  testNodes: op({
    method: 'POST',
    path: '/nodes/test',
    input: z.object({ nodeIds: z.array(z.string().min(1).max(255)).max(20_000).optional() }).strict(),
    output: nodeTestSchema,
    okStatus: 202,
  }),
  cancelNodeTest: op({
    method: 'DELETE',
    path: '/nodes/test',
    input: none,
    output: z.object({ cancelled: z.boolean() }),
  }),
  /** One node's URL test now (through its tunnel if one is up, else a tunnel opened for it). */
  testNode: op({
    method: 'POST',
    path: '/nodes/:nodeId/test',
    input: idParam('nodeId'),
    output: z.object({ nodeId: z.string(), ms: z.number().nullable(), error: z.string().nullable() }),
  }),
  /**
   * Forgets what this network taught (the protocol that does not get through, the way nodes were
   * reached): every protocol is tried again, in the configured order.
   */
  forgetNetwork: op({
    method: 'DELETE',
    path: '/protocols/network',
    input: none,
    output: z.object({ forgotten: z.boolean() }),
  }),
  /** A node's honesty check now (through its tunnel if one is up, else one opened for it): its verdict. */
  checkNode: op({
    method: 'POST',
    path: '/nodes/:nodeId/check',
    input: idParam('nodeId'),
    output: honestySchema,
  }),
  /** Where am I, measured now through the active tunnel. */
  checkExit: op({ method: 'POST', path: '/exit/check', input: none, output: exitInfoSchema }),
  /** Restart Gatehop (the desktop app: to apply settings that need it). */
  restart: op({ method: 'POST', path: '/restart', input: none, output: z.null(), okStatus: 202 }),
  /** "Share with this network": the switch, this computer's LAN addresses and the devices. */
  getShare: op({ method: 'GET', path: '/share', input: none, output: shareStateSchema }),
  setShare: op({
    method: 'PUT',
    path: '/share',
    input: z.object({ enabled: z.boolean() }).strict(),
    output: shareStateSchema,
  }),
  /** "Allow in the firewall": lets the shared port in from this network (as root, or through pkexec). */
  openShareFirewall: op({ method: 'POST', path: '/share/firewall', input: none, output: shareStateSchema }),
  /** A new device, with a generated user name and password. */
  addShareDevice: op({
    method: 'POST',
    path: '/share/devices',
    input: z.object({ name: z.string().trim().min(1).max(64) }).strict(),
    output: sharedDeviceSchema,
  }),
  /** Stops sharing with a device: its password and address stop working and its connections end now. */
  removeShareDevice: op({
    method: 'DELETE',
    path: '/share/devices/:id',
    input: idParam('id'),
    output: z.null(),
    okStatus: 204,
  }),
  /** A device's page address and its QR code (a PNG data URL). */
  getShareDeviceQr: op({
    method: 'GET',
    path: '/share/devices/:id/qr',
    input: idParam('id'),
    output: z.object({ url: z.string(), png: z.string() }),
  }),
  ...trafficOps,
  ...profileOps,
  ...leakOps,
  getSystemProxy: op({ method: 'GET', path: '/sysproxy', input: none, output: sysproxyStateSchema }),
  setSystemProxy: op({
    method: 'PUT',
    path: '/sysproxy',
    input: z.object({ enabled: z.boolean() }).strict(),
    output: sysproxyStateSchema,
  }),
} as const;

export type Operations = typeof operations;
export type OpName = keyof Operations;
export type OpInput<K extends OpName> = z.input<Operations[K]['input']>;
export type OpOutput<K extends OpName> = z.infer<Operations[K]['output']>;
export const opNames = Object.keys(operations) as OpName[];

/** Every call's result, over HTTP and IPC alike: errors keep their stable GH_ERR_* code. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: { code: string; message: string } };
export const resultErrorSchema = z.object({
  ok: z.literal(false),
  error: z.object({ code: z.string(), message: z.string() }),
});

/** Splits an input into the path (params filled, URL-encoded) and what goes in the query or body. */
export function routeFor(
  name: OpName,
  input: Record<string, unknown>,
): { method: Operation['method']; path: string; rest: Record<string, unknown> } {
  const o = operations[name];
  const rest = { ...input };
  const path = o.path.replace(/:([a-zA-Z]+)/g, (_, key: string) => {
    const v = rest[key];
    delete rest[key];
    return encodeURIComponent(String(v));
  });
  return { method: o.method, path, rest };
}
