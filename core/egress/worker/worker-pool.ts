import { Worker, type ResourceLimits } from 'node:worker_threads';
import { ignoreRejection } from '../../common/index.js';
import type { ThreadHome, TunnelThread } from './thread-hold.js';
import { tunnelWorkerCounters } from './worker-counters.js';
import { workerScript } from './worker-entry.js';

export interface TunnelWorkerPoolOptions {
  /** The V8 heap cap (old generation) of each tunnel worker, MiB. */
  heapLimitMb: number;
  /**
   * Idle workers kept at most (default 4): what a burst of tunnels (balance members, a standby,
   * several draining) gave back waits here for the next ones instead of being ended and created
   * again. Each costs its V8 heap after a collection (old space, and a new space of at most
   * YOUNG_GENERATION_MB) while it waits.
   */
  maxIdle?: number;
  /**
   * An idle worker beyond the first is ended after waiting this long (default 10 minutes): the pool
   * shrinks back to one spare after a burst, but a worker given back at one switch is still here
   * for the next (a user's pick, the soak's every 2 minutes).
   */
  idleTimeoutMs?: number;
  /**
   * Called when a tunnel has let go of its worker, given back or ended: the native memory its
   * tunnel used can be given back to the OS (HeapTrimmer).
   */
  onWorkerExit?: () => void;
}

const IDLE_TIMEOUT_MS = 10 * 60_000;
const MAX_IDLE = 4;

/**
 * A tunnel thread's young generation, MiB. V8 grows a busy isolate's new space up to this and
 * never gives it back, not even after the collection at a tunnel's end, so a thread that had been
 * busy kept up to the limit resident while it waited in the pool (32 MiB of new space at 32, 7.5 at
 * 8; the soak's pool held 3 idle threads at minute 17). Smaller is also cheaper for a download:
 * its buffers are ArrayBuffers V8 counts as external memory, and V8 starts a full mark-compact once
 * the external memory allocated since the last one eats the old generation's headroom down to the
 * new space's size; with a bigger new space the scavenges that free dead buffers come too rarely,
 * and a download fell into a mark-compact every ~100 ms. At 8 MiB (2026-12-06, bench/README.md,
 * "SoftEther over UDP"), SoftEther over UDP on the JavaScript path did so in every run (204–232
 * mark-compacts per GiB, 20–21 CPU s/GiB); at 4 MiB in none (0 per GiB, 15–17 s/GiB). OpenVPN 2.6
 * GCM over UDP still does in some runs at either size (2 of 8 at 8 MiB, 3 of 8 at 4). Most of a
 * tunnel's objects (packets, chunks) die young, so a smaller nursery is only scavenged more often,
 * each time as cheaply.
 */
const YOUNG_GENERATION_MB = 4;

/** A tunnel thread's V8 heap limits (bench:tunnel runs its downloads in threads with the same). */
export function tunnelThreadLimits(heapLimitMb: number): ResourceLimits {
  return { maxOldGenerationSizeMb: heapLimitMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB };
}

/** Starts one tunnel worker thread; it loads its modules and then waits for an 'open'. */
export function spawnTunnelWorker(heapLimitMb: number, name: string): Worker {
  return new Worker(workerScript(), { name, resourceLimits: tunnelThreadLimits(heapLimitMb) });
}

/** An idle worker, the listeners that drop it from the pool if it fails while idle, and its idle timeout. */
interface IdleWorker {
  worker: Worker;
  drop: () => void;
  expiry: NodeJS.Timeout;
}

