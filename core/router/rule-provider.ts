import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { type Logger } from '../common/index.js';
import {
  parseMrsRuleSet,
  parseRuleSet,
  parseRuleSetAsync,
  type MatchContext,
  type RuleSet,
  type RuleSetFormat,
} from '../rules/index.js';
import type { DialVia, Dialer } from '../reach/index.js';
import { RemoteFile } from './remote-file.js';
import { ruleSetPath } from './rule-set-path.js';

/** A rule set's body may be this large (a 120,000-line domestic list is ~3 MiB). */
export const MAX_RULE_SET_BYTES = 32 * 1024 * 1024;
/** An http rule set's fetch, body included. */
const FETCH_TIMEOUT_MS = 60_000;

/** A rule provider as the config gives it (mihomo's rule-providers). */
export interface RuleProviderConfig {
  readonly type: 'http' | 'file';
  readonly behavior: 'domain' | 'ipcidr' | 'classical';
  readonly url?: string | undefined;
  readonly path?: string | undefined;
  readonly interval: number;
  readonly format?: RuleSetFormat | undefined;
}

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

export interface RuleProviderDeps {
  readonly dataDir: string;
  /** How it is fetched, in order: straight (or through the upstream proxy), then a working tunnel. */
  readonly dialers: () => ReadonlyArray<Dialer | null>;
  readonly log: Logger;
  /** The table's context: a classical set's GEOIP and RULE-SET lines read it. */
  readonly context: () => MatchContext;
  /** A new copy is in use: the table should be built again. */
  readonly onLoaded: () => void;
  readonly closed: () => boolean;
  /** A failed refresh is tried again after this long. */
  readonly retryMs: number;
}

/**
 * One rule set (a mihomo rule-provider) and its lifecycle: read at once from its file or the kept
 * copy of its URL (a restart needs no network); an http set fetched when it has no copy or its copy
 * is older than its interval, then every interval, directly and else through the tunnel, a failure
 * retried sooner; the last good copy stays in use on any failure; a set replaced by a reload
 * (`retire`) never writes the kept copy nor reports a load.
 */
export class RuleProvider {
  /** The format the config or the name says: it also names the kept copy's file. */
  readonly defaultFormat: RuleSetFormat;
  /** The format the copy in use was read as. */
  format: RuleSetFormat;
  set: RuleSet | null = null;
  updatedAt: number | null = null;
  error: string | null = null;
  retired = false;
  /** An http set's fetches (remote-file.ts); null for a file set or a refused path. */
  readonly #remote: RemoteFile<RuleSet> | null;
  /** Where its file or kept copy is; null when its configured path was refused (then it never loads). */
  readonly path: string | null;

  constructor(
    readonly name: string,
    readonly config: RuleProviderConfig,
    private readonly deps: RuleProviderDeps,
  ) {
    this.defaultFormat = config.format ?? formatOf(config.path ?? config.url ?? '');
    this.format = this.defaultFormat;
    const where = ruleSetPath(deps.dataDir, name, this.defaultFormat, config.path);
    this.path = 'path' in where ? where.path : null;
    if ('error' in where) {
      this.error = where.error;
      deps.log.warn({ event: 'rule-set-path-refused', name, path: config.path }, `rule set ${name}: ${where.error}`);
    }
    this.#remote =
      config.type === 'http' && this.path !== null
        ? new RemoteFile<RuleSet>({
            kind: 'rule-set',
            url: config.url!,
            path: this.path,
            limits: { timeoutMs: FETCH_TIMEOUT_MS, maxBytes: MAX_RULE_SET_BYTES },
            dialers: deps.dialers,
            log: deps.log,
            intervalMs: () => config.interval * 1000,
            retryMs: deps.retryMs,
            updatedAt: () => this.updatedAt,
            // A slice at a time: a 32 MiB set holds no flow for its parse (#45).
            parse: (bytes) => this.#parseAsync(bytes),
            fetched: (set, via) => this.#fetched(set, via),
            failed: (error) => this.#failed(error),
            // A reload replaced this set while it was fetched: the new one owns the kept copy (#45).
            stopped: () => this.retired || deps.closed(),
          })
        : null;
    this.readFile();
  }

  /** Replaced by a reload: a fetch still in flight is dropped, no refresh is planned. */
  retire(): void {
    this.retired = true;
    this.close();
  }

  close(): void {
    this.#remote?.close();
  }

