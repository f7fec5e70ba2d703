import type { EventKey, EventMap, OpInput, OpName, OpOutput, Result } from '../../../core/api/contract.js';

export type { EventKey, EventMap, OpInput, OpName, OpOutput, Result };

/** One event from the core, tagged with its name. */
export type CoreEvent = { [K in EventKey]: { type: K; data: EventMap[K] } }[EventKey];

/** Whether the client reaches the core right now (drives the "core unreachable" banner). */
export type Connection =
  | { state: 'connecting' | 'open' }
  | { state: 'down'; since: number; retryAt: number; reason: string }
  | { state: 'unauthorized' };

/**
 * The renderer's only way to the core: over HTTP (the admin API and its event stream) in a
 * browser, over IPC (window.gatehop) in the desktop app. Every call resolves, never rejects.
 */
export interface CoreClient {
  call<K extends OpName>(name: K, input: OpInput<K>): Promise<Result<OpOutput<K>>>;
  /** Every event; after a reconnect, `resync` asks the app to re-read state. */
  subscribe(fn: (ev: CoreEvent) => void): () => void;
  onConnection(fn: (c: Connection) => void): () => void;
  onResync(fn: () => void): () => void;
  close(): void;
}

/** A tiny listener set (the renderer keeps no Node EventEmitter). */
export class Fanout<T> {
  readonly #fns = new Set<(v: T) => void>();
  add(fn: (v: T) => void): () => void {
    this.#fns.add(fn);
    return () => this.#fns.delete(fn);
  }
  emit(v: T): void {
    for (const fn of [...this.#fns]) {
      try {
        fn(v);
      } catch (err) {
        console.error('listener failed', err);
      }
    }
  }
  clear(): void {
    this.#fns.clear();
  }
}
