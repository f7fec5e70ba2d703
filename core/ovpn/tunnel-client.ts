import { EventEmitter } from 'node:events';
import {
  abortReason,
  detach,
  ErrorCodes,
  GatehopError,
  isGatehopError,
  settleFirst,
  type Logger,
} from '../common/index.js';
import { type TrustRule } from '../reach/index.js';
import type { Carrier } from './carrier.js';
import { openCarrier } from './open-carrier.js';
import { framingFor, frame, innerPackets, type Framing } from './compression-framing.js';
import type { PushedConfig } from './control-messages.js';
import { ControlSession } from './control-session.js';
import { controlWrapperFactory, type ControlWrapper } from './control-wrap.js';
import { PING_PAYLOAD, type SealedBatch } from './data-channel.js';
import { demuxRuns } from './packet.js';
import type { OvpnRemote } from './profile.js';
import { isTlsVersionOrCipherRefusal } from './tls-refusal.js';
import { sessionOptionsOf } from './session-options.js';
import { lingerForExitAck, notifyExit } from './exit-notice.js';
import {
  newTunnelClientStats,
  type TunnelClientOptions,
  type TunnelClientStats,
  type TunnelState,
} from './tunnel-client-types.js';

export type { TunnelClientOptions, TunnelState, TunnelStats, TunnelTransportOptions } from './tunnel-client-types.js';

/** The first TLS handshake must finish within this (a silent refusal looks like nothing at all). */
const TLS_HANDSHAKE_MS = 8_000;
const RESET_WAIT_MS = 5_000;

/**
 * An OpenVPN client over TCP or UDP (openvpn-protocol-notes.md §10): the tunnel's lifecycle
 * (attempts, legacy TLS after a refusal, L1 reconnects, leaving), the data path (batches in and
 * out, keepalive) and the one carrier of each attempt. The control channel is the session's
 * (control-session.ts). It speaks to SoftEther (VPN Gate) and to stock OpenVPN 2.6 servers and
 * hands IP packets to its owner through write() and the 'packets' event.
 */
