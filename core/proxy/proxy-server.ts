import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ErrorCodes, GatehopError, Listeners, type Endpoint, type Logger, detach } from '../common/index.js';
import type { EgressSource } from '../contracts/index.js';
import { HttpSession } from './http-session.js';
import type { ProxyOptions } from './options.js';
import { createProxyStats, bump, type ProxyStats } from './proxy-stats.js';
import type { ProxySession, SessionContext } from './session.js';
import type { SessionFlowEnd } from './session-end.js';
import type { ClientConnection } from '../contracts/index.js';
import { CaptureSession } from './capture-session.js';
import { UdpRelay } from './udp-relay.js';
import type { UdpDatagram } from '../contracts/index.js';
import { Router, type Routing } from '../router/index.js';
import { TcpQueues } from './tcp-queues.js';
import { ClientFilter } from './client-filter.js';
import { Socks5Session } from './socks5-session.js';

/** Refusing takes a handshake; at most this many refusals run at once, the rest are dropped. */
const MAX_REFUSALS_IN_FLIGHT = 64;
const SNIFF_TIMEOUT_MS = 10_000;

/** One user's sessions and bytes on this listener (a shared device's counters). */
/** A session's flow as it ended, with the session's number on this listener. */
export type ProxyFlowEnd = SessionFlowEnd & { readonly sessionId: number };

export interface UserUsage {
  sessionsActive: number;
  sessionsTotal: number;
  bytesUp: number;
  bytesDown: number;
}

/**
 * One listening port for SOCKS5 and HTTP proxy clients, told apart by the first byte (0x05 is
 * SOCKS5; an ASCII letter starts an HTTP method). Owns every session it accepts.
 */
export class ProxyServer {
  readonly stats: ProxyStats = createProxyStats();
  #server: Server;
  readonly #http: HttpServer;
  readonly #sessions = new Set<ProxySession>();
  readonly #httpSessions = new WeakMap<Duplex, HttpSession>();
  /** Per user, its ended sessions' count and bytes (usageOf adds the live ones). */
  readonly #usage = new Map<string, { sessionsTotal: number; bytesUp: number; bytesDown: number }>();
  /** Who hears each session's flow as it ends (the traffic ledger). */
  readonly #flowEnds: Listeners<ProxyFlowEnd>;
  readonly #ctx: SessionContext;
  /** Who may connect (options.allowFrom). */
  #clients: ClientFilter;
  #refusedWarnedAt = 0;
  readonly #log: Logger;
  #nextId = 1;
  #refusing = 0;
  #closing = false;