  /** Reads the set's file (its own, or the kept copy of its URL); a missing copy of a URL set is not an error yet. */
  readFile(): void {
    const path = this.path;
    if (path === null || (this.config.type === 'http' && !existsSync(path))) return;
    try {
      const size = statSync(path).size;
      if (size > MAX_RULE_SET_BYTES) throw new Error(`larger than ${MAX_RULE_SET_BYTES} bytes`);
      this.set = this.#parse(readFileSync(path));
      this.updatedAt = statSync(path).mtimeMs;
      this.error = null;
    } catch (err) {
      this.error = `${path}: ${(err as Error).message}`;
      this.deps.log.warn(
        { event: 'rule-set-invalid', name: this.name, path, err: (err as Error).message },
        `rule set ${this.name} could not be read from ${path}: ${(err as Error).message}`,
      );
    }
  }

  /** #parse for a running core: a text set a slice at a time (mrs sets are read at once: compact, ~0.4 s for 100,000 names). */
  async #parseAsync(body: Buffer): Promise<RuleSet> {
    if (this.config.format === undefined)
      this.format = isZstd(body) ? 'mrs' : looksLikeYamlPayload(body.toString('utf8')) ? 'yaml' : this.defaultFormat;
    if (this.format === 'mrs') return this.#parse(body);
    const { set } = await parseRuleSetAsync(body.toString('utf8'), this.config.behavior, this.format, () =>
      this.deps.context(),
    );
    this.#warnBadLines(set);
    return set;
  }

  /** A set read at once: at start, before the proxy listens (the first flows see every kept set). */
  #parse(body: Buffer): RuleSet {
    // Unset, the format is what the body is: popular sets publish a YAML `payload:` list under .txt,
    // and an mrs set is a zstd stream whatever its name.
    if (this.config.format === undefined)
      this.format = isZstd(body) ? 'mrs' : looksLikeYamlPayload(body.toString('utf8')) ? 'yaml' : this.defaultFormat;
    const context = (): MatchContext => this.deps.context();
    const set =
      this.format === 'mrs'
        ? parseMrsRuleSet(body, this.config.behavior, context)
        : parseRuleSet(body.toString('utf8'), this.config.behavior, this.format, context);
    this.#warnBadLines(set);
    return set;
  }

  #warnBadLines(set: RuleSet): void {
    if (set.badLines > 0)
      this.deps.log.warn(
        { event: 'rule-set-bad-lines', name: this.name, bad: set.badLines, first: set.errors[0] },
        `rule set ${this.name}: ${set.badLines} lines left out (line ${set.errors[0]?.line}: ${set.errors[0]?.message})`,
      );
  }

  /** An http set is fetched when it has no copy or its copy is older than its interval; then every interval. */
  schedule(): void {
    if (!this.deps.closed() && !this.retired) this.#remote?.schedule();
  }

  /** Fetches an http set, directly first and then through the tunnel; the last good copy stays on any failure. */
  fetch(): Promise<void> {
    return this.#remote?.fetch() ?? Promise.resolve();
  }

  #fetched(set: RuleSet, via: DialVia): void {
    this.set = set;
    this.updatedAt = Date.now();
    this.error = null;
    this.deps.log.info(
      { event: 'rule-set-fetched', name: this.name, url: this.config.url, via, entries: set.size },
      `rule set ${this.name}: ${set.size} entries from ${this.config.url} (${via})`,
    );
    this.deps.onLoaded();
  }

  #failed(error: string): void {
    this.error = error;
    this.deps.log.warn(
      {
        event: 'rule-set-fetch-failed',
        name: this.name,
        url: this.config.url,
        err: error,
        keeping: this.set?.size ?? 0,
      },
      `rule set ${this.name} could not be fetched from ${this.config.url} (${error}); ${this.set ? 'keeping the last good copy' : 'no copy yet'}`,
    );
  }

  status(): RuleSetStatus {
    return {
      name: this.name,
      type: this.config.type,
      behavior: this.config.behavior,
      format: this.format,
      entries: this.set?.size ?? 0,
      badLines: this.set?.badLines ?? 0,
      updatedAt: this.updatedAt,
      error: this.error,
      refreshing: this.#remote?.fetching ?? false,
      nextRefreshAt: this.#remote?.nextAt ?? null,
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

/** zstd's frame magic: what every mrs file starts with. */
function isZstd(b: Buffer): boolean {
  return b.length >= 4 && b.readUInt32LE(0) === 0xfd2fb528;
}

/** Without a `payload:` list and a format: `.txt`, `.list` → text; `.mrs` → mrs; anything else (`.yaml`, `.yml`, none) → yaml. */
function formatOf(where: string): RuleSetFormat {
  const ext = extname(where.split('?')[0] ?? '').toLowerCase();
  return ext === '.txt' || ext === '.list' ? 'text' : ext === '.mrs' ? 'mrs' : 'yaml';
}
