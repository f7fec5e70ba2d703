import { Listeners, type Logger } from '../common/index.js';

export interface SweepProgress {
  sweepId: number;
  state: 'running' | 'done' | 'cancelled';
  url: string;
  total: number;
  done: number;
  ok: number;
  failed: number;
  /** The node tested last, with its delay (null: it failed). */
  last: { nodeId: string; ms: number | null } | null;
  startedAt: number;
}

export interface DelaySweepDeps {
  /** A real URL test through that node (a tunnel opened for it when none is up). */
  delayTest(nodeId: string, url: string, timeoutMs: number): Promise<number>;
  nodeIds(): readonly string[];
  logger: Logger;
}

/**
 * "Test all": a URL test through every node (or the ones asked for), a few at a time, with
 * progress and cancel. One sweep at a time: asking again while one runs joins it. Each test opens a
 * tunnel of its own (a handshake, a worker), so `concurrency` stays small.
 */
export class DelaySweep {
  #seq = 0;
  #current: {
    progress: SweepProgress;
    results: Map<string, number | null>;
    cancelled: boolean;
    done: Promise<void>;
  } | null = null;
  #closed = false;
  readonly #listeners: Listeners<SweepProgress>;
  readonly #log: Logger;

  constructor(
    private readonly deps: DelaySweepDeps,
    private readonly concurrency = 4,
  ) {
    this.#log = deps.logger.child({ component: 'delay-sweep' });
    this.#listeners = new Listeners(this.#log, 'delay sweep');
  }

  /** The running or last sweep. */
  get progress(): SweepProgress | null {
    return this.#current ? { ...this.#current.progress } : null;
  }

  /** Delays of the running or last sweep (null: that node failed). */
  get results(): ReadonlyMap<string, number | null> {
    return this.#current?.results ?? new Map();
  }

  onProgress(fn: (p: SweepProgress) => void): () => void {
    return this.#listeners.add(fn);
  }

  start(opts: { url: string; timeoutMs: number; nodeIds?: readonly string[] }): SweepProgress {
    if (this.#current?.progress.state === 'running') return { ...this.#current.progress };
    const ids = [...(opts.nodeIds ?? this.deps.nodeIds())];
    const progress: SweepProgress = {
      sweepId: ++this.#seq,
      state: 'running',
      url: opts.url,
      total: ids.length,
      done: 0,
      ok: 0,
      failed: 0,
      last: null,
      startedAt: Date.now(),
    };
    const run = { progress, results: new Map<string, number | null>(), cancelled: false, done: Promise.resolve() };
    this.#current = run;
    this.#log.info(
      { event: 'sweep-started', sweepId: progress.sweepId, nodes: ids.length, url: opts.url },
      `testing ${ids.length} nodes`,
    );
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < ids.length && !run.cancelled && !this.#closed) {
        const nodeId = ids[next++]!;
        let ms: number | null;
        try {
          ms = Math.round(await this.deps.delayTest(nodeId, opts.url, opts.timeoutMs));
        } catch {
          ms = null;
        }
        run.results.set(nodeId, ms);
        progress.done++;
        if (ms === null) progress.failed++;
        else progress.ok++;
        progress.last = { nodeId, ms };
        this.#listeners.emit({ ...progress });
      }
    };
    run.done = Promise.all(Array.from({ length: Math.min(this.concurrency, Math.max(1, ids.length)) }, worker)).then(
      () => {
        progress.state = run.cancelled || this.#closed ? 'cancelled' : 'done';
        this.#log.info(
          {
            event: 'sweep-finished',
            sweepId: progress.sweepId,
            state: progress.state,
            ok: progress.ok,
            failed: progress.failed,
          },
          `node test ${progress.state}: ${progress.ok} answered, ${progress.failed} failed`,
        );
        this.#listeners.emit({ ...progress });
      },
    );
    this.#listeners.emit({ ...progress });
    return { ...progress };
  }

  /** Resolves when the sweep ends, or after `withinMs`, whichever comes first, with the delays so far. */
  async wait(withinMs: number): Promise<ReadonlyMap<string, number | null>> {
    const run = this.#current;
    if (!run) return new Map();
    let timer: NodeJS.Timeout | null = null;
    await Promise.race([run.done, new Promise<void>((r) => (timer = setTimeout(r, withinMs)))]);
    if (timer) clearTimeout(timer);
    return run.results;
  }

  /** Stops starting tests (those running finish); false when none runs. */
  cancel(): boolean {
    const run = this.#current;
    if (!run || run.progress.state !== 'running') return false;
    run.cancelled = true;
    return true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#current?.done;
  }
}