  constructor(options: ProxyOptions, egress: EgressSource, logger: Logger, routing: Routing | null = null) {
    this.#log = logger.child({ component: 'proxy' });
    this.#flowEnds = new Listeners(this.#log, 'flow end');
    this.#ctx = {
      options,
      stats: this.stats,
      logger: this.#log,
      queues: new TcpQueues(),
      router: new Router(routing, egress, this.#log),
    };
    // Down bytes are what clients have taken: ended sessions' totals plus the live ones' counts now.
    Object.defineProperty(this.stats, 'bytesDown', {
      enumerable: true,
      get: () => {
        let live = 0;
        for (const s of this.#sessions) live += s.bytesDown;
        return this.stats.closedBytesDown + live;
      },
    });
    this.#clients = new ClientFilter(options.allowFrom);
    this.#server = createServer({ allowHalfOpen: true, pauseOnConnect: true, noDelay: true }, (s) => this.#accept(s));
    this.#http = this.#createHttpServer(options);
  }

  /** Where the proxy listens now (the bound port, not a configured 0); null before listen(). */
  get address(): Endpoint | null {
    const addr = this.#server.address();
    return addr && typeof addr !== 'string' ? { host: addr.address, port: addr.port } : null;
  }

  get sessions(): ReadonlySet<ProxySession> {
    return this.#sessions;
  }

  async listen(): Promise<Endpoint> {
    return this.#bind(this.#server, this.#ctx.options.host, this.#ctx.options.port);
  }

  /** Listens on `host:port` instead of the configured address (a shared listener without IPv6 falls back to IPv4). */
  async listenOn(host: string, port: number): Promise<Endpoint> {
    this.#ctx.options = { ...this.#ctx.options, host, port };
    return this.#bind(this.#server, host, port);
  }

  async #bind(server: Server, host: string, port: number): Promise<Endpoint> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        const why = err.code === 'EADDRINUSE' ? 'address already in use' : err.message;
        reject(new GatehopError(ErrorCodes.LISTEN_FAILED, `cannot listen on ${host}:${port}: ${why}`, { cause: err }));
      };
      server.once('error', onError);
      server.listen({ host, port, backlog: 511 }, () => {
        server.off('error', onError);
        resolve();
      });
    });
    server.on('error', (err) => this.#log.error({ err: err.message }, 'proxy listener error'));
    const addr = server.address();
    if (addr === null || typeof addr === 'string')
      throw new GatehopError(ErrorCodes.LISTEN_FAILED, 'listener has no address');
    return { host: addr.address, port: addr.port };
  }

  /**
   * A reload: session limits and timeouts apply to what happens next. A new address is bound
   * before the old listener closes (a failure to bind keeps the old one); sessions accepted on the
   * old one are not touched and finish as they would have. Resolves with the address listened on.
   */
  async reconfigure(next: Omit<ProxyOptions, 'credentials' | 'pages'>): Promise<Endpoint> {
    const old = this.#ctx.options;
    // Credentials are read once at start (an auth file change needs a restart).
    const options: ProxyOptions = {
      ...next,
      credentials: old.credentials,
      ...(old.pages ? { pages: old.pages } : {}),
    };
    if (options.host !== old.host || options.port !== old.port) {
      const next = createServer({ allowHalfOpen: true, pauseOnConnect: true, noDelay: true }, (s) => this.#accept(s));
      const at = await this.#bind(next, options.host, options.port);
      const previous = this.#server;
      this.#server = next;
      previous.close(() =>
        this.#log.info(
          { event: 'listener-closed', host: old.host, port: old.port },
          'the old proxy listener is closed',
        ),
      );
      this.#log.info(
        { event: 'listener-moved', from: `${old.host}:${old.port}`, to: `${at.host}:${at.port}` },
        'proxy listening on a new address',
      );
    }
    this.#ctx.options = options;
    this.#clients = new ClientFilter(options.allowFrom);
    this.#http.keepAliveTimeout = options.idleTimeoutMs;
    const addr = this.#server.address();
    if (addr === null || typeof addr === 'string')
      throw new GatehopError(ErrorCodes.LISTEN_FAILED, 'listener has no address');
    return { host: addr.address, port: addr.port };
  }

  /** Ends every session of `user` now (a shared device revoked): its connections are reset, not drained. */
  closeSessionsOf(user: string, reason = 'user-revoked'): number {
    let closed = 0;
    for (const s of [...this.#sessions])
      if (s.userName === user) {
        s.cut(reason);
        closed++;
      }
    return closed;
  }

  /** What `user`'s sessions have moved and how many it has had, ended ones included. */
  usageOf(user: string): UserUsage {
    const ended = this.#usage.get(user);
    const usage: UserUsage = {
      sessionsActive: 0,
      sessionsTotal: ended?.sessionsTotal ?? 0,
      bytesUp: ended?.bytesUp ?? 0,
      bytesDown: ended?.bytesDown ?? 0,
    };
    for (const s of this.#sessions)
      if (s.userName === user) {
        usage.sessionsActive++;
        usage.bytesUp += s.bytesUp;
        usage.bytesDown += s.bytesDown;
      }
    return usage;
  }

  /** `fn` hears each session that asked for a flow as it ends, after its bytes are final. Returns an unsubscribe. */
  onFlowEnd(fn: (end: ProxyFlowEnd) => void): () => void {
    return this.#flowEnds.add(fn);
  }

  /** Forgets `user`'s totals (a device removed). */
  forgetUsage(user: string): void {
    this.#usage.delete(user);
  }

  /** Stops accepting and force-closes every session. Idempotent. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const s of [...this.#sessions]) s.forceClose('shutdown');
    if (!this.#server.listening) return;
    await closed;
  }

  #accept(socket: Socket): void {
    if (this.#closing) {
      socket.destroy();
      return;
    }
    // Before a byte is read (the server pauses on connect): a peer allowFrom does not let in is
    // never parsed, whatever it would send.
    if (!this.#clients.allows(socket.remoteAddress)) {
      this.stats.refusedByAddress++;
      socket.resetAndDestroy();
      this.#warnRefused(socket.remoteAddress);
      return;
    }
    const rejected = this.stats.sessionsActive >= this.#ctx.options.maxSessions;
    if (rejected) {
      this.stats.rejected++;
      this.#log.warn(
        { event: 'session-rejected', maxSessions: this.#ctx.options.maxSessions, rejected: this.stats.rejected },
        'too many sessions: refusing a connection',
      );
      if (this.#refusing >= MAX_REFUSALS_IN_FLIGHT) {
        socket.destroy();
        return;
      }
    }
    socket.on('error', () => {}); // until a session owns it
    const sniffTimer = setTimeout(
      () => {
        this.stats.timeouts.handshake++;
        socket.destroy();
      },
      Math.min(SNIFF_TIMEOUT_MS, this.#ctx.options.handshakeTimeoutMs),
    );
    sniffTimer.unref();
    socket.once('close', () => clearTimeout(sniffTimer));
    // Connected and closed without a byte (a port check, a scanner): nothing to wait for.
    const onEmptyEnd = (): void => void socket.destroy();
    socket.once('end', onEmptyEnd);
    socket.once('data', (chunk: Buffer) => {
      clearTimeout(sniffTimer);
      socket.off('end', onEmptyEnd);
      socket.pause();
      this.#dispatch(socket, chunk, rejected);
    });
    socket.resume();
  }

  /** Said at most once a minute, with how many were refused: a scan must not flood the log. */
  #warnRefused(address: string | undefined): void {
    const now = Date.now();
    if (now - this.#refusedWarnedAt < 60_000) return;
    this.#refusedWarnedAt = now;
    this.#log.warn(
      {
        event: 'client-refused',
        from: address,
        refused: this.stats.refusedByAddress,
        allowFrom: this.#ctx.options.allowFrom,
      },
      `refused a connection from ${address}: not from this machine or its networks (proxy.allowFrom: ${this.#ctx.options.allowFrom.join(', ')}); ${this.stats.refusedByAddress} refused so far`,
    );
  }

  #dispatch(socket: Socket, first: Buffer, rejected: boolean): void {
    const b = first[0]!;
    if (b === 0x05) {
      const session = new Socks5Session(this.#nextId++, socket, this.#ctx, rejected, (s) => this.#remove(s, rejected));
      this.#add(session, rejected);
      session.start(first);
      socket.resume();
    } else if ((b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)) {
      const session = new HttpSession(this.#nextId++, socket, this.#ctx, rejected, (s) => this.#remove(s, rejected));
      this.#add(session, rejected);
      this.#httpSessions.set(socket, session);
      socket.unshift(first);
      this.#http.emit('connection', socket);
      socket.resume();
    } else {
      bump(this.stats.malformed, b === 0x04 ? 'socks4-unsupported' : 'unknown-protocol');
      this.#log.debug({ event: 'malformed', firstByte: b }, 'unknown protocol on proxy port');
      socket.destroy();
    }
  }

  #add(session: ProxySession, rejected: boolean): void {
    this.#sessions.add(session);
    if (rejected) {
      this.#refusing++;
      return;
    }
    this.stats.sessionsActive++;
    this.stats.sessionsTotal++;
  }

  #remove(session: ProxySession, rejected: boolean): void {
    if (!this.#sessions.delete(session)) return;
    if (rejected) this.#refusing--;
    else this.stats.sessionsActive--;
    if (session.ended) this.#flowEnds.emit({ sessionId: session.id, ...session.ended });
    const user = session.userName;
    if (user === undefined) return;
    // Users are those the credentials know (a file's, or the devices): the map is as bounded as they are.
    const u = this.#usage.get(user) ?? { sessionsTotal: 0, bytesUp: 0, bytesDown: 0 };
    u.sessionsTotal++;
    u.bytesUp += session.bytesUp;
    u.bytesDown += session.bytesDown;
    this.#usage.set(user, u);
  }

  /**
   * A captured program's TCP connection (core/capture's gateway ended it) to `target`: a session
   * like the port's, with its limits, its rules (IN-TYPE TUN) and its place in the drain list. Over
   * maxSessions it is reset.
   */
  adoptCaptured(stream: ClientConnection, target: { host: string; port: number; byName: boolean }): void {
    if (this.#closing || this.stats.sessionsActive >= this.#ctx.options.maxSessions) {
      if (!this.#closing) this.stats.rejected++;
      stream.destroy();
      return;
    }
    const session = new CaptureSession(this.#nextId++, stream, this.#ctx, false, (s) => this.#remove(s, false));
    this.#add(session, false);
    detach(this.#log, 'capture-session', session.start(target));
  }

  /**
   * The egress side of a captured program's UDP socket: its packets go where the rules send each
   * peer (IN-TYPE TUN), replies to `onReply`. The caller opens and closes it.
   */
  captureUdp(o: {
    src: { ip: string; port: number };
    onReply: (d: UdpDatagram) => void;
    onError: (err: Error) => void;
  }): UdpRelay {
    return new UdpRelay({
      source: this.#ctx.router.sourceFor('TUNNEL'),
      router: this.#ctx.router,
      stats: this.stats,
      log: this.#log,
      flowFacts: () => ({ src: o.src, inType: 'TUN' }),
      onReply: o.onReply,
      onError: o.onError,
    });
  }

  #createHttpServer(options: ProxyOptions): HttpServer {
    const server = createHttpServer({ maxHeaderSize: options.maxHeaderBytes, requestTimeout: 0, headersTimeout: 0 });
    // Our own session timers own every deadline; keep-alive gaps count as idle time.
    server.keepAliveTimeout = options.idleTimeoutMs;
    server.timeout = 0;
    const sessionOf = (socket: Duplex): HttpSession | undefined => this.#httpSessions.get(socket);
    server.on('request', (req, res) => {
      const s = sessionOf(req.socket);
      if (s) detach(this.#log, 'http-session', s.onRequest(req, res));
      else res.destroy();
    });
    server.on('connect', (req, socket: Duplex, head: Buffer) => {
      const s = sessionOf(socket);
      if (s) detach(this.#log, 'http-session', s.onConnect(req, socket, head));
      else socket.destroy();
    });
    server.on('upgrade', (req, socket: Duplex, head: Buffer) => {
      const s = sessionOf(socket);
      if (s) detach(this.#log, 'http-session', s.onUpgrade(req, socket, head));
      else socket.destroy();
    });
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      const s = sessionOf(socket);
      if (s) s.onParseError(err.code);
      else socket.destroy();
    });
    return server;
  }
}
