import { join } from 'node:path';
import { ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import {
  AsnDb,
  DEFAULT_RULES,
  GeoIp,
  MAX_CLASH_CONFIG_BYTES,
  RuleTable,
  type RouteMode,
  type RouteTarget,
  type RuleError,
  type RuleSet,
} from '../rules/index.js';
import type { Dialer } from '../reach/index.js';
import { fetchVia } from './fetch-via.js';
import { GeoSiteSource, type GeoSiteStatus } from './geosite-source.js';
import { LazyData, type LazyDataStatus } from './lazy-data.js';
import { RuleProvider, type RuleProviderConfig, type RuleSetStatus } from './rule-provider.js';

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

/** A Clash config being imported is fetched within this long. */
const FETCH_TIMEOUT_MS = 60_000;
/** A failed refresh is tried again after this long (sooner than the interval). */
const RETRY_MS = 10 * 60_000;

/** What a RULE-SET rule whose set is not loaded lets happen, by its target. */
const MEANWHILE: Readonly<Record<RouteTarget, string>> = {
  REJECT: 'what it would block is not blocked, and goes where the rules after it say',
  DIRECT: 'what it would send direct goes where the rules after it say (through a node, perhaps)',
  TUNNEL: 'what it would send through a node goes where the rules after it say (direct, perhaps)',
};

export interface RoutingStatus {
  mode: RouteMode;
  /** Rules in the table in use (the default table's when the config has none). */
  rules: number;
  custom: boolean;
  errors: RuleError[];
  ruleSets: RuleSetStatus[];
  geoip: LazyDataStatus | null;
  /** v2fly's domain lists for GEOSITE rules; null while no rule names one. */
  geosite: GeoSiteStatus | null;
  /** AS numbers for IP-ASN rules; null while no rule names one. */
  asn: LazyDataStatus | null;
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
  readonly #providers = new Map<string, RuleProvider>();
  readonly #geoip: LazyData<GeoIp>;
  #geosite: GeoSiteSource | null = null;
  readonly #asn: LazyData<AsnDb>;
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
    // Loaded only when a rule names a country or an AS; the table is built again once it is.
    const lazy = <T extends { readonly ranges: number; readonly bytes: number }>(
      what: string,
      key: 'geoip' | 'asn',
      load: () => Promise<T>,
    ): LazyData<T> => new LazyData(what, key, load, this.#log, () => this.#rebuild(key));
    this.#geoip = lazy('GeoIP', 'geoip', () => GeoIp.load());
    this.#asn = lazy('ASN data', 'asn', () => AsnDb.load());
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
    for (const p of this.#providers.values()) p.schedule();
    this.#maybeLoadData();
    this.#maybeStartGeoSite();
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
    for (const gone of keep.values()) gone.retire();
    this.#rebuild('reload');
    if (!this.#closed) this.start();
  }

  /** Fetches an http rule set now (the Refresh button, `PUT /providers/rules/:name`); reads a file set again. */
  async refresh(name: string): Promise<RuleSetStatus | null> {
    const p = this.#providers.get(name);
    if (!p) return null;
    if (p.config.type === 'file') {
      p.readFile();
      this.#rebuild('rule-set');
    } else await p.fetch();
    return p.status();
  }

  status(): RoutingStatus {
    return {
      mode: this.#mode,
      rules: this.#table.rules.length,
      custom: this.#config.rules !== null,
      errors: [...this.#table.errors, ...this.#missingSets(), ...this.#unloadedSets(), ...this.#missingSites()],
      ruleSets: [...this.#providers.values()].map((p) => p.status()),
      geoip: this.#geoip.status(),
      geosite: this.#geosite?.status() ?? null,
      asn: this.#asn.status(),
    };
  }

  /**
   * A text by URL the way rule sets are fetched (directly or through the upstream proxy, then
   * through a working tunnel): a Clash config being imported.
   */
  async fetchText(url: string, maxBytes = MAX_CLASH_CONFIG_BYTES): Promise<string> {
    const got = await fetchVia(this.dialers(), url, { timeoutMs: FETCH_TIMEOUT_MS, maxBytes }, (res) => res.body);
    if (got.ok) return got.value;
    throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `${url} could not be fetched (${got.error})`);
  }

  /** Fetches the GEOSITE data now (when a rule uses it). */
  async refreshGeoSite(): Promise<GeoSiteStatus | null> {
    if (!this.#geosite) return null;
    await this.#geosite.refresh();
    return this.#geosite.status();
  }

  close(): void {
    this.#closed = true;
    for (const p of this.#providers.values()) p.close();
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
      geoip: this.#geoip.value,
      geosite: this.#geosite?.site ?? null,
      asn: this.#asn.value,
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
    if (this.#started && why !== 'geoip' && why !== 'asn') this.#maybeLoadData();
    if (this.#started && why !== 'geosite') this.#maybeStartGeoSite();
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

  /**
   * RULE-SET rules whose set could not be loaded at all (no good copy: a refused path, a file that
   * is not there, a fetch that failed): until it loads, the rule matches nothing, and what it would
   * have caught goes on to the rules after it (#59). That is an error the window, /routing, /status
   * and the tray show, with what the table does meanwhile, not a warning in the log alone: a
   * pasted `RULE-SET,ads,REJECT` whose set never loaded blocked nothing, silently.
   */
  #unloadedSets(): RuleError[] {
    const lines = this.#config.rules ?? [];
    return this.#table.rules.flatMap((r) => {
      const p = r.type === 'RULE-SET' ? this.#providers.get(r.payload) : undefined;
      if (!p || p.set || !p.error) return [];
      return [
        {
          source: `rule set ${r.payload}`,
          line: lines.findIndex((l) => l.trim() === r.text) + 1,
          text: r.text,
          message: `could not be loaded (${p.error}); until it is, this rule matches nothing: ${MEANWHILE[r.target]}`,
        },
      ];
    });
  }

  /** A provider with what is on disk now (its file, or the last good copy of its URL). */
  #load(name: string, cfg: RuleProviderConfig): RuleProvider {
    return new RuleProvider(name, cfg, {
      dataDir: this.#config.dataDir,
      dialers: this.dialers,
      log: this.#log,
      context: () => this.#table.context,
      onLoaded: () => this.#rebuild('rule-set'),
      closed: () => this.#closed,
      retryMs: this.timing.retryMs,
    });
  }

  #loadProviders(config: RoutingConfig): void {
    for (const [name, cfg] of Object.entries(config.ruleProviders)) this.#providers.set(name, this.#load(name, cfg));
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

  /** GeoIP and the ASN data, each loaded when a rule (or a classical set) first names a country or an AS. */
  #maybeLoadData(): void {
    if (this.#closed) return;
    if (this.#wantsGeoIp()) this.#geoip.ensure();
    const asns =
      this.#table.conditions.some((c) => c.type === 'IP-ASN' || c.type === 'SRC-IP-ASN') ||
      [...this.#providers.values()].some((p) => p.set?.namesAsns === true);
    if (asns) this.#asn.ensure();
  }

  /** A rule, or a loaded classical set, names a country (not LAN). */
  #wantsGeoIp(): boolean {
    if (this.#table.conditions.some((c) => (c.type === 'GEOIP' || c.type === 'SRC-GEOIP') && c.payload !== 'LAN'))
      return true;
    return [...this.#providers.values()].some((p) => p.set?.namesCountries === true);
  }
}
