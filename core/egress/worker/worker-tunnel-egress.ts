import { isIP } from 'node:net';
import {
  abortReason,
  detach,
  errorFromJson,
  ErrorCodes,
  GatehopError,
  settleFirst,
  SleepDetector,
  threadTransferCollector,
  waitAbortably,
  type Logger,
} from '../../common/index.js';
import type { LinkState, TunnelEgressOptions } from '../tunnel-types.js';
import type { TunnelProtocol } from '../tunnel-link.js';
import type {
  ConnectTcpOptions,
  Egress,
  EgressState,
  EgressStats,
  EgressTcpConnection,
  EgressUdpSocket,
} from '../../contracts/index.js';
import type { TunnelDiagnostics } from '../tunnel-types.js';
import type { FromTunnel, HostedStreamState, ToTunnel, TunnelOpened, TunnelWorkerData } from './messages.js';
import { Outbox } from './outbox.js';
import { ThreadHold, type TunnelThread } from './thread-hold.js';
import { WorkerTcpStream, type WorkerStreamFlowState } from './worker-tcp-stream.js';
import { WorkerUdpSocket } from './worker-udp-socket.js';
import { spawnTunnelWorker, type TunnelWorkerPool } from './worker-pool.js';
import { tunnelWorkerCounters } from './worker-counters.js';
import type { BulkSample } from '../bulk-meter.js';
import type { ConnectHostCounts } from '../connect-hosts.js';
import { HealthTaps } from '../health-taps.js';

export interface WorkerTunnelOptions extends TunnelEgressOptions {
  /** The worker's V8 heap cap (old generation), in MiB: a leak there ends this tunnel, not the app. */
  heapLimitMb?: number;
  /** No heartbeat for this long means the worker is stuck: it is terminated and the tunnel fails. */
  hangMs?: number;
  /** Where the worker comes from: a pool's started spare, or (without one) a new thread. */
  pool?: TunnelWorkerPool;
}

const CLOSE_GRACE_MS = 2_000;

/** What attach needs: the options without the link spec (already in the thread), and its protocol for /status. */
type AttachOptions = Omit<WorkerTunnelOptions, 'link'> & { protocol?: TunnelProtocol };

export type { TunnelThread } from './thread-hold.js';

/**
 * A tunnel whose OpenVPN client, lwIP stack and DNS resolver run in a worker thread of their own
 * (core/egress/worker/tunnel-worker.ts), so its crypto and TCP/IP work never waits behind another
 * tunnel's or the proxy's. Seen from here it is the same Egress as TunnelEgress. The worker is
 * held by this object (ThreadHold) for the tunnel's life: on close it goes back to the pool it came
 * from (or is terminated without one), and a worker that crashes, runs out of heap or stops
 * answering fails only this tunnel, with GH_ERR_TUNNEL_WORKER_FAILED, and is terminated.
 */
export class WorkerTunnelEgress implements Egress {
  readonly id: string;
  readonly nodeId: string;
  /** Which protocol carries the tunnel in the thread. */
  readonly protocol: TunnelProtocol;
  readonly stats: EgressStats = { bytesUp: 0, bytesDown: 0, sessionsActive: 0, sessionsTotal: 0, failures: 0 };
  /** What the health monitor learns from this tunnel's connects and downloads (#60). */
  readonly #taps = new HealthTaps(this.stats);
  readonly since = Date.now();
  #state: EgressState = 'ready';
  #diagnostics: TunnelDiagnostics;
  readonly #hold: ThreadHold;
  readonly #out: Outbox<ToTunnel>;
  readonly #logger: Logger;
  readonly #streams = new Map<number, WorkerTcpStream>();
  readonly #connects = new Map<number, { resolve: (c: EgressTcpConnection) => void; reject: (e: Error) => void }>();
  readonly #udp = new Map<number, WorkerUdpSocket>();
  readonly #requests = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly #closeHandlers = new Set<(reason: string) => void>();
  readonly #livenessHandlers = new Set<(responsive: boolean, quietMs: number) => void>();
  readonly #watchdog: NodeJS.Timeout;
  #nextId = 1;
  #released = false;
  #lastHeard = Date.now();

