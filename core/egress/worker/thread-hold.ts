import type { FromTunnel } from './messages.js';
import type { PostTarget } from './outbox.js';

/** Where a thread goes when its tunnel lets go of it (TunnelWorkerPool). */
export interface ThreadHome {
  /** A thread that said 'idle', with none of its tunnel's listeners left. */
  give(thread: TunnelThread): void;
  /** A thread that was terminated. */
  ended(thread: TunnelThread): void;
}

/** What a tunnel needs of its thread: a Worker, or a MessageChannel stand-in in tests. */
export interface TunnelThread extends PostTarget {
  on(event: 'message', fn: (batch: FromTunnel[]) => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  on(event: 'exit', fn: (code: number) => void): unknown;
  off(event: 'message', fn: (batch: FromTunnel[]) => void): unknown;
  off(event: 'error', fn: (err: Error) => void): unknown;
  off(event: 'exit', fn: (code: number) => void): unknown;
  terminate(): Promise<number>;
}

type Handlers = {
  message: (batch: FromTunnel[]) => void;
  error: (err: Error) => void;
  exit: (code: number) => void;
};

/**
 * One tunnel's hold on its thread, and the one way it lets go. A thread whose tunnel ended cleanly
 * says 'idle'; then (with a pool) it goes back for the next tunnel, with none of this tunnel's
 * listeners left on it. A thread that does not say so within the grace, that failed, or that has no
 * pool to go back to is terminated.
 */
export class ThreadHold {
  #idle = false;
  #exited = false;
  #letGo: Promise<void> | null = null;
  readonly #idleWaiters = new Set<() => void>();
  readonly #handlers: Handlers;

  constructor(
    readonly thread: TunnelThread,
    private readonly pool: ThreadHome | null,
    handlers: Handlers,
  ) {
    this.#handlers = {
      message: (batch) => {
        // 'idle' is always the last of a batch: the thread posts it on its own after the tunnel's end.
        for (const m of batch) if (m.t === 'idle') this.#becameIdle();
        handlers.message(batch);
      },
      error: (err) => handlers.error(err),
      exit: (code) => {
        this.#exited = true;
        this.#wakeIdleWaiters();
        handlers.exit(code);
      },
    };
    thread.on('message', this.#handlers.message);
    thread.on('error', this.#handlers.error);
    thread.on('exit', this.#handlers.exit);
  }

  /** The thread still runs (false once it exited: terminated or crashed). */
  get alive(): boolean {
    return !this.#exited;
  }

  /**
   * The tunnel is done with its thread: waits up to `graceMs` for the thread to say 'idle', then
   * gives it back to the pool, or terminates it. Idempotent.
   */
  letGo(graceMs: number): Promise<void> {
    this.#letGo ??= this.#waitIdle(graceMs).then(() => this.#release(this.#idle && !this.#exited));
    return this.#letGo;
  }

  /** Ends the thread at once (it failed or hung): never given back. */
  end(): Promise<void> {
    this.#letGo ??= this.#release(false);
    return this.#letGo;
  }

  #becameIdle(): void {
    this.#idle = true;
    this.#wakeIdleWaiters();
  }

  #wakeIdleWaiters(): void {
    for (const w of [...this.#idleWaiters]) w();
  }

  async #waitIdle(graceMs: number): Promise<void> {
    if (this.#idle || this.#exited) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#idleWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, graceMs);
      this.#idleWaiters.add(done);
    });
  }

  async #release(reuse: boolean): Promise<void> {
    if (reuse && this.pool) {
      this.#detach();
      this.pool.give(this.thread);
      return;
    }
    if (!this.#exited) await this.thread.terminate();
    // terminate() resolves once the thread has exited; its 'exit' event may still be on its way.
    this.#exited = true;
    this.#detach();
    this.pool?.ended(this.thread);
  }

  #detach(): void {
    this.thread.off('message', this.#handlers.message);
    this.thread.off('error', this.#handlers.error);
    this.thread.off('exit', this.#handlers.exit);
  }
}
