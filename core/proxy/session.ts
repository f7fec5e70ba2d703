import { Socket } from 'node:net';
import { pipeline, type Duplex } from 'node:stream';
import { ErrorCodes, GatehopError, type Logger, detach } from '../common/index.js';
import type { Egress, EgressLease, EgressTcpConnection, RetireReason } from '../contracts/index.js';
import type { Decision, Flow, InboundType } from '../rules/index.js';
import type { ClientConnection } from '../contracts/index.js';
import { FirstByteGate } from './first-byte-gate.js';
import { readFirstBytes } from './first-bytes.js';
import { httpsOnlyResponse, judgeFirstBytes } from './https-only.js';
import { openFlow, type FlowReplies, type FlowRequest, type FlowSteps } from './open-flow.js';
import type { Router } from '../router/index.js';
import type { ProxyOptions } from './options.js';
import { ConnectTimers } from './connect-timers.js';
import { notThisMachine } from './not-this-machine.js';
import { DownBytes } from './down-bytes.js';
import { flowEndOf, logSessionClosed, type SessionFlowEnd } from './session-end.js';
import { bump, type ProxyStats } from './proxy-stats.js';
import type { TcpQueues } from './tcp-queues.js';

export interface SessionContext {
  /** Replaced whole by a reload; sessions read it when they need a value. */
  options: ProxyOptions;
  readonly stats: ProxyStats;
  readonly logger: Logger;
  /** The kernel's queues of client connections (what clients have not read yet). */
  readonly queues: TcpQueues;
  /** Where each flow goes, and the egress each target opens on (TUNNEL and DIRECT alike): one owner. */
  readonly router: Router;
}

/** Connects re-made on another egress per session when theirs went away meanwhile (one per switch). */
const MAX_REDIALS = 3;

/**
 * What every proxy session owns: the client socket, its egress lease, its upstream streams and
 * three timers (handshake, connect, idle). `forceClose` is the only teardown path; errors, timeouts,
 * egress shutdown and process exit all end here, and it is idempotent.
 */
export abstract class ProxySession<S extends ClientConnection = ClientConnection> {
  readonly startedAt = Date.now();
  bytesUp = 0;
  /** What the client has taken (down-bytes.ts). */
  readonly #down: DownBytes;
  /** Any byte from upstream yet (a session that moved none may be re-dialled at a switch). */
  #movedDown = false;
  /** host:port this session last routed or dialled (null before its request). */
  target: string | null = null;
  /** Its flow as it ended (null while open, or if it never asked for anything), for core/traffic. */
  ended: SessionFlowEnd | null = null;
  readonly client: string;
  protected readonly log: Logger;
  protected readonly upstreams = new Set<Duplex>();
  #lease: EgressLease | null = null;
  /** DIRECT flows' lease (the host's own network), beside the tunnel's. */
  #directLease: EgressLease | null = null;
  /** The rule that placed this session's latest flow (null before one was routed). */
  decision: Decision | null = null;
  /** The destination the latest decision was made for (its `address` is that name's, resolved in the tunnel). */
  #routedHost: string | null = null;
  /** The proxy user the client authenticated as (IN-USER rules); undefined without authentication. */
  protected user: string | undefined;

  /** Who the client is (the user it authenticated as, or the enrolled device its address is). */
  get userName(): string | undefined {
    return this.user;
  }
  /** How the client asked for its latest flow (IN-TYPE rules): set by the protocol before it routes. */
  protected abstract inType: InboundType;
  #closed = false;
  #cut = false; // closed by cut(): the client's socket is reset, not closed
  /** Connects made again because their egress left meanwhile (at most MAX_REDIALS). */
  #redials = 0;
  #handshakeTimer: NodeJS.Timeout | null = null;
  #idleTimer: NodeJS.Timeout | null = null;
  readonly #connects: ConnectTimers;
  #onClosed: (session: ProxySession) => void;
  #gate: FirstByteGate | null = null;
  /** This session's steps for openFlow, made at its first flow. */
  #steps: FlowSteps | null = null;

