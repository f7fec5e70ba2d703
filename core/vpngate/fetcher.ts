import { abortReason, ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import { parseVpnGateCsv, type ParsedList } from './csv.js';

export const OFFICIAL_ENDPOINTS = ['https://www.vpngate.net/api/iphone/', 'http://www.vpngate.net/api/iphone/'];

export interface FetchOptions {
  endpoints: readonly string[];
  timeoutMs?: number;
  maxBytes?: number;
  /** Passes over the whole endpoint list. */
  attempts?: number;
  backoffMs?: number;
  signal?: AbortSignal;
  logger: Logger;
}

export interface FetchedList extends ParsedList {
  source: string;
  fetchedAt: number;
}

async function readCapped(res: Response, maxBytes: number, url: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `${url}: body of ${declared} bytes exceeds ${maxBytes}`);
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `${url}: body exceeds ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Fetches and parses the list from the first endpoint that answers with a valid one, in order,
 * each with a timeout and a size cap; passes over the list again with backoff. One log line per
 * endpoint tried.
 */
export async function fetchNodeList(opts: FetchOptions): Promise<FetchedList> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const maxBytes = opts.maxBytes ?? 8 * 1024 * 1024;
  const attempts = opts.attempts ?? 2;
  const log = opts.logger.child({ component: 'vpngate' });
  const errors: string[] = [];
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep((opts.backoffMs ?? 2_000) * 2 ** (attempt - 1), opts.signal);
    for (const url of opts.endpoints) {
      opts.signal?.throwIfAborted();
      const started = Date.now();
      try {
        const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
        const res = await fetch(url, { signal, redirect: 'follow', headers: { 'User-Agent': 'gatehop' } }).catch((err: unknown) => {
          if (signal.aborted) throw abortReason(signal, `fetch ${url}`);
          throw err;
        });
        if (!res.ok) throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `HTTP ${res.status}`);
        const text = await readCapped(res, maxBytes, url);
        const parsed = parseVpnGateCsv(text);
        if (parsed.nodes.length === 0) throw new GatehopError(ErrorCodes.LIST_INVALID, 'no usable node in the list');
        log.info({ event: 'list-fetched', url, nodes: parsed.nodes.length, skipped: parsed.skipped, durationMs: Date.now() - started }, 'node list fetched');
        return { ...parsed, source: url, fetchedAt: Date.now() };
      } catch (err) {
        if (opts.signal?.aborted) throw abortReason(opts.signal, 'fetch node list');
        const message = (err as Error).message;
        errors.push(`${url}: ${message}`);
        log.info({ event: 'list-endpoint-failed', url, attempt: attempt + 1, err: message, durationMs: Date.now() - started }, 'node list endpoint failed');
      }
    }
  }
  throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `every list endpoint failed: ${errors.slice(-opts.endpoints.length).join('; ')}`);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(abortReason(signal, 'fetch node list'));
    }, { once: true });
  });
}
