import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import {
  ErrorCodes,
  GatehopError,
  isLoopbackHost,
  parseEndpoint,
  type Endpoint,
  wholeNumber,
} from '../common/index.js';
import { parseUpstreamUrl, type UpstreamProxy } from '../reach/index.js';
import { nodeProtocolsSchema, protocolOrderSchema } from '../api/index.js';
import { proxyOptionsSchema } from '../proxy/index.js';
import {
  groupOptionsSchema,
  recoveryOptionsSchema,
  type GroupOptions,
  type ProtocolChoiceOptions,
  type RecoveryOptions,
} from '../groups/index.js';
import { healthOptionsSchema, type HealthOptions } from '../health/index.js';
import {
  DEFAULT_DOH_SERVERS,
  dohServerSchema,
  honestyOptionsSchema,
  type DohServer,
  type HonestyOptions,
} from '../honesty/index.js';
import { selectorOptionsSchema, type SelectorOptions } from '../selector/index.js';
import { DEFAULT_BYPASS } from '../sysproxy/index.js';
import { defaultDataDir } from './paths.js';
import { DEFAULT_GEOSITE_URL } from '../router/index.js';
import { ruleProviderName, ruleProviderSchema } from '../api/index.js';

/** A string that `parse` takes without throwing (the message otherwise says what is expected). */
function parsedBy(parse: (text: string) => unknown, message: string) {
  return z.string().refine((text) => {
    try {
      parse(text);
      return true;
    } catch {
      return false;
    }
  }, message);
}

const endpointText = parsedBy(parseEndpoint, 'must be HOST:PORT');

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** How replaced tunnels are let go, and how quickly a silent one is noticed (config `switching:`). */
const switchingSchema = z
  .object({
    /** Sessions on a replaced tunnel may finish for this long, then they are force-closed. */
    drainGraceMs: wholeNumber(0, 10 * 60_000),
    maxDraining: wholeNumber(0, 2),
    /** Close sessions on a replaced tunnel at once (the exit address changes now). */
    interruptExistingConnections: z.boolean().default(false),
    /**
     * A tunnel whose server is silent this long (though asked) is left for another; 0 = off. A
     * floor: a node whose echoes take long gets longer (core/egress/silence-limits.ts).
     */
    unresponsiveMs: wholeNumber(0, 2_000),
    /** The name the in-tunnel DNS health sample asks for. */
    healthDnsName: z.string().min(1).default('connectivitycheck.gstatic.com'),
  })
  .strict();

/** Where tunnels run (config `tunnel:`). */
const tunnelSchema = z
  .object({
    /** Each tunnel's OpenVPN client, lwIP stack and DNS in a worker thread of its own; false keeps them on the main thread. */
    threads: z.boolean().default(true),
    /** A tunnel worker's JS heap cap (MiB); past it only that tunnel fails. */
    workerHeapMb: z.number().int().min(32).max(4096).default(256),
    /**
     * The order a node's protocols are tried in: OpenVPN (UDP or TCP, as its profile says), SoftEther's
     * own SE-VPN (TLS on the node's TCP port), MS-SSTP (HTTPS). By the figures (core/softether/README):
     * OpenVPN first, for over UDP on a lossy path it carries several times what any protocol inside
     * TCP does; SE-VPN next, the fastest of the three on a clean path (above SSTP and OpenVPN over
     * TCP); SSTP last.
     */
    protocols: protocolOrderSchema.default(['openvpn', 'sevpn', 'sstp']),
    /**
     * A node's own order by its id (`<node id>: [sevpn]`), replacing `protocols` for that node: a
     * protocol left out is never used with it, and what the network taught does not reorder it.
     */
    nodeProtocols: nodeProtocolsSchema.default({}),
    /** Learn which protocol this network lets through (OpenVPN failing on several nodes while SSTP works) and try it first. */
    learnProtocol: z.boolean().default(true),
    /**
     * A CA certificate (PEM file) trusted like the OS roots for nodes on every protocol: it vouches
     * for a listed node only under the node's DDNS name (core/reach/node-trust).
     */
    nodeCa: z.string().min(1).optional(),
    sstp: z
      .object({
        /** The old name of tunnel.nodeCa (read, with a warning). */
        ca: z.string().min(1).optional(),
        /** Send the node's name as TLS SNI, as Windows does; off where a filter blocks by SNI. */
        sni: z.boolean().default(true),
        /** The TLS port of nodes whose list entry names no TCP port (VPN Gate's SSTP runs on SoftEther's HTTPS listener). */
        port: z.number().int().min(1).max(65535).default(443),
        /** VPN Gate's SSTP account. */
        username: z.string().min(1).default('vpn'),
        password: z.string().min(1).default('vpn'),
      })
      .strict()
      .prefault({}),
    /** SE-VPN: the hub and account (VPN Gate's); tunnel.sstp.sni applies to it too. */
    sevpn: z
      .object({
        hub: z.string().min(1).max(255).default('VPNGATE'),
        username: z.string().min(1).max(255).default('vpn'),
        password: z.string().min(1).max(255).default('vpn'),
        /** TCP connections per session (SoftEther's max_connection; the hub may allow fewer). */
        connections: z.number().int().min(1).max(32).default(1),
      })
      .strict()
      .prefault({}),
  })
  .strict();

