import { abortReason, ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import { describeSkipped, parseVpnGateCsv, type ParsedList } from './csv.js';
import { type AddressPolicy } from '../reach/index.js';
import { guardedDialer } from '../reach/index.js';
import { httpGet, type DialVia, type Dialer } from '../reach/index.js';
import type { ListSource } from './sources.js';

export interface SourceAttempt {
  url: string;
  kind: ListSource['kind'];
  via: DialVia;
  ok: boolean;
  /** Why it failed (null when it worked). */
  error: string | null;
  /** The source answered, but not with a list (an HTML page, a truncated CSV, an error status). */
  junk: boolean;
  nodes: number | null;
  at: number;
  durationMs: number;
}

export interface RaceOptions {
  /** In the order to try them. */
  sources: readonly ListSource[];
  dialer: Dialer;
  /** Per source: the whole request, body included. */
  timeoutMs: number;
  maxBytes: number;
  /** Each source's head start before the next one is started too (sooner when it fails). */
  staggerMs: number;
  /** Sources in flight at once. */
  concurrency: number;
  signal: AbortSignal;
  logger: Logger;
  /**
   * A source's site answered (any status): its directory may name more mirrors. What the returned
   * promise yields joins this race (when no source has won yet). Not for user sources.
   */
  onReached?: (source: ListSource) => Promise<ListSource[]> | null;
  /** Which node addresses a list may name; also where a mirror (someone else's URL) may be dialled. */
  addressPolicy?: AddressPolicy;
}

/** A list as fetched: its rows, and whether it came over https all the way (HttpGetResult.secure). */
export type FetchedList = ParsedList & { secure: boolean };

export interface RaceResult {
  winner: (FetchedList & { source: ListSource; fetchedAt: number }) | null;
  attempts: SourceAttempt[];
}

/** GETs one source and parses it as a VPN Gate list; the error says what the source answered. */
export async function fetchListFrom(
  url: string,
  o: {
    dialer: Dialer;
    timeoutMs: number;
    maxBytes: number;
    signal: AbortSignal;
    onResponse?: () => void;
    addressPolicy?: AddressPolicy;
  },
): Promise<FetchedList> {
  const res = await httpGet(url, { dialer: o.dialer, timeoutMs: o.timeoutMs, maxBytes: o.maxBytes, signal: o.signal });
  o.onResponse?.();
  if (res.status !== 200) throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `HTTP ${res.status}`);
  const parsed = parseVpnGateCsv(res.body, o.addressPolicy ? { addressPolicy: o.addressPolicy } : {});
  if (parsed.nodes.length === 0)
    throw new GatehopError(
      ErrorCodes.LIST_INVALID,
      `no usable node in the list${Object.keys(parsed.skipped).length ? ` (skipped: ${describeSkipped(parsed.skipped)})` : ''}`,
    );
  return { ...parsed, secure: res.secure };
}

/**
 * Gets a list from the first source that delivers one, fastest first: sources start one after
 * another, each `staggerMs` after the last (at once when every running one has failed), at most
 * `concurrency` at a time, each with its own deadline. GET is safe to race; the first valid list
 * wins and the rest are cancelled. Mirrors that directories name on the way join the race.
 */
