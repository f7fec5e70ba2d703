import { execFile } from 'node:child_process';
import { z } from 'zod';
import {
  abortReason,
  ErrorCodes,
  GatehopError,
  parseEndpoint,
  type Logger,
  errorToJson,
  wholeNumber,
} from '../common/index.js';
import type { Dialer } from '../reach/index.js';
import { urlTest } from './url-test.js';

const timing = {
  intervalMs: wholeNumber(1_000, 30_000),
  timeoutMs: z.number().int().min(100).max(120_000).default(5_000),
};

/** In-tunnel probes per node, GOST style (config `groups.probes`). */
export const probeSpecSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('tcp'),
      addr: z.string().refine((s) => {
        try {
          parseEndpoint(s);
          return true;
        } catch {
          return false;
        }
      }, 'must be HOST:PORT'),
      ...timing,
    })
    .strict(),
  z
    .object({
      type: z.literal('http'),
      url: z
        .string()
        .url()
        .refine((u) => u.startsWith('http://'), 'must be an http:// URL (it is fetched through the tunnel)'),
      host: z.string().min(1).optional(),
      headers: z.record(z.string(), z.string()).optional(),
      /** Default 204 for a URL ending in generate_204, else 200. */
      expectedStatus: z.number().int().min(100).max(599).optional(),
      ...timing,
    })
    .strict(),
  /** A local command; exit 0 is healthy. No shell: argv[0] is the program. */
  z.object({ type: z.literal('cmd'), argv: z.array(z.string().min(1)).min(1), ...timing }).strict(),
]);
export type ProbeSpec = z.infer<typeof probeSpecSchema>;

/** maxFails failures within failTimeoutMs mark a node dead until a probe succeeds; maxLatencyMs skips slow ones (config `groups.failFilter`). */
export const failFilterSchema = z
  .object({
    maxFails: wholeNumber(1, 3),
    failTimeoutMs: wholeNumber(1_000, 60_000),
    /** 0 = off. Nodes without a result are let through. */
    maxLatencyMs: wholeNumber(0, 0),
  })
  .strict();
export type FailFilterOptions = z.infer<typeof failFilterSchema>;

export const defaultExpectedStatus = (url: string): number => (/generate_204(\?|$)/.test(url) ? 204 : 200);

/** Output a cmd probe may print before it is cut (it is logged at debug). */
const MAX_CMD_OUTPUT = 4096;

/**
 * One probe through `dial` (tcp, http) or on this machine (cmd). Resolves with the time it took;
 * rejects (GH_ERR_EGRESS_FAILED / GH_ERR_ABORTED) when it fails, times out or is aborted. A cmd
 * probe that hangs is killed at its timeout.
 */
export async function runProbe(
  spec: ProbeSpec,
  dialer: Dialer,
  opts: { signal?: AbortSignal; logger?: Logger } = {},
): Promise<number> {
  const started = performance.now();
  const deadline = AbortSignal.timeout(spec.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  if (spec.type === 'tcp') {
    const { host, port } = parseEndpoint(spec.addr);
    const s = await dialer.dial(host, port, signal);
    s.destroy();
    return performance.now() - started;
  }
  if (spec.type === 'http') {
    return urlTest(dialer, spec.url, {
      timeoutMs: spec.timeoutMs,
      signal,
      expectedStatus: spec.expectedStatus ?? defaultExpectedStatus(spec.url),
      ...(spec.host ? { host: spec.host } : {}),
      ...(spec.headers ? { headers: spec.headers } : {}),
    });
  }
  return new Promise<number>((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal, 'cmd probe'));
    const [file, ...args] = spec.argv as [string, ...string[]];
    const child = execFile(
      file,
      args,
      {
        timeout: spec.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: MAX_CMD_OUTPUT,
        windowsHide: true,
        signal: opts.signal,
      },
      (err, stdout, stderr) => {
        opts.logger?.debug(
          {
            event: 'probe-cmd',
            argv: spec.argv,
            stdout: String(stdout).slice(0, MAX_CMD_OUTPUT),
            stderr: String(stderr).slice(0, MAX_CMD_OUTPUT),
          },
          'cmd probe output',
        );
        if (!err) return resolve(performance.now() - started);
        const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
        const why = e.killed
          ? `killed after ${spec.timeoutMs} ms`
          : e.code === 'ENOENT'
            ? `${file} not found`
            : typeof e.code === 'number'
              ? `exit ${String(e.code)}`
              : e.message;
        reject(new GatehopError(ErrorCodes.EGRESS_FAILED, `cmd probe ${spec.argv.join(' ')}: ${why}`, { cause: err }));
      },
    );
    child.stdin?.end();
  });
}

