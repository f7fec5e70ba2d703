import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { detach, ErrorCodes, GatehopError, writeFileAtomicAsync, type Logger } from '../common/index.js';
import {
  AsnDb,
  DEFAULT_RULES,
  GeoIp,
  MAX_CLASH_CONFIG_BYTES,
  parseMrsRuleSet,
  parseRuleSet,
  parseRuleSetAsync,
  type MatchContext,
  RuleTable,
  type RouteMode,
  type RuleError,
  type RuleSet,
  type RuleSetFormat,
} from '../route/index.js';
import { httpGet, type Dialer } from '../vpngate/index.js';

import { GeoSiteSource, type GeoSiteStatus } from './geosite-source.js';
import { ruleSetPath } from './rule-set-path.js';

/** A rule provider as the config gives it (mihomo's rule-providers). */
export interface RuleProviderConfig {
  readonly type: 'http' | 'file';
  readonly behavior: 'domain' | 'ipcidr' | 'classical';
  readonly url?: string | undefined;
  readonly path?: string | undefined;
  readonly interval: number;
  readonly format?: RuleSetFormat | undefined;
}

/** What routing reads of the config (the app's config is one). */
export interface RoutingConfig {
  readonly dataDir: string;
  readonly mode: RouteMode;
  /** The user's rule lines, or null for the default table. */
  readonly rules: readonly string[] | null;
  readonly subRules: Readonly<Record<string, readonly string[]>>;
  readonly ruleProviders: Readonly<Record<string, RuleProviderConfig>>;
  readonly sniffPorts: readonly number[];
  readonly geosite: { readonly url: string; readonly updateIntervalMs: number };
}

/** A rule set's body may be this large (a 120,000-line domestic list is ~3 MiB). */
export const MAX_RULE_SET_BYTES = 32 * 1024 * 1024;
/** An http rule set's fetch, body included. */
const FETCH_TIMEOUT_MS = 60_000;
/** A failed refresh is tried again after this long (sooner than the interval). */
const RETRY_MS = 10 * 60_000;

/** What `/status` and the Routing settings show of one rule set. */
export interface RuleSetStatus {
  name: string;
  type: 'http' | 'file';
  behavior: RuleSet['behavior'];
  format: RuleSetFormat;
  /** Entries in use (0 while none was ever loaded). */
  entries: number;
  badLines: number;
  /** When the copy in use was fetched or read. */
  updatedAt: number | null;
  /** Why the last load or refresh failed (the last good copy, if any, stays in use). */
  error: string | null;
  refreshing: boolean;
  /** When the next refresh is due (http sets; null while none is planned). */
  nextRefreshAt: number | null;
}

export interface RoutingStatus {
  mode: RouteMode;
  /** Rules in the table in use (the default table's when the config has none). */
  rules: number;
  custom: boolean;
  errors: RuleError[];
  ruleSets: RuleSetStatus[];
  geoip: { loaded: boolean; ranges: number; bytes: number; error: string | null } | null;
  /** v2fly's domain lists for GEOSITE rules; null while no rule names one. */
  geosite: GeoSiteStatus | null;
  /** AS numbers for IP-ASN rules; null while no rule names one. */
  asn: { loaded: boolean; ranges: number; bytes: number; error: string | null } | null;
}

interface Provider {
  readonly name: string;
  readonly config: RuleProviderConfig;
  /** The format the config or the name says: it also names the kept copy's file. */
  readonly defaultFormat: RuleSetFormat;
  /** The format the copy in use was read as. */
  format: RuleSetFormat;
  set: RuleSet | null;
  updatedAt: number | null;
  error: string | null;
  refreshing: Promise<void> | null;
  timer: NodeJS.Timeout | null;
  nextAt: number | null;
  /** Replaced by a reload: a fetch still in flight must not write the kept copy or rebuild the table. */
  retired: boolean;
  /** Where its file or kept copy is; null when its configured path was refused (then it never loads). */
  readonly path: string | null;
}

/**
 * The routing a running core uses: the rule table built from the config's mode and rules, the rule
 * sets they name (from files, or URLs kept on disk so a restart needs no network, refreshed on
 * their interval, directly and else through the tunnel), and GeoIP when a rule asks for countries.
 * A reload or a mode change builds a new table; open flows keep the decision they were opened with.
 */
