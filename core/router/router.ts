import type { Socket } from 'node:net';
import { isIP } from 'node:net';
import type { Logger } from '../common/index.js';
import type { EgressSource } from '../contracts/index.js';
import {
  pacScript,
  type Decision,
  type Flow,
  type RouteTarget,
  type RulePath,
  type RuleTable,
} from '../rules/index.js';

/** The local program behind a client connection (null: not found). */
export type ProcessLookup = (socket: Socket) => Promise<{ name: string; path: string } | null>;

/** What routing needs from the app: the current table, the host's own network, and how to find a program. */
export interface Routing {
  /** Read per flow: a reload swaps it, open flows keep the decision they were opened with. */
  table(): RuleTable;
  /** DIRECT: the host's own network. */
  readonly direct: EgressSource;
  readonly processOf?: ProcessLookup;
  /** Ports whose IP-addressed flows are read for a name (default: HTTP's and TLS's). */
  readonly sniffPorts?: () => ReadonlySet<number>;
  /** privacy.httpsOnly, read per flow: plain HTTP through the tunnel is refused with a page that says why. */
  readonly httpsOnly?: () => boolean;
}

/** Without routing (the proxy on its own, as in tests of the front end): everything goes to the one source. */
const UNROUTED: Decision = { target: 'TUNNEL', rule: 'GLOBAL', payload: '' };
/** A name resolved inside the tunnel is remembered this long (the tunnel's resolver gives no TTL here). */
const NAME_TTL_MS = 60_000;
/**
 * A lookup that failed (no tunnel up yet, the tunnel's resolver timed out) is remembered this long
 * only: cached for the minute, it made `GEOIP,CN,DIRECT` miss every named flow for a minute after a
 * start (#45); not cached at all, every flow of a busy page would ask again at once.
 */
const FAILED_LOOKUP_TTL_MS = 2_000;
const MAX_NAMES = 4_096;
/** A decision with the in-tunnel address it was made with, when a named flow's address was resolved for it. */
function withAddress(d: Decision, f: Flow): Decision {
  const found = typeof f.ip === 'string' && !isIP(f.host) ? { ...d, address: f.ip } : d;
  // The program a PROCESS-NAME rule looked up is kept for the traffic ledger (never looked up for it).
  return f.process ? { ...found, program: f.process.name } : found;
}

/** Ports whose first client bytes are an HTTP head or a TLS ClientHello. */
export const SNIFF_PORTS: ReadonlySet<number> = new Set([80, 443, 8080, 8443, 8880]);
/** How often the table is asked for one flow while it needs facts (an address, a program) it can then be given. */
const MAX_ROUNDS = 4;

/**
 * Asks the rule table where a flow goes and finds what the table needs on the way: a named
 * destination's address is resolved **inside the tunnel** (never by the host's resolver, so routing
 * adds no clear DNS query), cached for a minute; the local program only when a rule asks for it.
 * It also owns where each target leads (`sourceFor`): the front ends lease TUNNEL and DIRECT egress
 * from it alone.
 */
export class Router {
  readonly #names = new Map<string, { ip: string | null; until: number }>();

  constructor(
    private readonly routing: Routing | null,
    private readonly tunnel: EgressSource,
    private readonly log: Logger,
  ) {}

  get routed(): boolean {
    return this.routing !== null;
  }

  /**
   * Whether a flow addressed by IP should be held for its first bytes' name (SNI, Host) before it is
   * routed: only on the ports HTTP and TLS use (as mihomo's sniffer), so a protocol where the server
   * speaks first (SSH, SMTP, IMAP) never waits for a client that will not speak.
   */
  sniffs(port: number): boolean {
    return (this.routing?.sniffPorts?.() ?? SNIFF_PORTS).has(port) && (this.routing?.table().sniffs ?? false);
  }

  /** Whether plain HTTP through a volunteer node is refused now (privacy.httpsOnly). */
  httpsOnly(): boolean {
    return this.routing?.httpsOnly?.() ?? false;
  }

  /** The PAC script for the system proxy in rule mode, pointing at `proxy` (host:port); null without routing. */
  pac(proxy: string): string | null {
    return this.routing ? pacScript(this.routing.table(), proxy) : null;
  }

  /** The egress source for a target (REJECT has none). */
  sourceFor(target: Exclude<RouteTarget, 'REJECT'>): EgressSource {
    return target === 'DIRECT' && this.routing ? this.routing.direct : this.tunnel;
  }

  /** Where `flow` goes; never rejects (a failed lookup leaves that fact unknown, and rules that need it do not match). */
  async decide(flow: Flow, client?: Socket): Promise<Decision> {
    if (!this.routing) return UNROUTED;
    const table = this.routing.table();
    let f: Flow = flow;
    // Each round goes on from the rule that asked: rules above it never see what it needed.
    let from: RulePath = [];
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const a = table.decide(f, from);
      if ('decision' in a) return withAddress(a.decision, f);
      from = a.at;
      if (a.need === 'address') f = { ...f, ip: await this.#resolve(f.host) };
      else f = { ...f, process: client && this.routing.processOf ? await this.#process(client) : null };
    }
    const last = table.decide({ ...f, ip: f.ip ?? null, process: f.process ?? null }, from);
    return 'decision' in last ? withAddress(last.decision, f) : UNROUTED;
  }

  /**
   * The same decision without waiting, when the table can give one at once (UDP's per-packet path):
   * a named flow's cached address is given only to the rule that asks for it, as decide() does.
   */
  decideNow(flow: Flow): Decision | null {
    if (!this.routing) return UNROUTED;
    const table = this.routing.table();
    let a = table.decide(flow);
    if ('need' in a && a.need === 'address' && flow.ip === undefined && !isIP(flow.host)) {
      const hit = this.#names.get(flow.host.toLowerCase());
      if (hit && hit.until > Date.now()) a = table.decide({ ...flow, ip: hit.ip }, a.at);
    }
    return 'decision' in a ? a.decision : null;
  }

  async #resolve(host: string): Promise<string | null> {
    const key = host.toLowerCase();
    const hit = this.#names.get(key);
    if (hit && hit.until > Date.now()) return hit.ip;
    const lease = this.tunnel.acquire();
    let ip: string | null = null;
    let ttl = NAME_TTL_MS;
    try {
      ip = (await lease.egress.resolve(host))[0] ?? null;
    } catch (err) {
      ttl = FAILED_LOOKUP_TTL_MS;
      this.log.debug(
        { event: 'route-resolve-failed', host, err: (err as Error).message },
        'a rule needed the address of a name the tunnel could not resolve',
      );
    } finally {
      lease.release();
    }
    if (this.#names.size >= MAX_NAMES) this.#names.delete(this.#names.keys().next().value!);
    this.#names.set(key, { ip, until: Date.now() + ttl });
    return ip;
  }

  async #process(client: Socket): Promise<{ name: string; path: string } | null> {
    try {
      return (await this.routing!.processOf!(client)) ?? null;
    } catch (err) {
      this.log.debug({ event: 'process-lookup-failed', err: (err as Error).message }, 'could not find the program');
      return null;
    }
  }
}