interface NodeRecord {
  failures: number[];
  dead: boolean;
  latencyMs: number | null;
}

/**
 * GOST's fail filter: maxFails failures within failTimeoutMs mark a node dead (skipped by
 * selection) until one probe succeeds, or, with nothing probing it any more (its tunnel was
 * replaced and closed), until failTimeoutMs has passed since its last failure; with maxLatencyMs, a node whose last good probe was slower
 * is skipped too; a node with no result yet is let through. Pure apart from the clock.
 */
export class FailFilter {
  readonly #nodes = new Map<string, NodeRecord>();

  constructor(
    private opts: FailFilterOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** A reload: the next result and check use these (what is known of each node is kept). */
  updateOptions(opts: FailFilterOptions): void {
    this.opts = opts;
  }

  record(nodeId: string, ok: boolean, latencyMs?: number): { dead: boolean; changed: boolean } {
    const r = this.#nodes.get(nodeId) ?? { failures: [], dead: false, latencyMs: null };
    this.#nodes.set(nodeId, r);
    const wasDead = r.dead;
    if (ok) {
      r.failures = [];
      r.dead = false;
      if (latencyMs !== undefined) r.latencyMs = latencyMs;
    } else {
      const t = this.now();
      r.failures = [...r.failures.filter((f) => t - f < this.opts.failTimeoutMs), t];
      if (r.failures.length >= this.opts.maxFails) r.dead = true;
    }
    return { dead: r.dead, changed: r.dead !== wasDead };
  }

  isDead(nodeId: string): boolean {
    const r = this.#nodes.get(nodeId);
    if (!r?.dead) return false;
    // A node still probed keeps failing (and refreshing this); one nobody probes may be tried again.
    return this.now() - (r.failures.at(-1) ?? 0) < this.opts.failTimeoutMs;
  }

  /** Selection may use the node: not dead, and not slower than maxLatencyMs (unknown: yes). */
  allows(nodeId: string): boolean {
    const r = this.#nodes.get(nodeId);
    if (!r) return true;
    if (this.isDead(nodeId)) return false;
    return !(this.opts.maxLatencyMs > 0 && r.latencyMs !== null && r.latencyMs > this.opts.maxLatencyMs);
  }

  /** Drops what is known of nodes no longer in the pool (the map never grows without bound). */
  retain(nodeIds: ReadonlySet<string>): void {
    for (const id of this.#nodes.keys()) if (!nodeIds.has(id)) this.#nodes.delete(id);
  }
}

/**
 * The probes of one node's tunnel: each spec at once, then every intervalMs; one run per spec at a
 * time; every result goes to the fail filter. close() stops the timers and aborts what runs.
 */
export class ProbeLoop {
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #running = new Set<number>();
  readonly #abort = new AbortController();
  #closed = false;

  constructor(
    private readonly nodeId: string,
    private readonly specs: readonly ProbeSpec[],
    private readonly dialer: Dialer,
    private readonly filter: FailFilter,
    private readonly onResult: (r: {
      nodeId: string;
      spec: ProbeSpec;
      ok: boolean;
      ms: number | null;
      dead: boolean;
      changed: boolean;
      error?: string;
    }) => void,
    private readonly logger?: Logger,
  ) {}

  start(): void {
    this.specs.forEach((spec, i) => {
      this.#runSoon(i);
      const t = setInterval(() => this.#runSoon(i), spec.intervalMs);
      t.unref();
      this.#timers.push(t);
    });
  }

  /** One probe round from the timer: a failure is logged (debug: probes fail often), never unhandled. */
  #runSoon(i: number): void {
    this.#run(i).catch((err: unknown) =>
      this.logger?.debug(
        { event: 'probe-failed', errCode: errorToJson(err).code, err: errorToJson(err).message },
        'probe round failed',
      ),
    );
  }

  async #run(i: number): Promise<void> {
    if (this.#closed || this.#running.has(i)) return;
    this.#running.add(i);
    const spec = this.specs[i]!;
    try {
      const ms = await runProbe(spec, this.dialer, {
        signal: this.#abort.signal,
        ...(this.logger ? { logger: this.logger } : {}),
      });
      if (this.#closed) return;
      this.onResult({ nodeId: this.nodeId, spec, ok: true, ms, ...this.filter.record(this.nodeId, true, ms) });
    } catch (err) {
      if (this.#closed) return;
      this.onResult({
        nodeId: this.nodeId,
        spec,
        ok: false,
        ms: null,
        ...this.filter.record(this.nodeId, false),
        error: (err as Error).message,
      });
    } finally {
      this.#running.delete(i);
    }
  }

  close(): void {
    this.#closed = true;
    this.#abort.abort();
    for (const t of this.#timers.splice(0)) clearInterval(t);
  }
}