/** Where the node list comes from and how nodes are reached (config `vpngate:`). */
const vpngateSchema = z
  .object({
    /** Read VPN Gate's mirror directories and try the mirrors found when the official endpoints fail. */
    mirrors: z.boolean().default(true),
    /** More list sources: any URL serving the list in VPN Gate's CSV format (community copies). */
    sources: z
      .array(
        z
          .string()
          .url()
          .refine((u) => /^https?:/i.test(u), 'must be an http or https URL'),
      )
      .max(50)
      .default([]),
    /** When no direct source answers but a tunnel is up, fetch the list through it. */
    throughTunnel: z.boolean().default(true),
    /** Keep every node listed within this many days (the list is a different part of all servers each time). */
    keepDays: z.number().int().min(1).max(90).default(7),
    /** Connect to a node's address (ip) or its DDNS name, <HostName>.opengw.net (hostname). */
    connectBy: z.enum(['ip', 'hostname']).default('ip'),
    /**
     * Dial nodes (and mirrors) a list names at private addresses (10/8, 172.16/12, 192.168/16,
     * 100.64/10, fc00::/7). Off: a list is someone else's data and may not aim Gatehop at the
     * user's LAN. Loopback, link-local, multicast and broadcast are never dialled from a list.
     */
    allowPrivateNodes: z.boolean().default(false),
    /** One source's deadline: the whole request, a stalled body included. */
    timeoutMs: z.number().int().min(500).max(120_000).default(15_000),
    /** Each source's head start before the next one is tried too (sooner when it fails). */
    headStartMs: z.number().int().min(0).max(60_000).default(1_500),
  })
  .strict();

const upstreamUrl = parsedBy(
  parseUpstreamUrl,
  'must be socks5://[user:pass@]HOST:PORT or http://[user:pass@]HOST:PORT',
);

/** The user's other proxy (config `upstream:`, flag --upstream). */
const upstreamSchema = z
  .object({
    url: upstreamUrl,
    /**
     * Open tunnels through it too (TCP nodes by CONNECT; UDP nodes only over a SOCKS5 proxy whose
     * UDP relay works): true always, false never, `fallback` only on a network where no node
     * answers directly, remembered per network (direct first where it works: faster, and the other
     * proxy is spared).
     */
    nodes: z.union([z.boolean(), z.literal('fallback')]).default(true),
  })
  .strict();

/** The OS proxy settings (config `systemProxy:`, flag --system-proxy). */
const systemProxySchema = z
  .object({
    /** Point the OS at Gatehop once the proxy listens; restore the user's settings on every way out. */
    enabled: z.boolean().default(false),
    /** Hosts and ranges that go direct. */
    bypass: z.array(z.string().min(1)).default([...DEFAULT_BYPASS]),
    /** Set the proxy back when another program rewrites it (it is always noticed and reported). */
    guard: z.boolean().default(false),
    /**
     * Point the OS at Gatehop's PAC script (made from the rule table, served on the proxy port at
     * /proxy.pac) instead of the proxy: browsers then skip the proxy for what the rules send
     * direct. Off by default: programs that do not read PAC scripts would then use no proxy at all.
     */
    pac: z.boolean().default(false),
    /** How often the settings are compared with what Gatehop set. */
    guardIntervalMs: wholeNumber(1_000, 15_000),
    /**
     * Kill switch (live): when Gatehop stops, normally or not, the system proxy it set stays pointed
     * at its port, and the next start keeps it rather than recovering, so programs that use the
     * proxy fail closed instead of going direct. Off restores the user's settings on every way out.
     */
    killSwitch: z.boolean().default(false),
  })
  .strict();

