import type { Socket } from 'node:net';
import { isGatehopError, detach } from '../common/index.js';
import type { InboundType } from '../rules/index.js';
import { ProxySession, type SessionContext } from './session.js';
import {
  Command,
  encodeAuthResult,
  encodeMethodSelection,
  encodeReply,
  Method,
  parseGreeting,
  parseRequest,
  parseUserPass,
  Reply,
  type ReplyCode,
  type SocksRequest,
} from './socks5-codec.js';
import { socksReplyFor } from './reply-codes.js';
import { bump } from './proxy-stats.js';
import { UdpAssociation } from './udp-association.js';

/** Greeting (≤ 257) + auth (≤ 513) + request (≤ 262) fit easily; more before the relay is garbage. */
const MAX_HANDSHAKE_BYTES = 2048;

type Phase = 'greeting' | 'auth' | 'checking' | 'request' | 'connecting' | 'relaying' | 'udp' | 'done';

/** One SOCKS5 client connection (RFC 1928 / RFC 1929). */
export class Socks5Session extends ProxySession<Socket> {
  readonly kind = 'socks5' as const;
  protected inType: InboundType = 'SOCKS5';
  #phase: Phase = 'greeting';
  #buf: Buffer = Buffer.alloc(0);
  #udp: UdpAssociation | null = null;
  readonly #onData = (chunk: Buffer): void => this.#receive(chunk);

