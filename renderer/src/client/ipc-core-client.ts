import { events, operations } from '../../../core/api/contract.js';
import {
  Fanout,
  type Connection,
  type CoreClient,
  type CoreEvent,
  type EventKey,
  type OpInput,
  type OpName,
  type OpOutput,
  type Result,
} from './core-client.js';

/**
 * What the Electron preload exposes as window.gatehop: one function per operation of the contract
 * plus subscribe. Generated there from the same contract (electron/preload.ts).
 */
export type GatehopBridge = { [K in OpName]: (input: OpInput<K>) => Promise<Result<OpOutput<K>>> } & {
  subscribe(fn: (event: string, data: unknown) => void): () => void;
};

/** CoreClient over the preload bridge. The core lives in the same app, so the link is always up. */
export class IpcCoreClient implements CoreClient {
  readonly #events = new Fanout<CoreEvent>();
  readonly #conn = new Fanout<Connection>();
  readonly #resync = new Fanout<void>();
  readonly #off: () => void;

  constructor(private readonly bridge: GatehopBridge) {
    this.#off = bridge.subscribe((event, data) => {
      if (!(event in events)) return;
      const key = event as EventKey;
      const parsed = events[key].safeParse(data);
      if (parsed.success) this.#events.emit({ type: key, data: parsed.data } as CoreEvent);
    });
  }

  async call<K extends OpName>(name: K, input: OpInput<K>): Promise<Result<OpOutput<K>>> {
    const checked = operations[name].input.safeParse(input);
    if (!checked.success)
      return {
        ok: false,
        error: { code: 'GH_ERR_UI_INVALID_INPUT', message: checked.error.issues[0]?.message ?? 'invalid input' },
      };
    const fn = this.bridge[name] as (i: unknown) => Promise<Result<OpOutput<K>>>;
    try {
      const r = await fn(checked.data);
      if (!r.ok) return r;
      const out = operations[name].output.safeParse(r.value);
      return out.success
        ? { ok: true, value: out.data as OpOutput<K> }
        : { ok: false, error: { code: 'GH_ERR_UI_BAD_RESPONSE', message: `${name}: ${out.error.issues[0]?.message}` } };
    } catch (err) {
      return { ok: false, error: { code: 'GH_ERR_UI_IPC', message: (err as Error).message } };
    }
  }

  subscribe(fn: (ev: CoreEvent) => void): () => void {
    return this.#events.add(fn);
  }

  onConnection(fn: (c: Connection) => void): () => void {
    fn({ state: 'open' });
    return this.#conn.add(fn);
  }

  onResync(fn: () => void): () => void {
    return this.#resync.add(fn);
  }

  close(): void {
    this.#off();
    this.#events.clear();
    this.#conn.clear();
    this.#resync.clear();
  }
}