  constructor(
    readonly id: number,
    protected readonly socket: S,
    protected readonly ctx: SessionContext,
    /** Over maxSessions: the session answers its first request with a refusal. */
    protected readonly rejected: boolean,
    onClosed: (session: ProxySession) => void,
  ) {
    this.log = ctx.logger.child({ sessionId: id });
    this.client = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    this.#onClosed = onClosed;
    this.#down = new DownBytes(socket, ctx.queues);
    this.#connects = new ConnectTimers(
      () => ctx.options.connectTimeoutMs,
      () => void ctx.stats.timeouts.connect++,
    );
    socket.on('error', (err) => this.forceClose('client-error', err));
    socket.once('close', () => this.forceClose('client-closed'));
    this.#handshakeTimer = setTimeout(() => {
      ctx.stats.timeouts.handshake++;
      this.onHandshakeTimeout();
    }, ctx.options.handshakeTimeoutMs);
    this.#handshakeTimer.unref();
  }

  get closed(): boolean {
    return this.#closed;
  }

  abstract readonly kind: 'socks5' | 'http' | 'capture';

  /** The handshake timer fired: send whatever refusal is still owed, then close. */
  protected onHandshakeTimeout(): void {
    this.forceClose('handshake-timeout', new GatehopError(ErrorCodes.SESSION_HANDSHAKE_TIMEOUT, 'handshake timed out'));
  }

  protected handshakeDone(): void {
    if (this.#handshakeTimer) clearTimeout(this.#handshakeTimer);
    this.#handshakeTimer = null;
  }

  protected countMalformed(reason: string): void {
    bump(this.ctx.stats.malformed, reason);
    this.log.debug({ event: 'malformed', reason }, 'malformed client input');
  }

  /**
   * Connects through this session's egress (the tunnel's, or the host's own network for a flow a
   * rule sent DIRECT), bounded by the connect timer. Each lease is taken on first use and held for
   * the session's life.
   */
  protected async dial(host: string, port: number, via: 'TUNNEL' | 'DIRECT' = 'TUNNEL'): Promise<EgressTcpConnection> {
    if (this.#closed) throw new GatehopError(ErrorCodes.SESSION_CLOSED, `session ${this.id} is closed`);
    // The client's part is done once we dial: from here the connect timer alone bounds the wait
    // (a slow tunnel must not turn a connect into a handshake timeout).
    this.handshakeDone();
    if (via === 'DIRECT') {
      // Decided on the address the tunnel's resolver gave: dialled there, so the name is not looked
      // up again in clear (nor fails where only the tunnel knows it).
      const address = host === this.#routedHost ? this.decision?.address : undefined;
      return this.#dialDirect(address ?? host, port);
    }
    const egress = this.leaseEgress();
    // The egress may stop taking sessions while we connect. Found down (a balance member that died
    // or fails its probes): this connect is given up at once and made on an egress that works.
    // Replaced (a switch): it goes on, and only if it fails is it made again on the new egress.
    let retired: RetireReason | null = null;
    const offRetire =
      this.#lease?.onRetire((why) => {
        retired = why;
        if (why === 'down')
          controller.abort(
            new GatehopError(ErrorCodes.EGRESS_CLOSED, `egress ${egress.id} went down while connecting`),
          );
      }) ?? ((): void => {});
    this.target = `${host}:${port}`;
    const armed = this.#connects.arm(host, port);
    const controller = armed.controller;
    const started = performance.now();
    try {
      const conn = await this.#connectOn(egress, host, port, armed);
      this.log.debug(
        {
          event: 'connected',
          target: `${host}:${port}`,
          egressId: egress.id,
          durationMs: Math.round(performance.now() - started),
        },
        'upstream connected',
      );
      return conn;
    } catch (err) {
      if (retired && !this.#closed && this.#redials < MAX_REDIALS) {
        this.#redials++;
        armed.disarm();
        offRetire();
        this.#lease?.release();
        this.#lease = null;
        this.ctx.stats.zeroProgressRetries++;
        this.log.info(
          { event: 'dial-moved', target: `${host}:${port}`, from: egress.id },
          'connect moved to another egress',
        );
        return this.dial(host, port);
      }
      throw err;
    } finally {
      offRetire();
      armed.disarm();
    }
  }

  /** Opens host:port on `egress` within an armed connect; the stream joins the session's upstreams. */
  async #connectOn(
    egress: Egress,
    host: string,
    port: number,
    armed: { controller: AbortController; timeoutMs: number },
  ): Promise<EgressTcpConnection> {
    const { controller, timeoutMs } = armed;
    try {
      const conn = await egress.connectTcp(host, port, { timeoutMs, signal: controller.signal });
      if (this.#closed) {
        conn.stream.destroy();
        throw new GatehopError(ErrorCodes.SESSION_CLOSED, `session ${this.id} closed while connecting`);
      }
      this.addUpstream(conn.stream);
      return conn;
    } catch (err) {
      // A timeout or a session closing aborts the connect: its reason, with its code, is the error.
      if (controller.signal.aborted && controller.signal.reason instanceof GatehopError) throw controller.signal.reason;
      throw err;
    }
  }

  /**
   * Asks the rule table where a flow to host:port goes; the answer is this flow's for life. While
   * the table finds what it needs (a name's address inside the tunnel), the handshake timer still
   * runs: routing is part of the client's wait.
   */
  protected async route(
    host: string,
    port: number,
    network: Flow['network'] = 'tcp',
    sniffedName: string | null = null,
  ): Promise<Decision> {
    const s = this.socket;
    const flow: Flow = {
      network,
      host,
      port,
      sniffedName,
      ...(s.remoteAddress !== undefined && s.remotePort !== undefined
        ? { src: { ip: s.remoteAddress, port: s.remotePort } }
        : {}),
      ...(s.localPort !== undefined ? { inPort: s.localPort } : {}),
      inType: this.inType,
      ...(this.user !== undefined ? { inUser: this.user } : {}),
    };
    // The local program is looked up by a kernel socket's ports: a captured flow's program is known otherwise.
    const d = await this.ctx.router.decide(flow, s instanceof Socket ? s : undefined);
    this.decision = d;
    this.target = `${host}:${port}`;
    this.#routedHost = host;
    bump(this.ctx.stats.routed, d.target);
    if (d.target === 'REJECT')
      this.log.debug(
        { event: 'flow-rejected', target: `${host}:${port}`, rule: d.rule, payload: d.payload },
        'flow refused by a rule',
      );
    return d;
  }

  /**
   * privacy.httpsOnly: before anything of a tunnel flow reaches the node (its connect included),
   * the client's first bytes are read until they can be judged, however late they come (#59); only
   * a TLS ClientHello is handed back to be sent on. A plain HTTP request is answered with a page
   * that says why; anything else, or nothing within the handshake timeout, closes the session
   * (null), never dialled. Other flows pass `already` straight back.
   */
  protected async firstBytesIfTls(client: Duplex, already: Buffer): Promise<Buffer | null> {
    if (this.decision?.target !== 'TUNNEL' || !this.ctx.router.httpsOnly()) return already;
    const first = await readFirstBytes(client, already, {
      settled: (b) => judgeFirstBytes(b) !== 'undecided',
      waitMs: this.ctx.options.handshakeTimeoutMs,
    });
    if (this.#closed) return null;
    const verdict = judgeFirstBytes(first);
    if (verdict === 'tls') return first;
    if (verdict === 'http') this.refusePlainHttp(client);
    else this.#refuseNotTls(first);
    return null;
  }

  /** Not TLS and not HTTP (or nothing at all): closed, with the reason in the log. */
  #refuseNotTls(first: Buffer): void {
    this.ctx.stats.httpsOnlyRefused++;
    const why =
      first.length === 0 ? `no bytes within ${this.ctx.options.handshakeTimeoutMs} ms` : 'not a TLS ClientHello';
    this.log.info(
      { event: 'https-only-refused', target: this.target, why },
      `a connection through a volunteer node refused (privacy.httpsOnly): ${why}`,
    );
    this.forceClose('https-only');
  }

  /** Opens a flow the one way every front end does (open-flow.ts), with this session's steps. */
  protected openFlow(request: FlowRequest, replies: FlowReplies): Promise<void> {
    // Made once per session (an HTTP keep-alive connection opens a flow per request).
    this.#steps ??= {
      closed: () => this.#closed,
      router: this.ctx.router,
      route: (host, port, sniffedName) => this.route(host, port, 'tcp', sniffedName),
      checkFirstBytes: (client, first) => this.firstBytesIfTls(client, first),
      dial: (host, port, via) => this.dial(host, port, via),
      sendAhead: (conn, bytes) => {
        conn.stream.write(bytes);
        this.bytesUp += bytes.length;
        this.ctx.stats.bytesUp += bytes.length;
      },
      relay: (client, upstream, retryTarget) => this.relay(client, upstream, retryTarget),
      close: (reason, err) => this.forceClose(reason, err),
    };
    return openFlow(this.#steps, request, replies);
  }

  /** Answers the client with the HTTPS-only page and ends the session. */
  protected refusePlainHttp(client: Duplex): void {
    this.ctx.stats.httpsOnlyRefused++;
    this.log.info(
      { event: 'https-only-refused', target: this.target, why: 'plain HTTP' },
      'plain HTTP through a volunteer node refused (privacy.httpsOnly)',
    );
    this.handshakeDone();
    if (client.writable) client.end(httpsOnlyResponse(), () => this.forceClose('https-only'));
    else this.forceClose('https-only');
    const flushTimer = setTimeout(() => this.forceClose('https-only'), 2_000);
    flushTimer.unref();
    client.once('close', () => clearTimeout(flushTimer));
  }

  /** A DIRECT connect: the host's own network, bounded by the same connect timer. */
  async #dialDirect(host: string, port: number): Promise<EgressTcpConnection> {
    this.#directLease ??= this.ctx.router.sourceFor('DIRECT').acquire();
    this.target = `${host}:${port}`;
    const armed = this.#connects.arm(host, port);
    try {
      const to = this.directReachesThisMachine
        ? host
        : await notThisMachine(this.#directLease.egress, host, armed.controller.signal);
      return await this.#connectOn(this.#directLease.egress, to, port, armed);
    } finally {
      armed.disarm();
    }
  }

  /**
   * Whether DIRECT may lead to this machine's own loopback. A captured program (`gatehop run`, TUN
   * mode) lives in its own network: its loopback is its own, and Gatehop must not be its way to
   * this machine's services by a name that resolves to 127.0.0.1 (#59); see notThisMachine.
   */
  protected readonly directReachesThisMachine: boolean = true;

  /** The egress carrying this session now (null before it dialled). */
  get egressId(): string | null {
    return this.#lease?.egress.id ?? this.#directLease?.egress.id ?? null;
  }

  /** The egress this session is bound to for life (leased on first use). */
  protected leaseEgress(): Egress {
    this.#lease ??= this.ctx.router.sourceFor('TUNNEL').acquire();
    return this.#lease.egress;
  }

  #currentLease(): EgressLease | null {
    return this.#lease;
  }

  protected addUpstream(stream: Duplex): void {
    this.upstreams.add(stream);
    stream.on('error', () => {}); // errors surface through pipeline/handlers; keep one listener until close
    stream.once('close', () => this.upstreams.delete(stream));
  }

  /** What the client has taken, handshake replies not counted (down-bytes.ts). */
  get bytesDown(): number {
    return this.#down.value;
  }

  /** For protocols whose handshake replies are not payload: down bytes count from relay() on. */
  protected countDownFromRelay(): void {
    this.#down.countFromRelay();
  }

  /** (Re)arms the idle timer: no bytes in either direction for idleTimeoutMs closes the session. */
  protected touch(): void {
    if (this.#idleTimer) return void this.#idleTimer.refresh();
    if (this.#closed) return;
    this.#idleTimer = setTimeout(() => {
      this.ctx.stats.timeouts.idle++;
      this.forceClose('idle-timeout', new GatehopError(ErrorCodes.SESSION_IDLE_TIMEOUT, 'no traffic for idle timeout'));
    }, this.ctx.options.idleTimeoutMs);
    this.#idleTimer.unref();
  }

  /**
   * Starts relaying. With `target`, the session first waits for its first byte: if the egress
   * starts draining before anything has moved, the upstream is re-dialled on the new active egress
   * (zero-progress retry) and the client notices nothing.
   */
  protected relay(client: Duplex, upstream: Duplex, target?: { host: string; port: number }): void {
    this.handshakeDone();
    this.touch();
    // The handshake's replies (SOCKS5 reply, "200 Connection Established") are not payload.
    this.#down.relayStarts();
    if (!target || !this.#lease || this.decision?.target === 'DIRECT') {
      this.#pipe(client, upstream);
      return;
    }
    let offRetire = (): void => {};
    const gate = new FirstByteGate(client, upstream, (u) => {
      offRetire();
      this.#gate = null;
      this.#pipe(client, u);
    });
    this.#gate = gate;
    const watch = (lease: EgressLease): void => {
      offRetire = lease.onRetire(() => detach(this.log, 'session-redial', retry()));
    };
    const retry = async (): Promise<void> => {
      if (!gate.open || this.#closed || this.bytesUp > 0 || this.#movedDown) return;
      const old = gate.detach();
      old?.destroy();
      const from = this.#lease?.egress.id;
      this.#lease?.release();
      this.#lease = null;
      this.ctx.stats.zeroProgressRetries++;
      try {
        const conn = await this.dial(target.host, target.port);
        if (this.#closed || !gate.open) return;
        const lease = this.#currentLease();
        this.log.info(
          { event: 'zero-progress-retry', target: `${target.host}:${target.port}`, from, to: lease?.egress.id },
          'idle session moved to the new egress',
        );
        if (lease) watch(lease);
        gate.attach(conn.stream);
      } catch (err) {
        this.forceClose('zero-progress-retry-failed', err as Error);
      }
    };
    watch(this.#lease);
  }

  /**
   * Bidirectional relay with half-close: EOF from one side becomes a FIN towards the other while the
   * opposite direction keeps flowing. Backpressure is `pipeline`'s. The session ends when both
   * directions have finished, or at the first error.
   */
  #pipe(client: Duplex, upstream: Duplex): void {
    client.on('data', (chunk: Buffer) => {
      this.bytesUp += chunk.length;
      this.ctx.stats.bytesUp += chunk.length;
      this.#idleTimer?.refresh();
    });
    upstream.on('data', () => {
      this.#movedDown = true;
      this.#idleTimer?.refresh();
    });
    let finished = 0;
    const onDirectionDone = (err?: Error | null): void => {
      if (err) this.forceClose('relay-error', err);
      else if (++finished === 2) this.forceClose('done');
    };
    pipeline(client, upstream, onDirectionDone);
    pipeline(upstream, client, onDirectionDone);
  }

  /** Ends the session by resetting the client (a revoked device): what the kernel still held for it is dropped. */
  cut(reason: string): void {
    this.#cut = true;
    this.forceClose(reason);
  }

  /** The one teardown path. */
  forceClose(reason: string, err?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of [this.#handshakeTimer, this.#idleTimer]) if (t) clearTimeout(t);
    this.#connects.abortAll(new GatehopError(ErrorCodes.SESSION_CLOSED, `session ${this.id} closed: ${reason}`));
    this.#gate?.cancel();
    this.#gate = null;
    // Before the socket goes (see DownBytes.close).
    const down = this.#down.close();
    this.ctx.stats.closedBytesDown += down;
    if (this.decision) {
      const t = this.decision.target;
      this.ctx.stats.routedBytes[t] = (this.ctx.stats.routedBytes[t] ?? 0) + this.bytesUp + down;
    }
    for (const u of this.upstreams) u.destroy();
    this.upstreams.clear();
    this.onClose();
    if (this.#cut && this.socket.resetAndDestroy && !this.socket.destroyed) this.socket.resetAndDestroy();
    else if (!this.socket.destroyed) this.socket.destroy();
    const { kind, client, user, target, decision, bytesUp, bytesDown, startedAt } = this;
    const atEnd = { kind, client, user, target, decision, bytesUp, bytesDown, startedAt, cut: this.#cut };
    this.ended = flowEndOf({ ...atEnd, egress: this.#lease?.egress ?? null }, reason, err);
    this.#lease?.release();
    this.#lease = null;
    this.#directLease?.release();
    this.#directLease = null;
    logSessionClosed(this.log, { ...atEnd, reason }, err);
    this.#onClosed(this);
  }

  /** Subclass hook for resources of its own (UDP sockets, HTTP server state). */
  protected onClose(): void {}
}