  constructor(id: number, socket: Socket, ctx: SessionContext, rejected: boolean, onClosed: (s: ProxySession) => void) {
    super(id, socket, ctx, rejected, onClosed);
    this.countDownFromRelay();
    socket.on('data', this.#onData);
    // EOF before the request is complete: the client can send no more, so the handshake can never
    // finish. Close now rather than hold a session slot until the handshake timer (10 s). 'end'
    // comes only after every byte was read, and the handshake steps run synchronously on them.
    socket.once('end', () => {
      if (this.#inHandshake()) {
        this.countMalformed('eof-in-handshake');
        this.forceClose('client-closed');
      }
    });
  }

  /** Called by the server with the bytes it read while sniffing the protocol. */
  start(firstChunk: Buffer): void {
    this.#receive(firstChunk);
  }

  protected override onHandshakeTimeout(): void {
    if (this.#phase === 'request') this.#refuse(Reply.TTL_EXPIRED, 'handshake-timeout');
    else super.onHandshakeTimeout();
  }

  #receive(chunk: Buffer): void {
    if (this.closed || this.#phase === 'done') return;
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    // Each step consumes what it parsed; stop when a step needs more bytes or hands the socket on.
    for (;;) {
      const before: Phase = this.#phase;
      if (before === 'greeting') this.#onGreeting();
      else if (before === 'auth') this.#onAuth();
      else if (before === 'request') this.#onRequest();
      else if (before === 'udp') {
        // The control connection carries nothing after UDP ASSOCIATE; anything sent is discarded.
        this.#buf = Buffer.alloc(0);
      }
      if (this.#phase === before || this.closed) break;
    }
    // Every handshake message is far shorter than this; more unparsed bytes mean garbage. (Bytes
    // after a complete CONNECT request are the client's early payload, bounded by one socket read.)
    if (this.#inHandshake() && !this.closed && this.#buf.length > MAX_HANDSHAKE_BYTES) {
      this.countMalformed('handshake-too-long');
      this.forceClose('malformed');
    }
  }

  #inHandshake(): boolean {
    const p = this.#phase;
    return p === 'greeting' || p === 'auth' || p === 'checking' || p === 'request';
  }

  #onGreeting(): void {
    const parsed = parseGreeting(this.#buf);
    if (parsed.kind === 'incomplete') return;
    if (parsed.kind === 'malformed') {
      this.countMalformed(parsed.reason);
      if (parsed.reason === 'no-methods')
        this.#writeAndClose(encodeMethodSelection(Method.NONE_ACCEPTABLE), 'no-methods');
      else this.forceClose('malformed');
      return;
    }
    this.#buf = this.#buf.subarray(parsed.consumed);
    const methods = parsed.value.methods;
    const creds = this.ctx.options.credentials;
    const wantAuth = creds !== null;
    // A device admitted by its address (an enrolled phone) needs no password, but one offered is checked.
    const admitted = creds?.admitted?.(this.socket.remoteAddress ?? '') ?? null;
    if (wantAuth && methods.includes(Method.USER_PASS)) {
      this.socket.write(encodeMethodSelection(Method.USER_PASS));
      this.#phase = 'auth';
    } else if (admitted !== null && methods.includes(Method.NO_AUTH)) {
      this.user = admitted;
      this.socket.write(encodeMethodSelection(Method.NO_AUTH));
      this.#phase = 'request';
    } else if (!wantAuth && methods.includes(Method.NO_AUTH)) {
      this.socket.write(encodeMethodSelection(Method.NO_AUTH));
      this.#phase = 'request';
    } else {
      bump(this.ctx.stats.malformed, 'no-acceptable-method');
      this.#writeAndClose(encodeMethodSelection(Method.NONE_ACCEPTABLE), 'no-acceptable-method');
    }
  }

  #onAuth(): void {
    const parsed = parseUserPass(this.#buf);
    if (parsed.kind === 'incomplete') return;
    if (parsed.kind === 'malformed') {
      this.countMalformed(parsed.reason);
      this.#writeAndClose(encodeAuthResult(false), 'malformed');
      return;
    }
    this.#buf = this.#buf.subarray(parsed.consumed);
    const creds = this.ctx.options.credentials;
    if (!creds) {
      this.#writeAndClose(encodeAuthResult(false), 'auth-failed');
      return;
    }
    // scrypt runs off the thread and a backed-off client waits: bytes that arrive meanwhile are kept.
    this.#phase = 'checking';
    const { username, password } = parsed.value;
    creds
      .verify(username, password, this.socket.remoteAddress ?? '', () => this.closed)
      .then(
        (ok) => this.#authChecked(ok, username),
        (err: unknown) => {
          this.log.error({ event: 'auth-error', err: (err as Error).message }, 'verifying a password failed');
          this.#authChecked(false, username);
        },
      );
  }

  #authChecked(ok: boolean, username: string): void {
    if (this.closed) return;
    if (!ok) {
      this.ctx.stats.authFailures++;
      this.log.info({ event: 'auth-failed', user: username }, 'SOCKS5 authentication failed');
      this.#writeAndClose(encodeAuthResult(false), 'auth-failed');
      return;
    }
    this.user = username;
    this.socket.write(encodeAuthResult(true));
    this.#phase = 'request';
    // The request may have come with the credentials: go on with what is buffered.
    if (this.#buf.length > 0) this.#receive(Buffer.alloc(0));
  }

  #onRequest(): void {
    const parsed = parseRequest(this.#buf);
    if (parsed.kind === 'incomplete') return;
    if (parsed.kind === 'malformed') {
      this.countMalformed(parsed.reason);
      if (parsed.reply !== undefined) this.#refuse(parsed.reply, 'malformed');
      else this.forceClose('malformed');
      return;
    }
    this.#buf = this.#buf.subarray(parsed.consumed);
    const request = parsed.value;
    if (this.rejected) {
      this.#refuse(Reply.GENERAL_FAILURE, 'over-capacity');
      return;
    }
    if (request.command === Command.CONNECT) {
      this.#phase = 'connecting';
      detach(this.log, 'socks5-connect', this.#connect(request));
    } else if (request.command === Command.UDP_ASSOCIATE) {
      this.#phase = 'udp';
      detach(this.log, 'socks5-associate', this.#associate(request));
    } else {
      this.#refuse(Reply.COMMAND_NOT_SUPPORTED, 'bind-not-supported');
    }
  }

  async #connect(request: SocksRequest): Promise<void> {
    // Nothing more is read until the upstream exists; bytes a client sends early stay in the
    // kernel buffer (backpressure), and what we already read goes on first.
    this.socket.off('data', this.#onData);
    this.socket.pause();
    const early = this.#buf;
    this.#buf = Buffer.alloc(0);
    const { host, port } = request.target;
    await this.openFlow(
      { client: this.socket, host, port, named: request.target.type === 'domain', early, carries: 'bytes' },
      {
        connected: (conn) => {
          this.#phase = 'relaying';
          this.socket.write(encodeReply(Reply.SUCCEEDED, conn?.localAddress ?? '0.0.0.0', conn?.localPort ?? 0));
        },
        refused: (why) => {
          // RFC 1928's 0x02, "connection not allowed by ruleset": what a rule that refuses is.
          if (why.kind === 'rule') return this.#refuse(Reply.NOT_ALLOWED, 'rule-reject');
          if (why.kind === 'https-only') return this.#refuse(Reply.NOT_ALLOWED, 'https-only');
          this.log.debug(
            { event: 'connect-failed', target: `${host}:${port}`, err: why.error.message },
            'connect failed',
          );
          this.#refuse(
            socksReplyFor(isGatehopError(why.error) ? why.error.code : undefined),
            'connect-failed',
            why.error,
          );
        },
      },
    );
  }

  async #associate(request: SocksRequest): Promise<void> {
    this.handshakeDone();
    const clientAddress = this.socket.remoteAddress ?? '';
    const bindHost = this.socket.localAddress ?? '127.0.0.1';
    try {
      const udp = new UdpAssociation({
        source: this.ctx.router.sourceFor('TUNNEL'),
        router: this.ctx.router,
        clientAddress,
        // RFC 1928 §7: DST.ADDR/DST.PORT, when not zero, name where the client will send from.
        clientPort: request.target.port,
        bindHost,
        stats: this.ctx.stats,
        log: this.log,
        onActivity: () => this.touch(),
        onError: (err) => this.forceClose('udp-error', err),
        flowFacts: {
          ...(this.socket.localPort !== undefined ? { inPort: this.socket.localPort } : {}),
          inType: 'SOCKS5' as const,
          ...(this.user !== undefined ? { inUser: this.user } : {}),
        },
      });
      this.#udp = udp;
      const bound = await udp.open();
      if (this.closed) return;
      this.socket.write(encodeReply(Reply.SUCCEEDED, bound.address, bound.port));
      this.touch();
      // The association lives as long as its TCP control connection (RFC 1928 §7).
      this.socket.once('end', () => this.forceClose('udp-control-closed'));
    } catch (err) {
      if (this.closed) return;
      this.#refuse(Reply.GENERAL_FAILURE, 'udp-bind-failed', err as Error);
    }
  }

  protected override onClose(): void {
    this.#phase = 'done';
    this.#udp?.close();
    this.#udp = null;
  }

  #refuse(reply: ReplyCode, reason: string, err?: Error): void {
    bump(this.ctx.stats.errorReplies, `0x${reply.toString(16).padStart(2, '0')}`);
    this.#writeAndClose(encodeReply(reply), reason, err);
  }

  /** Sends a final message, then closes once it is flushed (or at once if the client is gone). */
  #writeAndClose(bytes: Buffer, reason: string, err?: Error): void {
    this.#phase = 'done';
    this.handshakeDone();
    this.socket.off('data', this.#onData);
    if (this.socket.writable) this.socket.end(bytes, () => this.forceClose(reason, err));
    else this.forceClose(reason, err);
    // A client that never reads must not keep the session: give the flush a short, owned deadline.
    const flushTimer = setTimeout(() => this.forceClose(reason, err), 2_000);
    flushTimer.unref();
    this.socket.once('close', () => clearTimeout(flushTimer));
  }
}