export async function raceSources(o: RaceOptions): Promise<RaceResult> {
  const attempts: SourceAttempt[] = [];
  const queue = [...o.sources];
  const known = new Set(queue.map((s) => s.url));
  const running = new Set<Promise<void>>();
  const discovering = new Set<Promise<void>>();
  const cancel = new AbortController();
  const signal = AbortSignal.any([o.signal, cancel.signal]);
  let winner: RaceResult['winner'] = null;
  let changed = false;
  let wake: (() => void) | null = null;
  const kick = (): void => {
    changed = true;
    wake?.();
  };
  const log = o.logger.child({ component: 'vpngate' });

  const discover = (s: ListSource): void => {
    if (s.kind === 'user' || !o.onReached) return;
    const found = o.onReached(s);
    if (!found) return;
    const p: Promise<void> = found
      .then((more) => {
        for (const m of more) {
          if (known.has(m.url)) continue;
          known.add(m.url);
          queue.push(m);
        }
      })
      .catch(() => undefined)
      .finally(() => {
        discovering.delete(p);
        kick();
      });
    discovering.add(p);
  };

  // The latest source's head start ends early when it fails: the next one starts at once.
  let latest: Promise<void> | null = null;
  let latestDone = false;
  const start = (s: ListSource): void => {
    const started = Date.now();
    const p: Promise<void> = fetchListFrom(s.url, {
      // A mirror's URL is someone else's data (a directory page): it may not aim at this machine or its LAN.
      dialer: s.kind === 'mirror' ? guardedDialer(o.dialer, o.addressPolicy) : o.dialer,
      ...(o.addressPolicy ? { addressPolicy: o.addressPolicy } : {}),
      timeoutMs: o.timeoutMs,
      maxBytes: o.maxBytes,
      signal,
      onResponse: () => discover(s),
    })
      .then(
        (parsed) => {
          const durationMs = Date.now() - started;
          attempts.push({
            url: s.url,
            kind: s.kind,
            via: o.dialer.via,
            ok: true,
            error: null,
            junk: false,
            nodes: parsed.nodes.length,
            at: Date.now(),
            durationMs,
          });
          log.info(
            {
              event: 'list-fetched',
              url: s.url,
              kind: s.kind,
              via: o.dialer.via,
              nodes: parsed.nodes.length,
              skipped: parsed.skipped,
              secure: parsed.secure,
              durationMs,
            },
            `node list fetched from ${s.url} (${o.dialer.via}${parsed.secure ? '' : ', without HTTPS'})`,
          );
          if (!winner) {
            winner = { ...parsed, source: s, fetchedAt: Date.now() };
            cancel.abort(new GatehopError(ErrorCodes.ABORTED, 'another source answered first'));
          }
        },
        (err: unknown) => {
          // Cancelled because another source won: not this source's failure.
          if (winner || o.signal.aborted) return;
          const e = err as GatehopError;
          const junk =
            e.code === ErrorCodes.LIST_INVALID ||
            /^HTTP \d+/.test(e.message ?? '') ||
            /exceeds|encoded body|redirects/.test(e.message ?? '');
          const error = e.message ?? String(err);
          attempts.push({
            url: s.url,
            kind: s.kind,
            via: o.dialer.via,
            ok: false,
            error,
            junk,
            nodes: null,
            at: Date.now(),
            durationMs: Date.now() - started,
          });
          log.info(
            {
              event: 'list-source-failed',
              url: s.url,
              kind: s.kind,
              via: o.dialer.via,
              junk,
              err: error,
              durationMs: Date.now() - started,
            },
            `node list source ${s.url} failed (${o.dialer.via}): ${error}`,
          );
        },
      )
      .finally(() => {
        running.delete(p);
        if (latest === p) latestDone = true;
        kick();
      });
    running.add(p);
    latest = p;
    latestDone = false;
  };

  let lastStart = 0;
  while (!winner) {
    if (o.signal.aborted) {
      cancel.abort();
      throw abortReason(o.signal, 'fetch the node list');
    }
    const headStartOver = Date.now() - lastStart >= o.staggerMs || running.size === 0 || latestDone;
    if (queue.length > 0 && running.size < o.concurrency && headStartOver) {
      start(queue.shift()!);
      lastStart = Date.now();
      continue;
    }
    if (queue.length === 0 && running.size === 0 && discovering.size === 0) break;
    if (changed) {
      changed = false;
      continue;
    }
    const waitMs =
      queue.length > 0 && running.size < o.concurrency ? Math.max(0, o.staggerMs - (Date.now() - lastStart)) : null;
    await new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      const finish = (): void => {
        if (timer) clearTimeout(timer);
        o.signal.removeEventListener('abort', finish);
        wake = null;
        resolve();
      };
      timer = waitMs === null ? null : setTimeout(finish, waitMs);
      o.signal.addEventListener('abort', finish, { once: true });
      wake = finish;
    });
    changed = false;
  }
  cancel.abort(new GatehopError(ErrorCodes.ABORTED, 'another source answered first'));
  await Promise.allSettled([...running]);
  return { winner, attempts };
}