export class RoutingState {
  #config: RoutingConfig;
  #sniffPorts: ReadonlySet<number>;
  #mode: RouteMode;
  #table: RuleTable;
  readonly #providers = new Map<string, Provider>();
  #geoip: GeoIp | null = null;
  #geoipError: string | null = null;
  #geoipLoading: Promise<void> | null = null;
  #geosite: GeoSiteSource | null = null;
  #asn: AsnDb | null = null;
  #asnError: string | null = null;
  #asnLoading: Promise<void> | null = null;
  readonly #log: Logger;
  #closed = false;
  #started = false;
  readonly #changeListeners = new Set<() => void>();

  constructor(
    config: RoutingConfig,
    logger: Logger,
    /** How a rule set is fetched, in order: straight (or through the upstream proxy), then a working tunnel. */
    private readonly dialers: () => ReadonlyArray<Dialer | null>,
    private readonly timing: { readonly retryMs: number } = { retryMs: RETRY_MS },
  ) {
    this.#config = config;
    this.#sniffPorts = new Set(config.sniffPorts);
    this.#mode = config.mode;
    this.#log = logger.child({ component: 'routing' });
    this.#loadProviders(config);
    this.#table = this.#build();
  }

  /** The table for the next flow. */
  table(): RuleTable {
    return this.#table;
  }

  get mode(): RouteMode {
    return this.#mode;
  }

  /** Ports whose IP-addressed flows are read for a name (config sniffPorts). */
  get sniffPorts(): ReadonlySet<number> {
    return this.#sniffPorts;
  }

  /** Whether the user's rules replace the default table. */
  get custom(): boolean {
    return this.#config.rules !== null;
  }