/**
 * Tunnel workers for the life of the process. A worker serves one tunnel at a time and, when that
 * tunnel ends cleanly, comes back here for the next one: a switch creates no thread, no V8 isolate
 * and no malloc arena (each new thread left ~1–4 MB of RSS behind that no trim returned: the soak's
 * slope). Booting a worker (thread, modules, lwIP's WebAssembly) took ~250 ms, ten times a near
 * server's whole handshake, so one is always started ahead. Idle workers do not keep the process
 * alive; `close()` ends them. A worker that crashed, hung or ran out of heap is never given back:
 * its owner terminates it.
 *
 * Why idle workers wait minutes rather than being capped at two (#44): with two balance members, a
 * user's pick gives back two workers and takes two, but not in step; a cap of two ended the third
 * given back and a new thread was created for the next take, one per switch (12 threads for 12
 * picks), and the RSS grew with every new thread (+2 MB per switch, mostly in glibc's thread
 * arenas). The most recently given back is taken first, so extras age out after a burst. Tried
 * twice and put back: extras ending after one minute. In the soak the pool then created 14 threads
 * in 20 minutes instead of 6, and the RSS was higher, not lower: on the second try (after the
 * transfer fix, 2026-12-05) the mean of minutes 10–20 was 211.4 MB against 202.6, the thread arenas
 * 47.0 against 38.8, and the V8 pages no lower (79.8 against 77.8). A cap of two idle threads
 * (same day, 20 minutes): V8 pages 13 MB lower (64.8), the thread arenas 16.6 MB higher (55.4), the
 * RSS the same (205.0), 14 threads created: with threads ended and made again, the shared arena
 * grew by about what fewer idle isolates saved. So the ten minutes and the four stay.
 */
export class TunnelWorkerPool implements ThreadHome {
  #opts: TunnelWorkerPoolOptions;
  readonly #idle: IdleWorker[] = [];
  /** What this pool added to `tunnelWorkerCounters.idleThreads` (kept in step by #counted()). */
  #countedIdle = 0;
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
    const entry = this.#idle.pop();
    let w: Worker;
    if (entry) {
      this.#unlisten(entry);
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
    if (this.#closed || this.#idle.length >= (this.#opts.maxIdle ?? MAX_IDLE) || heap !== this.#opts.heapLimitMb) {
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
      this.#unlisten(e);
      this.#end(e.worker);
    }
    this.#refill();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const idle = this.#idle.splice(0);
    await Promise.all(
      idle.map(async (e) => {
        this.#unlisten(e);
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
      if (i >= 0) clearTimeout(this.#idle.splice(i, 1)[0]!.expiry);
      this.#counted();
    };
    // Waited too long: ended, unless it is the last spare (the next switch must not wait for a boot).
    const expire = (): void => {
      const i = this.#idle.findIndex((e) => e.worker === w);
      if (i < 0) return;
      if (this.#idle.length === 1) {
        this.#idle[i]!.expiry = setTimeout(expire, this.#opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS).unref();
        return;
      }
      const [e] = this.#idle.splice(i, 1);
      this.#unlisten(e!);
      // Once the thread is gone, what its isolate malloc'd can go back to the OS (HeapTrimmer).
      this.#end(w, () => this.#opts.onWorkerExit?.());
    };
    w.once('error', drop).once('exit', drop);
    const expiry = setTimeout(expire, this.#opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS).unref();
    this.#idle.push({ worker: w, drop, expiry });
    this.#counted();
  }

  #unlisten(e: IdleWorker): void {
    clearTimeout(e.expiry);
    e.worker.off('error', e.drop).off('exit', e.drop);
    this.#counted();
  }

  /** Brings the process-wide count of idle threads in step with this pool's. */
  #counted(): void {
    tunnelWorkerCounters.idleThreads += this.#idle.length - this.#countedIdle;
    this.#countedIdle = this.#idle.length;
  }

  /** Ends an idle or given-back worker; `then` runs once its thread is gone. */
  #end(w: Worker, then?: () => void): void {
    this.stats.ended++;
    // terminate() resolves with the exit code; a thread that already ended resolves too.
    ignoreRejection(w.terminate().finally(() => then?.()));
  }

  #spawn(): Worker {
    this.stats.created++;
    tunnelWorkerCounters.threadsCreated++;
    const w = spawnTunnelWorker(this.#opts.heapLimitMb, `tunnel worker ${++this.#seq}`);
    this.#heapOf.set(w, this.#opts.heapLimitMb);
    return w;
  }
}
