import { Worker } from 'node:worker_threads';
import { workerScript } from './worker-entry.js';

export interface TunnelWorkerPoolOptions {
  /** The V8 heap cap (old generation) of each tunnel worker, MiB. */
  heapLimitMb: number;
  /** Called when a worker handed out has ended (its native memory can be given back: HeapTrimmer). */
  onWorkerExit?: () => void;
}

/** Starts one tunnel worker thread; it loads its modules and then waits for an 'open'. */
export function spawnTunnelWorker(heapLimitMb: number, name: string): Worker {
  return new Worker(workerScript(), {
    name,
    resourceLimits: { maxOldGenerationSizeMb: heapLimitMb, maxYoungGenerationSizeMb: 32 },
  });
}

/**
 * One tunnel worker kept started and idle, so a switch does not wait for a thread to boot and
 * load the client, the stack and its WebAssembly (~250 ms measured; a switch's whole handshake to
 * a near server is ~30 ms). Taking it starts the next one. The spare does not keep the process
 * alive, and `close()` ends it; workers handed out belong to their tunnels.
 */
export class TunnelWorkerPool {
  #opts: TunnelWorkerPoolOptions;
  #spare: Worker | null = null;
  #closed = false;
  #seq = 0;

  constructor(opts: TunnelWorkerPoolOptions) {
    this.#opts = { ...opts };
    this.#refill(); // the first tunnel gains too
  }

  /** A started worker (the spare if there is one); a new spare starts behind it. */
  take(): Worker {
    const w = this.#spare ?? this.#spawn();
    this.#spare = null;
    w.removeAllListeners('error').removeAllListeners('exit');
    const onExit = this.#opts.onWorkerExit;
    if (onExit) w.once('exit', () => onExit());
    w.ref();
    if (!this.#closed) setImmediate(() => this.#refill());
    return w;
  }

  /** Later workers get these limits; a spare started with others is replaced. */
  updateOptions(opts: TunnelWorkerPoolOptions): void {
    const heapChanged = opts.heapLimitMb !== this.#opts.heapLimitMb;
    this.#opts = { ...this.#opts, ...opts };
    if (!heapChanged) return;
    const old = this.#spare;
    this.#spare = null;
    void old?.terminate();
    this.#refill();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const w = this.#spare;
    this.#spare = null;
    await w?.terminate();
  }

  #refill(): void {
    if (this.#closed || this.#spare) return;
    const w = this.#spawn();
    w.unref();
    // A spare that fails while idle is dropped; the next take starts a fresh one.
    const drop = (): void => {
      if (this.#spare === w) this.#spare = null;
    };
    w.once('error', drop).once('exit', drop);
    this.#spare = w;
  }

  #spawn(): Worker {
    return spawnTunnelWorker(this.#opts.heapLimitMb, `tunnel worker ${++this.#seq}`);
  }
}
