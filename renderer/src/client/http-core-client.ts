import { events, operations, routeFor, type EventKey } from '../../../core/api/contract.js';
import {
  Fanout,
  type Connection,
  type CoreClient,
  type CoreEvent,
  type OpInput,
  type OpName,
  type OpOutput,
  type Result,
} from './core-client.js';

export interface HttpCoreClientOptions {
  /** The admin API's origin; '' = the page's own (the /ui dashboard). */
  baseUrl: string;
  token: string;
  /** Injectable for tests. */
  fetch?: typeof fetch;
  EventSource?: typeof EventSource;
  /** Reconnect back-off: first wait and cap. */
  backoff?: { initialMs: number; maxMs: number };
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (t: unknown) => void;
}

/**
 * CoreClient over the admin API: calls are fetches validated against the contract's output
 * schemas, events come from /events (Server-Sent Events). A lost stream is reopened with back-off
 * (1 s doubling to 30 s); after every reconnect `resync` fires so the app re-reads its state.
 */
export class HttpCoreClient implements CoreClient {
  readonly #events = new Fanout<CoreEvent>();
  readonly #conn = new Fanout<Connection>();
  readonly #resync = new Fanout<void>();
  #source: EventSource | null = null;
  #timer: unknown = null;
  #delayMs: number;
  #everOpened = false;
  #closed = false;
  #downSince = 0;
  readonly #fetch: typeof fetch;
  readonly #ES: typeof EventSource;
  readonly #setTimeout: (fn: () => void, ms: number) => unknown;
  readonly #clearTimeout: (t: unknown) => void;

  constructor(private readonly opts: HttpCoreClientOptions) {
    this.#fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.#ES = opts.EventSource ?? globalThis.EventSource;
    this.#setTimeout = opts.setTimeout ?? ((fn, ms) => globalThis.setTimeout(fn, ms));
    this.#clearTimeout = opts.clearTimeout ?? ((t) => globalThis.clearTimeout(t as number));
    this.#delayMs = opts.backoff?.initialMs ?? 1000;
    this.#open();
  }

  async call<K extends OpName>(name: K, input: OpInput<K>): Promise<Result<OpOutput<K>>> {
    const op = operations[name];
    const checked = op.input.safeParse(input);
    if (!checked.success)
      return {
        ok: false,
        error: { code: 'GH_ERR_UI_INVALID_INPUT', message: checked.error.issues[0]?.message ?? 'invalid input' },
      };
    const { method, path, rest } = routeFor(name, checked.data);
    let url = `${this.opts.baseUrl}${path}`;
    const init: RequestInit = { method, headers: { authorization: `Bearer ${this.opts.token}` } };
    if (method === 'GET') {
      const q = new URLSearchParams(
        Object.entries(rest)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => [k, String(v)]),
      );
      if ([...q].length) url += `?${q}`;
    } else if (Object.keys(rest).length > 0 || method === 'POST' || method === 'PUT') {
      init.body = JSON.stringify(rest);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await this.#fetch(url, init);
    } catch (err) {
      return {
        ok: false,
        error: { code: 'GH_ERR_UI_UNREACHABLE', message: `the core does not answer (${(err as Error).message})` },
      };
    }
    const text = await res.text().catch(() => '');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      return {
        ok: false,
        error: {
          code: 'GH_ERR_UI_BAD_RESPONSE',
          message: `${path} answered ${res.status} with a body that is not JSON`,
        },
      };
    }
    if (!res.ok) {
      const e = body as { error?: string; message?: string } | null;
      if (res.status === 401) this.#conn.emit({ state: 'unauthorized' });
      return {
        ok: false,
        error: {
          code: e?.error ?? `GH_ERR_HTTP_${res.status}`,
          message: e?.message ?? `${path} answered ${res.status}`,
        },
      };
    }
    const out = op.output.safeParse(body);
    if (!out.success)
      return {
        ok: false,
        error: {
          code: 'GH_ERR_UI_BAD_RESPONSE',
          message: `${path}: ${out.error.issues[0]?.path.join('.')}: ${out.error.issues[0]?.message}`,
        },
      };
    return { ok: true, value: out.data as OpOutput<K> };
  }

  subscribe(fn: (ev: CoreEvent) => void): () => void {
    return this.#events.add(fn);
  }

  onConnection(fn: (c: Connection) => void): () => void {
    return this.#conn.add(fn);
  }

  onResync(fn: () => void): () => void {
    return this.#resync.add(fn);
  }

  close(): void {
    this.#closed = true;
    this.#source?.close();
    this.#source = null;
    if (this.#timer !== null) this.#clearTimeout(this.#timer);
    this.#timer = null;
    this.#events.clear();
    this.#conn.clear();
    this.#resync.clear();
  }

  #open(): void {
    if (this.#closed) return;
    // While down, keep saying so (with the countdown) until a retry opens the stream.
    if (!this.#downSince) this.#conn.emit({ state: 'connecting' });
    // EventSource cannot send headers: the token goes in the query, as the API allows for streams.
    const es = new this.#ES(`${this.opts.baseUrl}/events?token=${encodeURIComponent(this.opts.token)}`);
    this.#source = es;
    es.onopen = () => {
      this.#delayMs = this.opts.backoff?.initialMs ?? 1000;
      this.#conn.emit({ state: 'open' });
      if (this.#everOpened) this.#resync.emit();
      this.#everOpened = true;
    };
    es.onerror = () => {
      // We own reconnection (with back-off and a resync), not the browser's fixed retry.
      es.close();
      if (this.#source !== es || this.#closed) return;
      this.#source = null;
      this.#downSince ||= Date.now();
      const wait = this.#delayMs;
      this.#delayMs = Math.min(this.#delayMs * 2, this.opts.backoff?.maxMs ?? 30_000);
      this.#conn.emit({
        state: 'down',
        since: this.#downSince,
        retryAt: Date.now() + wait,
        reason: 'the event stream closed',
      });
      this.#timer = this.#setTimeout(() => {
        this.#timer = null;
        this.#open();
      }, wait);
    };
    for (const key of Object.keys(events) as EventKey[]) {
      es.addEventListener(key, (m: MessageEvent<string>) => {
        let data: unknown;
        try {
          data = JSON.parse(m.data);
        } catch {
          return;
        }
        const parsed = events[key].safeParse(data);
        if (!parsed.success) {
          console.warn(`event ${key} does not match the contract`, parsed.error.issues[0]);
          return;
        }
        this.#events.emit({ type: key, data: parsed.data } as CoreEvent);
      });
    }
    es.addEventListener('open', () => {
      this.#downSince = 0;
    });
  }
}