  /** The tray, the window and Clash dashboards switch the mode; the table is rebuilt at once. */
  setMode(mode: RouteMode): void {
    if (mode === this.#mode) return;
    this.#mode = mode;
    this.#rebuild('mode');
  }

  onChange(fn: () => void): () => void {
    this.#changeListeners.add(fn);
    return () => this.#changeListeners.delete(fn);
  }

  /** Starts what needs the network or the disk in the background: stale rule sets, GeoIP. */
  start(): void {
    this.#started = true;
    for (const p of this.#providers.values()) this.#schedule(p);
    this.#maybeLoadGeoIp();
    this.#maybeStartGeoSite();
    this.#maybeLoadAsn();
  }

  /** A reload: new mode, rules and rule sets (sets whose settings did not change keep their copy). */
  apply(next: RoutingConfig): void {
    const before = this.#config;
    this.#config = next;
    this.#sniffPorts = new Set(next.sniffPorts);
    if (next.mode !== before.mode) this.#mode = next.mode;
    const keep = new Map(this.#providers);
    this.#providers.clear();
    for (const [name, cfg] of Object.entries(next.ruleProviders)) {
      const old = keep.get(name);
      if (old && JSON.stringify(old.config) === JSON.stringify(cfg)) {
        this.#providers.set(name, old);
        keep.delete(name);
      } else this.#providers.set(name, this.#load(name, cfg));
    }
    for (const gone of keep.values()) {
      gone.retired = true;
      if (gone.timer) clearTimeout(gone.timer);
    }
    this.#rebuild('reload');
    if (!this.#closed) this.start();
  }

  /** Fetches an http rule set now (the Refresh button, `PUT /providers/rules/:name`); reads a file set again. */
  async refresh(name: string): Promise<RuleSetStatus | null> {
    const p = this.#providers.get(name);
    if (!p) return null;
    if (p.config.type === 'file') {
      this.#readFile(p);
      this.#rebuild('rule-set');
    } else await this.#fetch(p);
    return this.#statusOf(p);
  }

  status(): RoutingStatus {
    return {
      mode: this.#mode,
      rules: this.#table.rules.length,
      custom: this.#config.rules !== null,
      errors: [...this.#table.errors, ...this.#missingSets(), ...this.#missingSites()],
      ruleSets: [...this.#providers.values()].map((p) => this.#statusOf(p)),
      geoip:
        this.#geoip || this.#geoipLoading || this.#geoipError
          ? {
              loaded: this.#geoip !== null,
              ranges: this.#geoip?.ranges ?? 0,
              bytes: this.#geoip?.bytes ?? 0,
              error: this.#geoipError,
            }
          : null,
      geosite: this.#geosite?.status() ?? null,
      asn:
        this.#asn || this.#asnLoading || this.#asnError
          ? {
              loaded: this.#asn !== null,
              ranges: this.#asn?.ranges ?? 0,
              bytes: this.#asn?.bytes ?? 0,
              error: this.#asnError,
            }
          : null,
    };
  }

  /**
   * A text by URL the way rule sets are fetched (directly or through the upstream proxy, then
   * through a working tunnel): a Clash config being imported.
   */
  async fetchText(url: string, maxBytes = MAX_CLASH_CONFIG_BYTES): Promise<string> {
    const failures: string[] = [];
    for (const dialer of this.dialers()) {
      if (!dialer) continue;
      try {
        const res = await httpGet(url, { dialer, timeoutMs: FETCH_TIMEOUT_MS, maxBytes });
        if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
        return res.body;
      } catch (err) {
        failures.push(`${dialer.via}: ${(err as Error).message}`);
      }
    }
    throw new GatehopError(
      ErrorCodes.LIST_FETCH_FAILED,
      `${url} could not be fetched (${failures.join('; ') || 'no way to fetch it'})`,
    );
  }

  /** Fetches the GEOSITE data now (when a rule uses it). */
  async refreshGeoSite(): Promise<GeoSiteStatus | null> {
    if (!this.#geosite) return null;
    await this.#geosite.refresh();
    return this.#geosite.status();
  }

  close(): void {
    this.#closed = true;
    for (const p of this.#providers.values()) if (p.timer) clearTimeout(p.timer);
    this.#geosite?.close();
  }

  // ---- internals ----

  #build(): RuleTable {
    const ruleSets = new Map<string, RuleSet>();
    for (const p of this.#providers.values()) if (p.set) ruleSets.set(p.name, p.set);
    return new RuleTable({
      mode: this.#mode,
      rules: this.#config.rules ?? DEFAULT_RULES,
      source: this.#config.rules ? 'config rules' : 'default rules',
      subRules: this.#config.subRules,
      ruleSets,
      geoip: this.#geoip,
      geosite: this.#geosite?.site ?? null,
      asn: this.#asn,
    });
  }

  #rebuild(why: string): void {
    this.#table = this.#build();
    for (const e of this.#table.errors)
      this.#log.warn(
        { event: 'rule-invalid', source: e.source, line: e.line, rule: e.text, err: e.message },
        `${e.source} line ${e.line} (${e.text}) is left out: ${e.message}`,
      );
    this.#log.info(
      { event: 'route-table', why, mode: this.#mode, rules: this.#table.rules.length },
      `routing: mode ${this.#mode}, ${this.#table.rules.length} rules`,
    );
    for (const fn of this.#changeListeners) fn();
    // A fetched set or new rules may ask for countries or domain lists now.
    if (this.#started && why !== 'geoip') this.#maybeLoadGeoIp();
    if (this.#started && why !== 'geosite') this.#maybeStartGeoSite();
    if (this.#started && why !== 'asn') this.#maybeLoadAsn();
  }

  /** RULE-SET rules (in logic rules and sub-rules too) naming a set the config does not have. */
  #missingSets(): RuleError[] {
    return this.#table.conditions
      .filter((r) => r.type === 'RULE-SET' && !this.#providers.has(r.payload))
      .map((r) => ({
        source: 'config rules',
        // 0 when the rule is in a sub-rule list.
        line: (this.#config.rules ?? []).findIndex((l) => l.includes(`RULE-SET,${r.payload}`)) + 1,
        text: `RULE-SET,${r.payload}`,
        message: `no rule set named "${r.payload}" in ruleProviders`,
      }));
  }

  #loadProviders(config: RoutingConfig): void {
    for (const [name, cfg] of Object.entries(config.ruleProviders)) this.#providers.set(name, this.#load(name, cfg));
  }

  /** A provider with what is on disk now (its file, or the last good copy of its URL). */
  #load(name: string, cfg: RuleProviderConfig): Provider {
    const defaultFormat = cfg.format ?? formatOf(cfg.path ?? cfg.url ?? '');
    const where = ruleSetPath(this.#config.dataDir, name, defaultFormat, cfg.path);
    const p: Provider = {
      name,
      config: cfg,
      defaultFormat,
      format: defaultFormat,
      set: null,
      updatedAt: null,
      error: null,
      refreshing: null,
      timer: null,
      nextAt: null,
      retired: false,
      path: 'path' in where ? where.path : null,
    };
    if ('error' in where) {
      p.error = where.error;
      this.#log.warn({ event: 'rule-set-path-refused', name, path: cfg.path }, `rule set ${name}: ${where.error}`);
    }
    this.#readFile(p);
    return p;
  }

  /** Reads the set's file (its own, or the kept copy of its URL); a missing copy of a URL set is not an error yet. */
  #readFile(p: Provider): void {
    const path = p.path;
    if (path === null || (p.config.type === 'http' && !existsSync(path))) return;
    try {
      const size = statSync(path).size;
      if (size > MAX_RULE_SET_BYTES) throw new Error(`larger than ${MAX_RULE_SET_BYTES} bytes`);
      p.set = this.#parse(p, readFileSync(path));
      p.updatedAt = statSync(path).mtimeMs;
      p.error = null;
    } catch (err) {
      p.error = `${path}: ${(err as Error).message}`;
      this.#log.warn(
        { event: 'rule-set-invalid', name: p.name, path, err: (err as Error).message },
        `rule set ${p.name} could not be read from ${path}: ${(err as Error).message}`,
      );
    }
  }

  /** #parse for a running core: a text set a slice at a time (mrs sets are read at once: compact, ~0.4 s for 100,000 names). */
  async #parseAsync(p: Provider, body: Buffer): Promise<RuleSet> {
    if (p.config.format === undefined)
      p.format = isZstd(body) ? 'mrs' : looksLikeYamlPayload(body.toString('utf8')) ? 'yaml' : p.defaultFormat;
    if (p.format === 'mrs') return this.#parse(p, body);
    const { set } = await parseRuleSetAsync(
      body.toString('utf8'),
      p.config.behavior,
      p.format,
      () => this.#table.context,
    );
    this.#warnBadLines(p, set);
    return set;
  }

  /** A set read at once: at start, before the proxy listens (the first flows see every kept set). */
  #parse(p: Provider, body: Buffer): RuleSet {
    // Unset, the format is what the body is: popular sets publish a YAML `payload:` list under .txt,
    // and an mrs set is a zstd stream whatever its name.
    if (p.config.format === undefined)
      p.format = isZstd(body) ? 'mrs' : looksLikeYamlPayload(body.toString('utf8')) ? 'yaml' : p.defaultFormat;
    const context = (): MatchContext => this.#table.context;
    const set =
      p.format === 'mrs'
        ? parseMrsRuleSet(body, p.config.behavior, context)
        : parseRuleSet(body.toString('utf8'), p.config.behavior, p.format, context);
    this.#warnBadLines(p, set);
    return set;
  }

  #warnBadLines(p: Provider, set: RuleSet): void {
    if (set.badLines > 0)
      this.#log.warn(
        { event: 'rule-set-bad-lines', name: p.name, bad: set.badLines, first: set.errors[0] },
        `rule set ${p.name}: ${set.badLines} lines left out (line ${set.errors[0]?.line}: ${set.errors[0]?.message})`,
      );
  }

  /** An http set is fetched when it has no copy or its copy is older than its interval; then every interval. */
  #schedule(p: Provider): void {
    if (this.#closed || p.config.type !== 'http' || p.timer || p.path === null || p.retired) return;
    const intervalMs = p.config.interval * 1000;
    const age = p.updatedAt === null ? Infinity : Date.now() - p.updatedAt;
    const wait = age >= intervalMs ? 0 : intervalMs - age;
    p.nextAt = Date.now() + wait;
    p.timer = setTimeout(() => {
      p.timer = null;
      p.nextAt = null;
      detach(
        this.#log,
        'rule-set-refresh',
        this.#fetch(p).finally(() => this.#schedule(p)),
      );
    }, wait);
    p.timer.unref();
  }

  /** Fetches an http set, directly first and then through the tunnel; the last good copy stays on any failure. */
  #fetch(p: Provider): Promise<void> {
    const path = p.path;
    if (path === null) return Promise.resolve();
    p.refreshing ??= (async () => {
      const url = p.config.url!;
      const failures: string[] = [];
      for (const dialer of this.dialers()) {
        if (!dialer || this.#closed) continue;
        try {
          const res = await httpGet(url, { dialer, timeoutMs: FETCH_TIMEOUT_MS, maxBytes: MAX_RULE_SET_BYTES });
          if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
          // A slice at a time and written off the main loop: a 32 MiB set holds no flow for its
          // parse and fsync (#45).
          const set = await this.#parseAsync(p, res.bytes);
          // A reload replaced this set while it was fetched: the new one owns the kept copy (#45).
          if (p.retired) return;
          await writeFileAtomicAsync(path, res.bytes, { mode: 0o644 });
          if (p.retired) return;
          p.set = set;
          p.updatedAt = Date.now();
          p.error = null;
          this.#log.info(
            { event: 'rule-set-fetched', name: p.name, url, via: dialer.via, entries: set.size },
            `rule set ${p.name}: ${set.size} entries from ${url} (${dialer.via})`,
          );
          this.#rebuild('rule-set');
          return;
        } catch (err) {
          failures.push(`${dialer.via}: ${(err as Error).message}`);
        }
      }
      p.error = failures.join('; ') || 'no way to fetch it';
      this.#log.warn(
        { event: 'rule-set-fetch-failed', name: p.name, url, err: p.error, keeping: p.set?.size ?? 0 },
        `rule set ${p.name} could not be fetched from ${url} (${p.error}); ${p.set ? 'keeping the last good copy' : 'no copy yet'}`,
      );
      if (p.timer === null && !this.#closed && !p.retired) {
        p.nextAt = Date.now() + this.timing.retryMs;
        p.timer = setTimeout(() => {
          p.timer = null;
          p.nextAt = null;
          // Back on its interval once a retry succeeds: without this a set that failed once and
          // then came back was never refreshed again (#45).
          detach(
            this.#log,
            'rule-set-retry',
            this.#fetch(p).finally(() => this.#schedule(p)),
          );
        }, this.timing.retryMs);
        p.timer.unref();
      }
    })().finally(() => {
      p.refreshing = null;
    });
    return p.refreshing;
  }

  /**
   * The GEOSITE data is read (and fetched when missing or stale) only once a rule or a classical
   * set names GEOSITE; a changed URL starts over with the new one.
   */
  #maybeStartGeoSite(): void {
    const wants =
      this.#table.conditions.some((c) => c.type === 'GEOSITE') ||
      [...this.#providers.values()].some((p) => p.set?.namesSites === true);
    if (!wants || this.#closed) return;
    const cfg = this.#config.geosite;
    if (this.#geosite?.url === cfg.url) return this.#geosite.start();
    this.#geosite?.close();
    this.#geosite = new GeoSiteSource({
      url: cfg.url,
      updateIntervalMs: cfg.updateIntervalMs,
      path: join(this.#config.dataDir, 'geosite.dat'),
      dialers: this.dialers,
      log: this.#log,
      onLoaded: () => this.#rebuild('geosite'),
    });
    this.#geosite.start();
  }

  /** GEOSITE rules naming a list the loaded data does not have (nothing while it is not loaded). */
  #missingSites(): RuleError[] {
    const site = this.#geosite?.site;
    if (!site) return [];
    return this.#table.conditions
      .filter((c) => c.type === 'GEOSITE' && !site.has(c.payload.replace(/^!/, '').split('@')[0]!))
      .map((c) => ({
        source: 'config rules',
        line: (this.#config.rules ?? []).findIndex((l) => l.toLowerCase().includes(`geosite,${c.payload}`)) + 1,
        text: `GEOSITE,${c.payload}`,
        message: `geosite.dat has no list named "${c.payload.replace(/^!/, '').split('@')[0]}"`,
      }));
  }

  /** The ASN data is loaded only when a rule names an AS (IP-ASN, SRC-IP-ASN), a slice at a time. */
  #maybeLoadAsn(): void {
    if (this.#asn || this.#asnLoading || this.#closed) return;
    const wants =
      this.#table.conditions.some((c) => c.type === 'IP-ASN' || c.type === 'SRC-IP-ASN') ||
      [...this.#providers.values()].some((p) => p.set?.namesAsns === true);
    if (!wants) return;
    const started = Date.now();
    this.#asnLoading = AsnDb.load()
      .then((db) => {
        this.#asn = db;
        this.#asnError = null;
        this.#log.info(
          { event: 'asn-loaded', ranges: db.ranges, bytes: db.bytes, durationMs: Date.now() - started },
          `ASN data loaded: ${db.ranges} ranges in ${Date.now() - started} ms`,
        );
        this.#rebuild('asn');
      })
      .catch((err: unknown) => {
        this.#asnError = (err as Error).message;
        this.#log.warn({ event: 'asn-failed', err: this.#asnError }, `ASN data could not be loaded: ${this.#asnError}`);
      })
      .finally(() => {
        this.#asnLoading = null;
      });
  }

  /** GeoIP is loaded only when a rule or a classical set asks for a country (not LAN). */
  #maybeLoadGeoIp(): void {
    if (this.#geoip || this.#geoipLoading || !this.#wantsGeoIp()) return;
    const started = Date.now();
    const before = process.memoryUsage().rss;
    this.#geoipLoading = GeoIp.load()
      .then((g) => {
        this.#geoip = g;
        this.#geoipError = null;
        this.#log.info(
          {
            event: 'geoip-loaded',
            ranges: g.ranges,
            bytes: g.bytes,
            durationMs: Date.now() - started,
            rssDeltaBytes: process.memoryUsage().rss - before,
          },
          `GeoIP loaded: ${g.ranges} ranges in ${Date.now() - started} ms`,
        );
        this.#rebuild('geoip');
      })
      .catch((err: unknown) => {
        this.#geoipError = (err as Error).message;
        this.#log.warn(
          { event: 'geoip-failed', err: this.#geoipError },
          `GeoIP could not be loaded: ${this.#geoipError}`,
        );
      })
      .finally(() => {
        this.#geoipLoading = null;
      });
  }

  /** A rule, or a loaded classical set, names a country (not LAN). */
  #wantsGeoIp(): boolean {
    if (this.#table.conditions.some((c) => (c.type === 'GEOIP' || c.type === 'SRC-GEOIP') && c.payload !== 'LAN'))
      return true;
    return [...this.#providers.values()].some((p) => p.set?.namesCountries === true);
  }

  #statusOf(p: Provider): RuleSetStatus {
    return {
      name: p.name,
      type: p.config.type,
      behavior: p.config.behavior,
      format: p.format,
      entries: p.set?.size ?? 0,
      badLines: p.set?.badLines ?? 0,
      updatedAt: p.updatedAt,
      error: p.error,
      refreshing: p.refreshing !== null,
      nextRefreshAt: p.nextAt,
    };
  }
}

/** A YAML rule set: its first line that is not blank or a comment is `payload:`. */
function looksLikeYamlPayload(text: string): boolean {
  for (const m of text.slice(0, 64 * 1024).matchAll(/^[^\n]*$/gm)) {
    const line = m[0].trim();
    if (line === '' || line.startsWith('#')) continue;
    return /^payload\s*:/.test(line);
  }
  return false;
}

/** Without a `payload:` list and a format: `.txt`, `.list` → text; anything else (`.yaml`, `.yml`, none) → yaml. */
/** zstd's frame magic: what every mrs file starts with. */
function isZstd(b: Buffer): boolean {
  return b.length >= 4 && b.readUInt32LE(0) === 0xfd2fb528;
}

function formatOf(where: string): RuleSetFormat {
  const ext = extname(where.split('?')[0] ?? '').toLowerCase();
  return ext === '.txt' || ext === '.list' ? 'text' : ext === '.mrs' ? 'mrs' : 'yaml';
}