/** "Share with this network" (#63): whether it listens from the start (the window's switch, once used, wins), and its port. */
const shareSchema = z
  .object({ enabled: z.boolean().default(false), port: z.number().int().min(1).max(65535).default(1081) })
  .strict();

/** Where GEOSITE rules find v2fly's domain lists (config `geosite:`). */
const geositeSchema = z
  .object({
    /** A geosite.dat (v2fly's GeoSiteList), fetched when a rule names GEOSITE and kept in the data dir. */
    url: z.string().url().default(DEFAULT_GEOSITE_URL),
    /** How often the kept copy is fetched again. */
    updateIntervalHours: z
      .number()
      .int()
      .min(1)
      .max(24 * 90)
      .default(72),
  })
  .strict();

/** The config file and the command line share this shape; flags win over the file. */
export const configSchema = z
  .object({
    listen: endpointText.default('127.0.0.1:1080'),
    egress: z.enum(['direct', 'vpngate']).default('vpngate'),
    admin: z.union([z.literal('off'), endpointText]).default('127.0.0.1:9090'),
    adminToken: z.string().min(16, 'admin token must be at least 16 characters').optional(),
    /** Browser origins (e.g. a Clash dashboard's) allowed to call the admin API. */
    adminCorsOrigins: z.array(z.string().url()).default([]),
    /** Names of this machine a browser on the LAN may open the dashboard by (homeserver.lan): the API refuses other Host names. */
    adminHosts: z
      .array(
        z.string().regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i, 'a host name such as homeserver.lan, without a port'),
      )
      .default([]),
    /** A Clash dashboard build (yacd, metacubexd, zashboard) served at /ui/external/ on the admin port, like Clash's external-ui. */
    externalUi: z.string().min(1).optional(),
    dataDir: z.string().min(1).optional(),
    authFile: z.string().min(1).optional(),
    noAuth: z.boolean().default(false),
    logLevel: logLevel.default('info'),
    logFile: z.union([z.literal('off'), z.string().min(1)]).optional(),
    proxy: proxyOptionsSchema.omit({ host: true, port: true }).partial().default({}),
    /** VPN Gate list endpoints, tried in order; given, they replace the official ones. */
    api: z.array(z.string().url()).default([]),
    /** The user's own .ovpn profiles; with only these, no list is fetched. */
    ovpn: z.array(z.string().min(1)).default([]),
    listRefreshMs: wholeNumber(60_000, 20 * 60_000),
    vpngate: vpngateSchema.prefault({}),
    /** Clash's modes: rule (the table decides), global (everything through the tunnel), direct. */
    mode: z.enum(['rule', 'global', 'direct']).default('rule'),
    /** The rule table in mihomo's syntax; given, it replaces the default table whole (as in Clash). */
    rules: z.array(z.string().max(4096)).max(100_000).optional(),
    /** Named rule lists that `SUB-RULE,(CONDITION),NAME` lines hand a flow to (mihomo's `sub-rules`). */
    subRules: z.record(z.string().min(1).max(128), z.array(z.string().max(4096)).max(100_000)).default({}),
    /** Ports whose flows addressed by IP are read for their name (TLS SNI, HTTP Host) when rules match names. */
    sniffPorts: z.array(z.number().int().min(1).max(65535)).max(64).default([80, 443, 8080, 8443, 8880]),
    /** Rule sets the rules name with RULE-SET,<name>,TARGET. */
    ruleProviders: z.record(ruleProviderName, ruleProviderSchema).default({}),
    geosite: geositeSchema.prefault({}),
    upstream: upstreamSchema.optional(),
    selector: selectorOptionsSchema.prefault({}),
    groups: groupOptionsSchema.prefault({}),
    health: healthOptionsSchema.prefault({}),
    switching: switchingSchema.prefault({}),
    tunnel: tunnelSchema.prefault({}),
    /** Retrying a start without network (no list, no node answering, no tunnel). */
    recovery: recoveryOptionsSchema.prefault({}),
    systemProxy: systemProxySchema.prefault({}),
    /** Checks of every node for tampering, through its own tunnel (core/honesty, SECURITY.md). */
    honesty: honestyOptionsSchema.prefault({}),
    share: shareSchema.prefault({}),
    /** DNS-over-HTTPS resolvers by address: the honesty checks' second opinion, and privacy.encryptedDns. */
    dohServers: z
      .array(dohServerSchema)
      .min(1)
      .max(4)
      .default(DEFAULT_DOH_SERVERS.map((d) => ({ ...d }))),
    /** Less for a node to see (opt-in; README "What a node can see"). */
    privacy: z
      .object({
        /** Every name resolved in a tunnel by DNS over HTTPS through it (dohServers), never by the node's resolver. */
        encryptedDns: z.boolean().default(false),
        /** Plain HTTP through a volunteer node is refused with a page that says why; DIRECT is not touched. */
        httpsOnly: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    /** Where am I: an address-echo URL fetched through the active tunnel (JSON with ip/country, or the address as text); off when unset. */
    exitCheck: z
      .object({
        url: z
          .string()
          .url()
          .regex(/^https?:\/\//i, 'must be an http or https URL')
          .nullable()
          .default(null),
        intervalMs: wholeNumber(30_000, 600_000),
      })
      .strict()
      .prefault({}),
    /**
     * The leak self-test (the window's "Leak test", run only when the user asks). exitUrl: where
     * the exit address is asked through the node when exitCheck.url is unset. resolverUrl: a
     * resolver echo whose `{nonce}` Gatehop fills with a fresh name; the service answers with the
     * address of the resolver that looked that name up (JSON dns.ip or ip, or the address as text).
     * stunUrl: the STUN server the window's WebRTC check asks, from this computer's own address.
     * null: that part is not tested.
     */
    leakTest: z
      .object({
        exitUrl: z
          .string()
          .url()
          .regex(/^https?:\/\//i, 'must be an http or https URL')
          .nullable()
          .default('http://ip-api.com/json'),
        resolverUrl: z
          .string()
          .regex(
            /^https?:\/\/[^/\s]*\{nonce\}[^/\s]*(\/\S*)?$/i,
            'must be an http or https URL with {nonce} in its host',
          )
          .nullable()
          .default('http://{nonce}.edns.ip-api.com/json'),
        stunUrl: z
          .string()
          .regex(/^stuns?:[^\s/]+$/i, 'must be a stun: URL (stun:host:port)')
          .nullable()
          .default('stun:stun.cloudflare.com:3478'),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type ConfigInput = z.input<typeof configSchema>;
export type RuleProviderConfig = Readonly<z.infer<typeof ruleProviderSchema>>;

export interface GatehopConfig {
  readonly listen: Endpoint;
  readonly egress: 'direct' | 'vpngate';
  readonly admin: Endpoint | null;
  readonly adminToken: string | undefined;
  readonly adminCorsOrigins: readonly string[];
  readonly adminHosts: readonly string[];
  readonly externalUi: string | null;
  readonly dataDir: string;
  readonly authFile: string | undefined;
  readonly noAuth: boolean;
  readonly logLevel: z.infer<typeof logLevel>;
  readonly logFile: string | null;
  readonly proxy: Omit<z.infer<typeof proxyOptionsSchema>, 'host' | 'port'>;
  readonly api: readonly string[];
  readonly ovpn: readonly string[];
  readonly listRefreshMs: number;
  readonly vpngate: Readonly<Omit<z.infer<typeof vpngateSchema>, 'sources'> & { sources: readonly string[] }>;
  readonly mode: 'rule' | 'global' | 'direct';
  /** The user's rule lines, or null for the default table. */
  readonly rules: readonly string[] | null;
  readonly subRules: Readonly<Record<string, readonly string[]>>;
  readonly ruleProviders: Readonly<Record<string, RuleProviderConfig>>;
  readonly geosite: { readonly url: string; readonly updateIntervalMs: number };
  readonly sniffPorts: readonly number[];
  /** null: no upstream proxy. */
  readonly upstream: { readonly proxy: UpstreamProxy; readonly nodes: boolean | 'fallback' } | null;
  readonly selector: SelectorOptions;
  readonly groups: GroupOptions;
  readonly health: HealthOptions;
  readonly switching: z.infer<typeof switchingSchema>;
  readonly tunnel: z.infer<typeof tunnelSchema>;
  readonly recovery: RecoveryOptions;
  readonly exitCheck: { readonly url: string | null; readonly intervalMs: number };
  readonly leakTest: {
    readonly exitUrl: string | null;
    readonly resolverUrl: string | null;
    readonly stunUrl: string | null;
  };
  readonly honesty: HonestyOptions;
  readonly share: Readonly<z.infer<typeof shareSchema>>;
  readonly dohServers: readonly DohServer[];
  readonly privacy: { readonly encryptedDns: boolean; readonly httpsOnly: boolean };
  readonly systemProxy: Readonly<Omit<z.infer<typeof systemProxySchema>, 'bypass'> & { bypass: readonly string[] }>;
  /** What the config said that still works but should change (old names), for a warning at start and in `gatehop check`. */
  readonly notices: readonly string[];
}

export function readConfigFile(path: string): ConfigInput {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `cannot read config ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return parseConfigText(text, path);
}

/** A config file's text (YAML) as the mapping it must be; `name` says which file in errors. */
export function parseConfigText(text: string, name: string): ConfigInput {
  let data: unknown;
  try {
    data = parseYaml(text) ?? {};
  } catch (err) {
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `config ${name} is not valid YAML: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `config ${name} must be a mapping of settings`);
  }
  return data;
}

/** Validates the merged settings once, at the edge, into a frozen config with every default filled. */
export function buildConfig(fromFile: ConfigInput, fromFlags: ConfigInput): GatehopConfig {
  const merged = {
    ...fromFile,
    ...fromFlags,
    proxy: { ...(fromFile.proxy ?? {}), ...(fromFlags.proxy ?? {}) },
    groups: { ...(fromFile.groups ?? {}), ...(fromFlags.groups ?? {}) },
    health: { ...(fromFile.health ?? {}), ...(fromFlags.health ?? {}) },
    switching: { ...(fromFile.switching ?? {}), ...(fromFlags.switching ?? {}) },
    tunnel: { ...(fromFile.tunnel ?? {}), ...(fromFlags.tunnel ?? {}) },
    vpngate: { ...(fromFile.vpngate ?? {}), ...(fromFlags.vpngate ?? {}) },
    ...(fromFile.upstream || fromFlags.upstream
      ? { upstream: { ...(fromFile.upstream ?? {}), ...(fromFlags.upstream ?? {}) } }
      : {}),
    recovery: { ...(fromFile.recovery ?? {}), ...(fromFlags.recovery ?? {}) },
    exitCheck: { ...(fromFile.exitCheck ?? {}), ...(fromFlags.exitCheck ?? {}) },
    leakTest: { ...(fromFile.leakTest ?? {}), ...(fromFlags.leakTest ?? {}) },
    honesty: { ...(fromFile.honesty ?? {}), ...(fromFlags.honesty ?? {}) },
    share: { ...(fromFile.share ?? {}), ...(fromFlags.share ?? {}) },
    privacy: { ...(fromFile.privacy ?? {}), ...(fromFlags.privacy ?? {}) },
    systemProxy: { ...(fromFile.systemProxy ?? {}), ...(fromFlags.systemProxy ?? {}) },
    api: fromFlags.api?.length ? fromFlags.api : fromFile.api,
    ovpn: fromFlags.ovpn?.length ? fromFlags.ovpn : fromFile.ovpn,
  };
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    const where = first.path.length > 0 ? first.path.join('.') : 'config';
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `${where}: ${first.message}`);
  }
  const c = parsed.data;
  const defaults = proxyOptionsSchema.parse({});
  const dataDir = c.dataDir ?? defaultDataDir();
  const listen = parseEndpoint(c.listen, 'listen');
  const notices: string[] = [];
  // One name for the extra CA on every protocol; the SSTP-era name is still read.
  const nodeCa = c.tunnel.nodeCa ?? c.tunnel.sstp.ca;
  if (c.tunnel.sstp.ca !== undefined)
    notices.push(
      c.tunnel.nodeCa !== undefined
        ? 'tunnel.sstp.ca is ignored: tunnel.nodeCa is set (it applies to every protocol)'
        : 'tunnel.sstp.ca is the old name of tunnel.nodeCa (now read for every protocol): rename it',
    );
  if (c.authFile && c.noAuth) {
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, '--auth-file and --no-auth exclude each other');
  }
  if (!c.authFile && !c.noAuth && !isLoopbackHost(listen.host)) {
    throw new GatehopError(
      ErrorCodes.CONFIG_INVALID,
      `listening on ${listen.host} (not loopback) needs --auth-file; pass --no-auth to run an open proxy anyway`,
    );
  }
  return Object.freeze({
    listen,
    egress: c.egress,
    admin: c.admin === 'off' ? null : parseEndpoint(c.admin, 'admin'),
    adminToken: c.adminToken,
    adminCorsOrigins: Object.freeze(c.adminCorsOrigins.map((o) => new URL(o).origin)),
    adminHosts: Object.freeze(c.adminHosts.map((h) => h.toLowerCase())),
    externalUi: c.externalUi ? resolvePath(c.externalUi) : null,
    dataDir,
    authFile: c.authFile,
    noAuth: c.noAuth,
    logLevel: c.logLevel,
    logFile: c.logFile === 'off' ? null : (c.logFile ?? `${dataDir}/logs/gatehop.log`),
    proxy: Object.freeze({ ...defaults, ...stripUndefined(c.proxy) }),
    api: Object.freeze([...c.api]),
    ovpn: Object.freeze([...c.ovpn]),
    listRefreshMs: c.listRefreshMs,
    vpngate: Object.freeze({ ...c.vpngate, sources: Object.freeze([...c.vpngate.sources]) }),
    mode: c.mode,
    sniffPorts: Object.freeze([...c.sniffPorts]),
    // Lines the table cannot read (an unknown target or type, a malformed logic rule) are named by
    // the table and left out when it is built; none stops the start (#45).
    rules: c.rules ? Object.freeze([...c.rules]) : null,
    subRules: Object.freeze(Object.fromEntries(Object.entries(c.subRules).map(([k, v]) => [k, Object.freeze([...v])]))),
    // A relative rule-set path is taken in <data-dir>/rule-sets (rule-set-path.ts), not against the
    // directory Gatehop was started from: resolved here, `path: ads.txt` was refused as outside the
    // data dir wherever the set actually was.
    ruleProviders: Object.freeze(
      Object.fromEntries(Object.entries(c.ruleProviders).map(([k, v]) => [k, Object.freeze({ ...v })])),
    ),
    geosite: Object.freeze({ url: c.geosite.url, updateIntervalMs: c.geosite.updateIntervalHours * 3_600_000 }),
    upstream: c.upstream ? Object.freeze({ proxy: parseUpstreamUrl(c.upstream.url), nodes: c.upstream.nodes }) : null,
    selector: Object.freeze(c.selector),
    groups: Object.freeze(c.groups),
    health: Object.freeze(c.health),
    switching: Object.freeze(c.switching),
    tunnel: Object.freeze({
      ...c.tunnel,
      protocols: [...c.tunnel.protocols],
      nodeProtocols: Object.freeze(
        Object.fromEntries(Object.entries(c.tunnel.nodeProtocols).map(([k, v]) => [k, [...v]])),
      ),
      nodeCa: nodeCa ? resolvePath(nodeCa) : undefined,
      sstp: Object.freeze({ ...c.tunnel.sstp, ca: undefined }),
    }),
    notices: Object.freeze(notices),
    recovery: Object.freeze(c.recovery),
    exitCheck: Object.freeze({ ...c.exitCheck }),
    leakTest: Object.freeze({ ...c.leakTest }),
    honesty: Object.freeze(c.honesty),
    share: Object.freeze({ ...c.share }),
    dohServers: Object.freeze(c.dohServers.map((d) => Object.freeze(d))),
    privacy: Object.freeze(c.privacy),
    systemProxy: Object.freeze({ ...c.systemProxy, bypass: Object.freeze([...c.systemProxy.bypass]) }),
  });
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The protocol order, the nodes' own orders and learning from the config (tunnel.protocols, tunnel.nodeProtocols, tunnel.learnProtocol). */
export function protocolOptionsOf(c: GatehopConfig): ProtocolChoiceOptions {
  return { order: c.tunnel.protocols, nodeOrders: c.tunnel.nodeProtocols, learn: c.tunnel.learnProtocol };
}
