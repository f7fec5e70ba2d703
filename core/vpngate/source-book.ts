import { ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import type { AddressPolicy } from '../reach/index.js';
import { httpGet, type Dialer } from '../reach/index.js';
import type { SourceAttempt } from './list-race.js';
import { directoryUrlOf, parseMirrorDirectory } from './mirror-directory.js';
import { FORGET_MIRROR_MS, type ListSource, type SourceRecord } from './sources.js';

/** A directory page is read at most this often per site and path (it changes slowly). */
const DIRECTORY_EVERY_MS = 60 * 60_000;

/** Where the list's sources are kept (the node list's store). */
export interface SourceStore {
  loadSources(): SourceRecord[];
  saveSource(r: SourceRecord): void;
  forgetSource(url: string): void;
}

export interface SourceBookDeps {
  store: SourceStore;
  now: () => number;
  log: Logger;
  policy: AddressPolicy;
  /** Read at each use: mirrors on or off, and how long a directory page may take. */
  options: () => { mirrors: boolean; timeoutMs: number };
  /** The list's own signal: a directory read may outlive the race that asked for it. */
  signal: AbortSignal;
  /** The list keeps each directory read until it ends (its close waits for them). */
  track: (p: Promise<unknown>) => void;
}

/**
 * The list's sources as remembered in the store: each attempt recorded (when a source last
 * answered or failed, how, with how many nodes), mirrors not heard from in FORGET_MIRROR_MS
 * forgotten, and the mirror directory of a site that answered read for more mirrors.
 */
export class SourceBook {
  readonly #directoryTried = new Map<string, number>();

  constructor(private readonly deps: SourceBookDeps) {}

  record(attempts: readonly SourceAttempt[], records: Map<string, SourceRecord>): void {
    for (const a of attempts) {
      const had = records.get(a.url);
      const rec: SourceRecord = {
        url: a.url,
        kind: a.kind,
        foundAt: had?.foundAt ?? a.at,
        foundFrom: had?.foundFrom ?? null,
        lastOkAt: a.ok ? a.at : (had?.lastOkAt ?? null),
        lastFailAt: a.ok ? (had?.lastFailAt ?? null) : a.at,
        lastError: a.ok ? null : a.error,
        lastVia: a.via,
        lastNodes: a.ok ? a.nodes : (had?.lastNodes ?? null),
      };
      records.set(a.url, rec);
      try {
        this.deps.store.saveSource(rec);
      } catch (err) {
        this.deps.log.warn(
          { event: 'list-source-save-failed', err: (err as Error).message },
          'could not save a list source',
        );
      }
    }
  }

  forgetOldMirrors(records: Map<string, SourceRecord>): void {
    const now = this.deps.now();
    for (const r of [...records.values()]) {
      if (r.kind === 'mirror' && now - (r.lastOkAt ?? r.foundAt) >= FORGET_MIRROR_MS) {
        records.delete(r.url);
        this.deps.store.forgetSource(r.url);
      }
    }
  }

  /**
   * Reads the mirror directory at the origin of a source that answered (through the same dialer),
   * remembers the mirrors it names and returns them. At most once an hour per page and dialer. Runs
   * on the list's own signal: it may finish after the race that asked for it.
   */
  discover(s: ListSource, dialer: Dialer): Promise<ListSource[]> | null {
    if (!this.deps.options().mirrors) return null;
    const page = directoryUrlOf(s.url);
    if (!page) return null;
    const key = `${dialer.via} ${page}`;
    const now = this.deps.now();
    if (now - (this.#directoryTried.get(key) ?? -Infinity) < DIRECTORY_EVERY_MS) return null;
    this.#directoryTried.set(key, now);
    const p = (async () => {
      const res = await httpGet(page, {
        dialer,
        signal: this.deps.signal,
        timeoutMs: this.deps.options().timeoutMs,
        maxBytes: 2 * 1024 * 1024,
      });
      if (res.status !== 200) throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `HTTP ${res.status}`);
      const found = parseMirrorDirectory(res.body, res.url, this.deps.policy);
      const records = new Map(this.deps.store.loadSources().map((r) => [r.url, r]));
      let added = 0;
      for (const url of found) {
        if (records.has(url)) continue;
        added++;
        this.deps.store.saveSource({
          url,
          kind: 'mirror',
          foundAt: this.deps.now(),
          foundFrom: page,
          lastOkAt: null,
          lastFailAt: null,
          lastError: null,
          lastVia: null,
          lastNodes: null,
        });
      }
      this.deps.log.info(
        { event: 'mirrors-found', page, via: dialer.via, mirrors: found.length, added },
        `mirror directory ${page} lists ${found.length} mirrors (${added} new)`,
      );
      return found.map((url) => ({ url, kind: 'mirror' as const }));
    })().catch((err: unknown) => {
      if (!this.deps.signal.aborted)
        this.deps.log.info(
          { event: 'mirror-directory-failed', page, via: dialer.via, err: (err as Error).message },
          `mirror directory ${page} could not be read: ${(err as Error).message}`,
        );
      return [] as ListSource[];
    });
    // p cannot reject (its catch above answers []).
    this.deps.track(p);
    return p;
  }
}