export class TunnelClient extends EventEmitter<{
  state: [TunnelState, string];
  /** IP packets opened together (one read of the carrier), in order. */
  packets: [Buffer[]];
  error: [Error];
  /** After an L1 reconnect; addressChanged means connections on the old address are lost. */
  reconnected: [{ config: PushedConfig; addressChanged: boolean }];
}> {
  readonly stats: TunnelClientStats = newTunnelClientStats();
  #closedByUs = false;
  config: PushedConfig | null = null;
  cipher: string | null = null;
  #state: TunnelState = 'DISCONNECTED';
  readonly #remote: OvpnRemote;
  readonly #log: Logger;
  readonly #wrapperFactory: (() => ControlWrapper) | null;
  /** This attempt's control channel (control-session.ts); a new one per attempt. */
  #session: ControlSession | null = null;
  /** The way to the server for this attempt (carrier.ts): the session above never asks which. */
  #carrier: Carrier | null = null;
  /** IP packets written in this turn, sealed and sent as one batch when it ends. */
  #outbox: Buffer[] = [];
  #outboxScheduled = false;
  /** Bumped by every teardown: a transport that finishes opening after it is dropped. */
  #transportGen = 0;
  /** Aborts the carrier being opened when its attempt is torn down (a SYN to a silent node must not linger). */
  #opening: AbortController | null = null;
  #framing: Framing = 'none';
  /** Set after a node refused modern TLS: TLS 1.0+ and SECLEVEL 0 for this client from then on. */
  #legacyTls = false;
  /** Kept across an L1 reconnect's new session until that one's handshake says again. */
  #trustRule: TrustRule | null = null;
  readonly #tlsHandshakeMs: number;
  #warnedCompressed = false;
  renegotiations = 0;
  #keepalive: NodeJS.Timeout | null = null;
  #lastSent = 0;
  #lastRecv = 0;
  #settle: { resolve: (c: PushedConfig) => void; reject: (e: Error) => void } | null = null;

  constructor(private readonly opts: TunnelClientOptions) {
    super();
    const r = opts.profile.remotes[opts.remoteIndex ?? 0];
    if (!r) throw new GatehopError(ErrorCodes.PROFILE_INVALID, 'profile has no such remote');
    this.#remote = opts.transport?.host ? { ...r, host: opts.transport.host } : r;
    this.#log = opts.logger.child({ component: 'ovpn', remote: `${r.host}:${r.port}/${r.proto}` });
    this.#legacyTls = opts.legacyTls === true;
    this.#tlsHandshakeMs = opts.tlsHandshakeMs ?? TLS_HANDSHAKE_MS;
    this.#wrapperFactory = controlWrapperFactory(opts.profile);
  }

  /** When the last data-channel packet (pings included) arrived from the server; 0 before any. */
  get lastReceivedAt(): number {
    return this.#lastRecv;
  }

  /** Which trust rule accepted the server's certificate (null before the first handshake). */
  get trustRule(): TrustRule | null {
    return this.#session?.trustRule ?? this.#trustRule;
  }

  /** True when the control channel had to fall back to TLS 1.0+/weak ciphers for this server. */
  get legacyTls(): boolean {
    return this.#legacyTls;
  }

  get state(): TunnelState {
    return this.#state;
  }

  get proto(): 'tcp' | 'udp' {
    return this.#remote.proto;
  }

  #setState(s: TunnelState, reason: string): void {
    this.#state = s;
    this.#log.debug({ event: 'tunnel-state', state: s, reason }, `tunnel ${s}`);
    this.emit('state', s, reason);
  }

  /** Opens the tunnel; resolves with the pushed configuration once data can flow. */
  async connect(opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<PushedConfig> {
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    let lastErr: Error | null = null;
    // UDP: a lost server reset is never resent by SoftEther 5.x; start over on a new socket (notes §2.4).
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      opts.signal?.throwIfAborted();
      try {
        return await this.#attempt(
          Math.min(deadline - Date.now(), this.proto === 'udp' ? RESET_WAIT_MS * 6 : deadline - Date.now()),
          opts.signal,
        );
      } catch (err) {
        lastErr = err as Error;
        this.#teardown();
        if (opts.signal?.aborted) throw abortReason(opts.signal, 'tunnel connect');
        if (!this.#legacyTls && isTlsVersionOrCipherRefusal(err)) {
          // Old VPN Gate nodes only speak TLS 1.0 or weak suites (notes §3): try once more with
          // what they offer, and say loudly that this tunnel's control channel is weak.
          this.#legacyTls = true;
          this.#log.warn(
            { event: 'legacy-tls', err: (err as Error).message },
            `${this.#remote.host} refused modern TLS; retrying with TLS 1.0+ and weak ciphers allowed (insecure)`,
          );
          continue;
        }
        if (!(
          err instanceof GatehopError &&
          err.code === ErrorCodes.EGRESS_CONNECT_TIMEOUT &&
          this.proto === 'udp' &&
          !this.#session?.heardServer
        ))
          break;
      }
    }
    this.#setState('DISCONNECTED', lastErr?.message ?? 'connect timed out');
    throw lastErr ?? new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, 'tunnel connect timed out');
  }

  #attempt(timeoutMs: number, signal?: AbortSignal): Promise<PushedConfig> {
    this.#reset();
    this.#setState('CONNECTING', 'opening transport');
    return settleFirst<PushedConfig>(
      {
        signal,
        what: 'tunnel connect',
        deadline: {
          ms: timeoutMs,
          error: () =>
            new GatehopError(
              ErrorCodes.EGRESS_CONNECT_TIMEOUT,
              `tunnel to ${this.#remote.host}:${this.#remote.port} not up within ${timeoutMs} ms (state ${this.#state})`,
            ),
        },
      },
      (settle) => {
        // Over UDP a server that never answers the reset is given up on sooner than the whole deadline.
        const resetTimer =
          this.proto === 'udp'
            ? setTimeout(() => {
                if (!this.#session?.heardServer)
                  settle.reject(new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, 'no server reset within 5 s'));
              }, RESET_WAIT_MS)
            : null;
        this.#settle = settle;
        this.#openTransport();
        return () => {
          if (resetTimer) clearTimeout(resetTimer);
          this.#settle = null;
        };
      },
    );
  }

  /** A new control session for this attempt (new session ids, new key states). */
  #reset(): void {
    this.#trustRule = this.#session?.trustRule ?? this.#trustRule;
    this.#session?.close();
    this.#session = new ControlSession(
      sessionOptionsOf(this.opts, {
        proto: this.proto,
        remoteHost: this.#remote.host,
        wrapper: this.#wrapperFactory?.() ?? null,
        legacyTls: this.#legacyTls,
        tlsHandshakeMs: this.#tlsHandshakeMs,
        logger: this.#log,
      }),
      {
        sendRaw: (packet) => this.#sendRaw(packet),
        state: (state, reason) => this.#setState(state, reason),
        fatal: (err, opts) => this.#fatal(err, opts),
        configured: (config) => this.#configured(config),
        renegotiated: (keyId) => {
          this.renegotiations++;
          this.#log.info(
            { event: 'renegotiated', keyId, renegotiations: this.renegotiations },
            'new data channel keys in use',
          );
        },
        malformed: () => void this.stats.malformed++,
      },
    );
  }

  #openTransport(): void {
    const gen = this.#transportGen;
    const current = (): boolean => gen === this.#transportGen && !this.#closedByUs;
    const { host, port, proto } = this.#remote;
    const opening = new AbortController();
    this.#opening = opening;
    openCarrier({
      host,
      port,
      proto,
      upstream: this.opts.transport?.upstream ?? null,
      logger: this.#log,
      signal: opening.signal,
      sink: {
        packets: (packets) => current() && this.#onPackets(packets),
        failed: (err) => current() && this.#fatal(err),
        malformed: () => void this.stats.malformed++,
      },
    }).then(
      (carrier) => {
        if (this.#opening === opening) this.#opening = null;
        if (!current()) return carrier.close();
        this.#carrier = carrier;
        this.#start();
      },
      (err: unknown) => {
        if (current())
          this.#fatal(
            isGatehopError(err)
              ? err
              : new GatehopError(ErrorCodes.EGRESS_FAILED, `${host}:${port}: ${(err as Error).message}`, {
                  cause: err,
                }),
          );
      },
    );
  }

  #sendRaw(packet: Buffer): void {
    this.stats.bytesOut += packet.length;
    if (!this.#carrier?.send(packet)) this.stats.droppedOut++;
  }

  /** A sealed batch onto the carrier: one write over TCP, one sendmmsg natively over UDP. */
  #sendSealed(sealed: SealedBatch): void {
    const carrier = this.#carrier;
    const { sent, bytes } = carrier ? carrier.sendBatch(sealed) : { sent: 0, bytes: 0 };
    this.stats.droppedOut += sealed.count - sent;
    this.stats.bytesOut += bytes;
  }

  #start(): void {
    this.#session?.start();
  }

  /** Packets in arrival order (packet.ts's demuxRuns): data by runs of one key, control one by one. */
  #onPackets(packets: Buffer[]): void {
    const gen = this.#transportGen;
    demuxRuns(packets, {
      live: () => this.#transportGen === gen, // a packet before may have torn the transport down
      counted: (packet) => void (this.stats.bytesIn += packet.length),
      data: (run) => this.#onData(run),
      control: (packet) => this.#session?.onControl(packet),
    });
  }

  /** The session is configured: data may flow. */
  #configured(config: PushedConfig): void {
    const p = this.opts.profile;
    this.config = config;
    this.cipher = config.cipher;
    // Pushed framing wins; the profile's own directive counts only for a stock server (SoftEther
    // pushes no peer-id and never frames, whatever an old profile says).
    this.#framing = framingFor(config.compression ?? (config.peerId !== null ? p.compression : null));
    if (this.#framing !== 'none')
      this.#log.info(
        { event: 'compression-framing', framing: this.#framing },
        `data payloads framed (${this.#framing}); compressed ones are dropped`,
      );
    this.#lastRecv = this.#lastSent = Date.now();
    this.#startKeepalive();
    this.#setState('CONNECTED', `cipher ${config.cipher}${config.tlsEkm ? ', keys by TLS-EKM' : ''}`);
    this.#log.info(
      { event: 'tunnel-up', address: config.address, cipher: config.cipher, peerId: config.peerId },
      'tunnel up',
    );
    this.#settle?.resolve(config);
  }

  // ---- data ----

  /** One key's data packets, opened as one batch. */
  #onData(packets: Buffer[]): void {
    const data = this.#session?.dataFor(packets[0]![0]! & 7);
    if (!data) {
      this.stats.malformed += packets.length;
      return;
    }
    const { decryptFailures, replays } = data.stats;
    const payloads = data.openBatch(packets);
    // Only dropped packets change these counters: no bookkeeping per packet.
    this.stats.decryptFailures += data.stats.decryptFailures - decryptFailures;
    this.stats.replays += data.stats.replays - replays;
    const { inners, heard, compressed } = innerPackets(payloads, this.#framing);
    if (compressed > 0) {
      this.stats.compressedDropped += compressed;
      if (!this.#warnedCompressed) {
        this.#warnedCompressed = true;
        this.#log.warn(
          { event: 'compressed-payload', framing: this.#framing },
          'the server sent a compressed payload; Gatehop does not decompress (dropped)',
        );
      }
    }
    if (heard) this.#lastRecv = Date.now();
    if (inners.length === 0) return;
    this.stats.packetsIn += inners.length;
    this.emit('packets', inners);
  }

  /**
   * Sends one IP packet into the tunnel; false when not connected (the packet is dropped). Packets
   * written in one turn of the event loop are sealed and sent together when it ends (a microtask).
   */
  write(ip: Buffer): boolean {
    if (!this.#session?.sendingData || this.#state !== 'CONNECTED') {
      this.stats.droppedOut++;
      return false;
    }
    this.stats.packetsOut++;
    this.#lastSent = Date.now();
    this.#outbox.push(this.#framing === 'none' ? ip : frame(this.#framing, ip));
    if (!this.#outboxScheduled) {
      this.#outboxScheduled = true;
      queueMicrotask(() => this.#flushOutbox());
    }
    return true;
  }

  #flushOutbox(): void {
    this.#outboxScheduled = false;
    const batch = this.#outbox;
    this.#outbox = [];
    const data = this.#session?.sendingData;
    if (!data || this.#state !== 'CONNECTED') {
      this.stats.droppedOut += batch.length;
      return;
    }
    this.#sendSealed(data.sealBatch(batch, this.#carrier?.framed ?? false));
  }

  #startKeepalive(): void {
    const pingMs = Math.min(this.config!.pingS ?? 10, 3) * 1000;
    const restartMs = (this.config!.pingRestartS ?? 60) * 1000;
    // Wall time, across a sleep too: the server's own ping-restart ran meanwhile and has dropped a
    // client silent that long, so reconnecting at once on resume is right (the soak measured it).
    this.#keepalive = setInterval(() => {
      const now = Date.now();
      if (now - this.#lastRecv > restartMs) {
        this.#fatal(
          new GatehopError(
            ErrorCodes.EGRESS_HOST_UNREACHABLE,
            `nothing from the server for ${restartMs / 1000} s (ping-restart)`,
          ),
        );
        return;
      }
      this.#session?.checkRekey(now);
      const data = this.#session?.sendingData;
      if (now - this.#lastSent >= pingMs && data) {
        this.#lastSent = now;
        this.#sendRaw(data.encrypt(frame(this.#framing, PING_PAYLOAD)));
      }
    }, 1000);
    this.#keepalive.unref();
  }

  // ---- teardown ----

  /** The connection is lost: reconnect (L1) when it was up, unless the server itself is the fault. */
  #fatal(err: Error, opts: { reconnect?: boolean } = {}): void {
    if (this.#state === 'DISCONNECTED' || this.#state === 'RECONNECTING') return;
    if (this.#settle) {
      this.#settle.reject(err);
      return;
    }
    this.#teardown();
    const forMs = this.opts.reconnectForMs ?? 30_000;
    if (this.#state === 'CONNECTED' && forMs > 0 && !this.#closedByUs && opts.reconnect !== false) {
      detach(this.#log, 'tunnel-reconnect', this.#reconnect(err, forMs));
      return;
    }
    this.#down(err);
  }

  #down(err: Error): void {
    this.#log.info({ event: 'tunnel-down', err: err.message }, 'tunnel down');
    this.#setState('DISCONNECTED', err.message);
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }

  /** L1: the same server again, with new session ids; the 'packets' interface never changes. */
  async #reconnect(cause: Error, forMs: number): Promise<void> {
    const previous = this.config;
    this.#setState('RECONNECTING', cause.message);
    this.#log.info(
      { event: 'tunnel-reconnecting', err: cause.message },
      'tunnel lost; reconnecting to the same server',
    );
    const deadline = Date.now() + forMs;
    let last: Error = cause;
    while (Date.now() < deadline && !this.#closedByUs) {
      try {
        const config = await this.#attempt(Math.max(1000, Math.min(10_000, deadline - Date.now())));
        this.stats.reconnects++;
        const addressChanged = previous?.address !== config.address;
        this.#log.info({ event: 'tunnel-reconnected', address: config.address, addressChanged }, 'tunnel reconnected');
        this.emit('reconnected', { config, addressChanged });
        return;
      } catch (err) {
        last = err as Error;
        this.#teardown();
        if (this.#closedByUs) return;
        await new Promise((r) => setTimeout(r, 500).unref());
      }
    }
    if (!this.#closedByUs)
      this.#down(
        new GatehopError(
          ErrorCodes.EGRESS_HOST_UNREACHABLE,
          `reconnect failed for ${Math.round(forMs / 1000)} s: ${last.message}`,
        ),
      );
  }

  #teardown(): void {
    this.#transportGen++;
    this.#opening?.abort(new GatehopError(ErrorCodes.ABORTED, 'the attempt was given up'));
    this.#opening = null;
    this.#session?.close();
    if (this.#keepalive) clearInterval(this.#keepalive);
    this.#keepalive = null;
    this.#carrier?.close();
    this.#carrier = null;
  }

  close(): void {
    this.#closedByUs = true;
    this.#settle?.reject(new GatehopError(ErrorCodes.EGRESS_CLOSED, 'tunnel closed'));
    if (this.#state === 'DISCONNECTED' && !this.#carrier) return;
    const exit =
      this.#state === 'CONNECTED' && this.config && this.#session
        ? notifyExit({
            config: this.config,
            session: this.#session,
            proto: this.proto,
            framing: this.#framing,
            sendRaw: (p) => this.#sendRaw(p),
          })
        : null;
    if (exit?.via) this.stats.exitNotified = exit.via;
    this.#setState('DISCONNECTED', 'closed by us');
    if (exit?.wait && this.#session) lingerForExitAck(this.#session, exit.wait.msgIdBefore, () => this.#teardown());
    else this.#teardown();
  }
}