  /** The resolvers the tunnel gave: the node's own (what an honesty check asks). */
  readonly dnsServers: readonly string[];

  private constructor(opts: AttachOptions, hold: ThreadHold, out: Outbox<ToTunnel>, info: TunnelOpened) {
    this.id = opts.id;
    this.nodeId = opts.nodeId;
    this.protocol = opts.protocol ?? 'openvpn';
    this.#hold = hold;
    this.#out = out;
    this.#logger = opts.logger;
    this.#diagnostics = info.diagnostics;
    this.dnsServers = Object.freeze([...info.dnsServers]);
    const hangMs = opts.hangMs ?? 10_000;
    const everyMs = Math.min(1_000, hangMs / 2);
    const sleeps = new SleepDetector(everyMs);
    this.#watchdog = setInterval(() => {
      // After a sleep (the worker slept too, its heartbeats still queued): hangMs from the resume.
      if (sleeps.tick()) this.#lastHeard = Math.max(this.#lastHeard, Date.now());
      this.#checkAlive(hangMs);
    }, everyMs);
    this.#watchdog.unref();
  }

  static async open(opts: WorkerTunnelOptions): Promise<WorkerTunnelEgress> {
    opts.signal?.throwIfAborted();
    // What stays here: the logger and signal (not cloneable), the thread's own options.
    const { logger, signal: _signal, pool: _pool, heapLimitMb: _heap, hangMs: _hang, ...tunnel } = opts;
    const data: TunnelWorkerData = { ...tunnel, logLevel: logger.level };
    const worker = opts.pool?.take() ?? spawnTunnelWorker(opts.heapLimitMb ?? 256, `tunnel ${opts.id}`);
    worker.postMessage([{ t: 'open', data } satisfies ToTunnel]);
    return WorkerTunnelEgress.attach(worker, { ...opts, protocol: opts.link.protocol });
  }

  /**
   * Takes over a started tunnel thread and waits for its tunnel to open. `open` passes a Worker;
   * tests pass a MessageChannel pair with the host on this thread.
   */
  static attach(thread: TunnelThread, opts: AttachOptions): Promise<WorkerTunnelEgress> {
    tunnelWorkerCounters.started++;
    const out = new Outbox<ToTunnel>(thread, (id, d) => ({ t: 'data', id, data: d }), { giveAway: false });
    // Worker lines carry their own egressId and nodeId.
    const logger = opts.logger;
    let egress: WorkerTunnelEgress | null = null;
    return new Promise<WorkerTunnelEgress>((resolve, reject) => {
      // Settled once: an 'opened' that crosses an abort on the way is closed, not made an egress.
      let settled = false;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        opts.signal?.removeEventListener('abort', onAbort);
        reject(err);
      };
      const hold = new ThreadHold(thread, opts.pool ?? null, {
        message: (batch) => {
          if (egress) return egress.#handle(batch);
          for (const m of batch) {
            if (m.t === 'log') forwardLog(logger, m.line);
            else if (m.t === 'opened') {
              if (settled) continue; // aborted meanwhile: the 'close' sent then ends this tunnel
              settled = true;
              opts.signal?.removeEventListener('abort', onAbort);
              egress = new WorkerTunnelEgress(opts, hold, out, m.info);
              resolve(egress);
            } else if (m.t === 'open-failed') {
              fail(errorFromJson(m.error));
              letGo();
            } else if (egress) egress.#handleOne(m);
          }
        },
        error: (err) => {
          if (egress) return egress.#workerFailed(err);
          tunnelWorkerCounters.failures++;
          fail(
            new GatehopError(
              ErrorCodes.TUNNEL_WORKER_FAILED,
              `tunnel worker for ${opts.nodeId} failed while opening: ${err.message}`,
              { cause: err },
            ),
          );
          detach(logger, 'tunnel-worker-end', hold.end());
        },
        exit: (code) => {
          if (egress) return egress.#workerExited(code);
          out.close();
          fail(
            new GatehopError(
              ErrorCodes.TUNNEL_WORKER_FAILED,
              `tunnel worker for ${opts.nodeId} exited (${code}) while opening`,
            ),
          );
        },
      });
      const letGo = (): void => detach(logger, 'tunnel-worker-release', hold.letGo(CLOSE_GRACE_MS));
      const onAbort = (): void => {
        out.send({ t: 'close' });
        out.flush();
        fail(abortReason(opts.signal!, `tunnel to ${opts.nodeId}`));
        letGo();
      };
      if (opts.signal?.aborted) return onAbort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  // ---- Egress ----

  get state(): EgressState {
    return this.#state;
  }

  /**
   * This tunnel still holds a running thread: false once it exited (crashed, terminated) or, on
   * close, went back to the pool or was terminated.
   */
  get threadAlive(): boolean {
    return this.#hold.alive && !this.#released;
  }

  get responsive(): boolean {
    return this.#diagnostics.responsive;
  }

  linkState(): LinkState {
    return this.#state === 'closed' ? 'down' : this.#diagnostics.link;
  }

  /** The latest counters the worker reported (every 500 ms). */
  diagnostics(): TunnelDiagnostics {
    return this.#diagnostics;
  }

  /** Distinct destinations connects reached and failed to reach since the last call (the health monitor's). */
  takeConnectHosts(): ConnectHostCounts {
    return this.#taps.takeConnectHosts();
  }

  /** What bulk downloads through this tunnel took since the last call, and how fast (bulk-meter.ts). */
  takeBulk(): BulkSample | null {
    return this.#taps.takeBulk();
  }

  tcpCounters(): { segmentsOut: number; retransmissions: number } {
    return { segmentsOut: this.#diagnostics.segmentsOut, retransmissions: this.#diagnostics.retransmissions };
  }

  onClose(fn: (reason: string) => void): () => void {
    this.#closeHandlers.add(fn);
    return () => this.#closeHandlers.delete(fn);
  }

  onLiveness(fn: (responsive: boolean, quietMs: number) => void): () => void {
    this.#livenessHandlers.add(fn);
    return () => this.#livenessHandlers.delete(fn);
  }

  /**
   * Each open stream's flow-control state on both sides of the thread boundary, matched by id:
   * what a stalled transfer is waiting for (diagnostics; nothing changes).
   */
  async inspectStreams(): Promise<Array<{ main: WorkerStreamFlowState | null; worker: HostedStreamState | null }>> {
    const worker = (await this.#request({ t: 'inspect-streams', req: 0 })) as HostedStreamState[];
    const byId = new Map(worker.map((w) => [w.id, w]));
    const ids = new Set([...this.#streams.keys(), ...byId.keys()]);
    return [...ids].map((id) => ({ main: this.#streams.get(id)?.flowState() ?? null, worker: byId.get(id) ?? null }));
  }

  measureDns(): Promise<number> {
    return this.#request({ t: 'measure-dns', req: 0 }) as Promise<number>;
  }

  async resolve(host: string, opts: { signal?: AbortSignal } = {}): Promise<string[]> {
    if (isIP(host)) return [host];
    opts.signal?.throwIfAborted();
    const answer = this.#request({ t: 'resolve', req: 0, host }) as Promise<string[]>;
    return waitAbortably(answer, opts.signal, `resolve ${host}`);
  }

  connectTcp(host: string, port: number, opts: ConnectTcpOptions = {}): Promise<EgressTcpConnection> {
    if (this.#state === 'closed')
      return Promise.reject(new GatehopError(ErrorCodes.EGRESS_CLOSED, `egress ${this.id} is closed`));
    if (opts.signal?.aborted) return Promise.reject(abortReason(opts.signal, `connect to ${host}:${port}`));
    const id = this.#nextId++;
    let failure: unknown = null;
    const started = Date.now();
    return settleFirst<EgressTcpConnection>({ signal: opts.signal, what: `connect to ${host}:${port}` }, (settle) => {
      // The worker's refusal says why; a name the node's resolver failed counts as such.
      this.#connects.set(id, { ...settle, reject: (err) => ((failure = err), settle.reject(err)) });
      this.#out.send({ t: 'connect', id, host, port, timeoutMs: opts.timeoutMs ?? 15_000 });
      return (resolved) => {
        if (resolved) return this.#taps.connected(host, opts);
        this.#taps.connectFailed(host, failure, opts, started);
        // Still pending in the worker (an abort): tell it to stop. A refusal or a shutdown took the entry already.
        if (this.#connects.delete(id)) this.#out.send({ t: 'abort', id });
      };
    });
  }

  async bindUdp(): Promise<EgressUdpSocket> {
    if (this.#state === 'closed') throw new GatehopError(ErrorCodes.EGRESS_CLOSED, `egress ${this.id} is closed`);
    const id = this.#nextId++;
    const socket = new WorkerUdpSocket(id, this.#out, () => this.#udp.delete(id));
    this.#udp.set(id, socket);
    this.#out.send({ t: 'udp-open', id });
    return socket;
  }

  async close(): Promise<void> {
    if (this.#state === 'closed') return this.#letGo();
    this.#shutDown('closed', new GatehopError(ErrorCodes.NETSTACK_CLOSED, `tunnel ${this.id} closed`));
    this.#out.send({ t: 'close' });
    this.#out.flush();
    await this.#letGo();
  }

  /** The thread, once its tunnel has said goodbye: back to the pool (or ended). */
  async #letGo(): Promise<void> {
    await this.#hold.letGo(CLOSE_GRACE_MS);
    this.#released = true;
    this.#out.close();
  }

  /**
   * Ends the worker at once, as a crash would: its sessions fail with GH_ERR_TUNNEL_WORKER_FAILED
   * and the tunnel reports itself closed. The watchdog uses it on a hung worker.
   */
  async kill(reason = 'killed'): Promise<void> {
    this.#workerFailed(new Error(reason));
    await this.#hold.end();
  }

  // ---- from the worker ----

  #handle(batch: readonly FromTunnel[]): void {
    this.#lastHeard = Date.now();
    for (const m of batch) this.#handleOne(m);
  }

  #handleOne(m: FromTunnel): void {
    switch (m.t) {
      case 'data':
        // The thread's buffer is this thread's to free now: freed soon after the stream is done with it.
        threadTransferCollector().received(m.data.byteLength);
        this.#streams.get(m.id)?.onData(m.data);
        return;
      case 'ack':
        this.#streams.get(m.id)?.onAck(m.bytes);
        return;
      case 'fin':
        this.#streams.get(m.id)?.onFin();
        return;
      case 'closed':
        this.#streams.get(m.id)?.onClosed(m.error);
        return;
      case 'connected':
        return this.#connected(m);
      case 'connect-failed': {
        const c = this.#connects.get(m.id);
        this.#connects.delete(m.id);
        c?.reject(errorFromJson(m.error));
        return;
      }
      case 'udp-message':
        this.#udp.get(m.id)?.deliver({ data: Buffer.from(m.data), address: m.address, port: m.port });
        return;
      case 'udp-closed':
        this.#udp.get(m.id)?.onClosedByTunnel();
        return;
      case 'result': {
        const r = this.#requests.get(m.req);
        this.#requests.delete(m.req);
        if (m.error) r?.reject(errorFromJson(m.error));
        else r?.resolve(m.value);
        return;
      }
      case 'liveness':
        this.#diagnostics = { ...this.#diagnostics, responsive: m.responsive };
        for (const fn of [...this.#livenessHandlers]) fn(m.responsive, m.quietMs);
        return;
      case 'heartbeat':
        this.#diagnostics = m.diagnostics;
        return;
      case 'down':
        this.#shutDown(
          m.reason,
          new GatehopError(ErrorCodes.NETSTACK_CLOSED, `tunnel to ${this.nodeId} went down: ${m.reason}`),
        );
        detach(this.#logger, 'tunnel-worker-release', this.#letGo());
        return;
      case 'log':
        forwardLog(this.#logger, m.line);
        return;
      case 'opened':
      case 'open-failed':
      case 'idle': // ThreadHold's
        return;
    }
  }

  #connected(m: Extract<FromTunnel, { t: 'connected' }>): void {
    const c = this.#connects.get(m.id);
    this.#connects.delete(m.id);
    if (!c) {
      // Aborted while the worker was connecting: it must not keep the connection.
      this.#out.send({ t: 'destroy', id: m.id, error: null });
      return;
    }
    const stream = new WorkerTcpStream(m.id, this.#out, this.#taps.bulk);
    this.#streams.set(m.id, stream);
    this.stats.sessionsActive++;
    this.stats.sessionsTotal++;
    stream.once('close', () => {
      this.#streams.delete(m.id);
      this.stats.sessionsActive--;
      this.stats.bytesUp += stream.stats.bytesOut;
      this.stats.bytesDown += stream.stats.bytesIn;
    });
    c.resolve({
      stream,
      localAddress: m.localAddress,
      localPort: m.localPort,
      remoteAddress: m.remoteAddress,
      remotePort: m.remotePort,
    });
  }

  #request(msg: Extract<ToTunnel, { t: 'resolve' | 'measure-dns' | 'inspect-streams' }>): Promise<unknown> {
    if (this.#state === 'closed')
      return Promise.reject(new GatehopError(ErrorCodes.EGRESS_CLOSED, `egress ${this.id} is closed`));
    const req = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#requests.set(req, { resolve, reject });
      this.#out.send({ ...msg, req });
    });
  }

  #checkAlive(hangMs: number): void {
    if (this.#state === 'closed' || Date.now() - this.#lastHeard < hangMs) return;
    detach(this.#logger, 'tunnel-worker-kill', this.kill(`no heartbeat for ${Date.now() - this.#lastHeard} ms`));
  }

  #workerFailed(err: Error): void {
    if (this.#state === 'closed') return;
    tunnelWorkerCounters.failures++;
    this.#logger.error(
      { event: 'tunnel-worker-failed', egressId: this.id, nodeId: this.nodeId, err: err.message },
      'the tunnel worker failed; its tunnel is lost',
    );
    const reason = `tunnel worker failed: ${err.message}`;
    // A failed thread is never given back: whatever it holds is suspect.
    detach(this.#logger, 'tunnel-worker-end', this.#hold.end());
    this.#shutDown(
      reason,
      new GatehopError(ErrorCodes.TUNNEL_WORKER_FAILED, `tunnel to ${this.nodeId}: ${reason}`, { cause: err }),
    );
  }

  #workerExited(code: number): void {
    this.#out.close();
    if (this.#state !== 'closed') this.#workerFailed(new Error(`the worker exited (code ${code})`));
  }

  /** Ends everything this tunnel carried, once, and tells who listens why. */
  #shutDown(reason: string, err: Error): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    clearInterval(this.#watchdog);
    for (const s of [...this.#streams.values()]) s.onTunnelGone(err);
    const connects = [...this.#connects.values()];
    this.#connects.clear();
    for (const c of connects) c.reject(err);
    for (const r of [...this.#requests.values()]) r.reject(err);
    for (const u of [...this.#udp.values()]) u.onClosedByTunnel();
    this.#requests.clear();
    this.#livenessHandlers.clear();
    this.#diagnostics = { ...this.#diagnostics, link: 'down' };
    for (const fn of [...this.#closeHandlers]) fn(reason);
    this.#closeHandlers.clear();
  }
}

/** A JSON log line from the worker, written by the app's logger with its own fields. */
function forwardLog(logger: Logger, line: string): void {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    logger.warn({ event: 'tunnel-worker-log' }, line.trim());
    return;
  }
  const { level, msg, ...fields } = rec;
  const label = typeof level === 'number' ? pinoLevel(level) : 'info';
  logger[label](fields, typeof msg === 'string' ? msg : '');
}

function pinoLevel(n: number): 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' {
  return n >= 60 ? 'fatal' : n >= 50 ? 'error' : n >= 40 ? 'warn' : n >= 30 ? 'info' : n >= 20 ? 'debug' : 'trace';
}
