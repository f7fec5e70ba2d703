import { Worker } from 'node:worker_threads';
import { ignoreRejection } from '../../common/index.js';
import type { ThreadHome, TunnelThread } from './thread-hold.js';
import { tunnelWorkerCounters } from './worker-counters.js';
import { workerScript } from './worker-entry.js';

export interface TunnelWorkerPoolOptions {
  /** The V8 heap cap (old generation) of each tunnel worker, MiB. */
  heapLimitMb: number;
  /**
   * Idle workers kept for the next tunnels (default 2). One is always started ahead (a switch does
   * not wait for a thread to boot); a second holds the worker of the tunnel a switch just left, so
   * the switch after it needs no new thread either.
   */
  maxIdle?: number;
  /**
   * Called when a tunnel has let go of its worker, given back or ended: the native memory its
   * tunnel used can be given back to the OS (HeapTrimmer).
   */
  onWorkerExit?: () => void;
}

/** Starts one tunnel worker thread; it loads its modules and then waits for an 'open'. */
export function spawnTunnelWorker(heapLimitMb: number, name: string): Worker {
  return new Worker(workerScript(), {
    name,
    resourceLimits: { maxOldGenerationSizeMb: heapLimitMb, maxYoungGenerationSizeMb: 32 },
  });
}

/** An idle worker and the listeners that drop it from the pool if it fails while idle. */
interface IdleWorker {
  worker: Worker;
  drop: () => void;
}

/**
 * Tunnel workers for the life of the process. A worker serves one tunnel at a time and, when that
 * tunnel ends cleanly, comes back here for the next one: a switch creates no thread, no V8 isolate
 * and no malloc arena (each new thread left ~1–4 MB of RSS behind that no trim returned: the soak's
 * slope). Booting a worker (thread, modules, lwIP's WebAssembly) took ~250 ms, ten times a near
 * server's whole handshake, so one is always started ahead. Idle workers do not keep the process
 * alive; `close()` ends them. A worker that crashed, hung or ran out of heap is never given back:
 * its owner terminates it.
 */
export class TunnelWorkerPool implements ThreadHome {
  #opts: TunnelWorkerPoolOptions;
  readonly #idle: IdleWorker[] = [];
  readonly #heapOf = new WeakMap<Worker, number>();
  #closed = false;
  #seq = 0;
  /** Workers created, handed out, and given back for reuse over the pool's life. */
  readonly stats = { created: 0, taken: 0, reused: 0, ended: 0 };

  constructor(opts: TunnelWorkerPoolOptions) {
    this.#opts = { ...opts };
    this.#refill(); // the first tunnel gains too
  }

  /** Idle workers now. */
  get idle(): number {
    return this.#idle.length;
  }

  /** A started worker (an idle one if there is one); a new one starts behind it when none is left. */
  take(): Worker {
    const entry = this.#idle.shift();
    let w: Worker;
    if (entry) {
      entry.worker.off('error', entry.drop).off('exit', entry.drop);
      w = entry.worker;
    } else w = this.#spawn();
    this.stats.taken++;
    w.ref();
    if (!this.#closed && this.#idle.length === 0) setImmediate(() => this.#refill());
    return w;
  }

  /**
   * A worker whose tunnel has ended and that said it is idle again, with no listener of its owner
   * left on it. Kept for the next tunnel, or ended when the pool is full or closed, or when it was
   * started with other limits.
   */
  give(thread: TunnelThread): void {
    this.#opts.onWorkerExit?.();
    if (!(thread instanceof Worker)) {
      ignoreRejection(thread.terminate());
      return;
    }
    const w = thread;
    const heap = this.#heapOf.get(w);
    if (this.#closed || this.#idle.length >= (this.#opts.maxIdle ?? 2) || heap !== this.#opts.heapLimitMb) {
      this.#end(w);
      return;
    }
    this.stats.reused++;
    tunnelWorkerCounters.threadsReused++;
    this.#keep(w);
  }

  /** A worker handed out that will not come back (it failed, or its owner had no pool to give it to). */
  ended(thread: TunnelThread): void {
    this.#opts.onWorkerExit?.();
    if (thread instanceof Worker) this.stats.ended++;
  }

  /** Later workers get these limits; idle workers started with others are replaced. */
  updateOptions(opts: TunnelWorkerPoolOptions): void {
    const heapChanged = opts.heapLimitMb !== this.#opts.heapLimitMb;
    this.#opts = { ...this.#opts, ...opts };
    if (!heapChanged) return;
    for (const e of this.#idle.splice(0)) {
      e.worker.off('error', e.drop).off('exit', e.drop);
      this.#end(e.worker);
    }
    this.#refill();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const idle = this.#idle.splice(0);
    await Promise.all(
      idle.map(async (e) => {
        e.worker.off('error', e.drop).off('exit', e.drop);
        this.stats.ended++;
        await e.worker.terminate();
      }),
    );
  }

  #refill(): void {
    if (this.#closed || this.#idle.length > 0) return;
    this.#keep(this.#spawn());
  }

  #keep(w: Worker): void {
    w.unref();
    // A worker that fails while idle is dropped; the next take starts a fresh one.
    const drop = (): void => {
      const i = this.#idle.findIndex((e) => e.worker === w);
      if (i >= 0) this.#idle.splice(i, 1);
    };
    w.once('error', drop).once('exit', drop);
    this.#idle.push({ worker: w, drop });
  }

  #end(w: Worker): void {
    this.stats.ended++;
    // terminate() resolves with the exit code; a thread that already ended resolves too.
    ignoreRejection(w.terminate());
  }

  #spawn(): Worker {
    this.stats.created++;
    tunnelWorkerCounters.threadsCreated++;
    const w = spawnTunnelWorker(this.#opts.heapLimitMb, `tunnel worker ${++this.#seq}`);
    this.#heapOf.set(w, this.#opts.heapLimitMb);
    return w;
  }
}
