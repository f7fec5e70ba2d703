import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import {
  abortReason,
  ErrorCodes,
  GatehopError,
  isGatehopError,
  type Logger,
  type UpstreamProxy,
  detach,
} from '../common/index.js';
import {
  clientKeyMethod2,
  optionsString,
  optionValue,
  parsePushOptions,
  parseServerKeyMethod2,
  type PushedConfig,
} from './control-messages.js';
import { ControlDuplex, KeyState } from './key-state.js';
import type { ControlMessage } from './reliable.js';
import { DataChannel, isSupportedCipher, PING_PAYLOAD, SUPPORTED_CIPHERS, type SealedBatch } from './data-channel.js';
import { openvpnPrfKeys, sliceKey2 } from './keys.js';
import { decodeControl, encodeControl, MAX_ACKS, Op } from './packet.js';
import { openCarrier, type Carrier } from './carrier.js';
import { parseStaticKey, tlsAuthWrapper, tlsCryptWrapper, type ControlWrapper } from './control-wrap.js';
import type { OvpnProfile, OvpnRemote } from './profile.js';
import { framingFor, frame, unframe, type Framing } from './compression-framing.js';
import { checkServerCertificate } from './server-cert.js';

export type TunnelState = 'CONNECTING' | 'WAIT' | 'AUTH' | 'GET_CONFIG' | 'CONNECTED' | 'RECONNECTING' | 'DISCONNECTED';

/**
 * The server refused our TLS: OpenSSL's answers for no shared version or cipher suite, or a key too
 * weak; or TLS_HELLO_UNANSWERED, a server that acknowledged our ClientHello at the OpenVPN layer and
 * answered nothing (an OpenVPN server refuses a version it does not speak so: its alert never
 * leaves it). Only these turn on legacy TLS. Silence never does (#34): a handshake that the server
 * never acknowledged was lost on the way, and a filter that drops it must not make us offer TLS 1.0
 * with SECLEVEL 0.
 */
const TLS_REFUSALS =
  /TLS_HELLO_UNANSWERED|UNSUPPORTED_PROTOCOL|WRONG_VERSION_NUMBER|NO_PROTOCOLS_AVAILABLE|PROTOCOL_VERSION|HANDSHAKE_FAILURE|NO_SHARED_CIPHER|NO_CIPHERS_AVAILABLE|KEY_TOO_SMALL|MD_TOO_WEAK|INSUFFICIENT_SECURITY/;

function isTlsVersionOrCipherRefusal(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' && TLS_REFUSALS.test(cause.code);
}

export interface TunnelClientOptions {
  profile: OvpnProfile;
  logger: Logger;
  /** For profiles with auth-user-pass. */
  credentials?: { username: string; password: string };
  remoteIndex?: number;
  /**
   * L1 self-healing: after an established tunnel loses its transport or hits ping-restart, reconnect
   * to the same server for this long (fresh session ids, same packet interface). 0 turns it off.
   */
  reconnectForMs?: number;
  /** How to reach the server when not straight at the profile's remote. */
  transport?: TunnelTransportOptions;
  /**
   * Renegotiations the server may start in any 60 s (default 6). Each costs a TLS handshake here;
   * a server past this is dropped (GH_ERR_OVPN_PROTOCOL): OpenVPN's default is one an hour, VPN
   * Gate's servers one every few hours.
   */
  maxServerRenegotiationsPerMinute?: number;
  /**
   * Start on legacy TLS (TLS 1.0+, SECLEVEL 0): this node refused modern TLS before and that was
   * remembered. Without it, legacy TLS follows only a refusal in this client's own handshake.
   */
  legacyTls?: boolean;
  /** How long a TLS handshake may take before it counts as unanswered (default 8 s; tests shorten it). */
  tlsHandshakeMs?: number;
}

export interface TunnelTransportOptions {
  /** Connect to this host instead of the profile's (a node's DDNS name, `vpngate.connectBy: hostname`). */
  host?: string;
  /**
   * Through the user's proxy, as OpenVPN's `socks-proxy`/`http-proxy` do: TCP by CONNECT; UDP by
   * the SOCKS5 proxy's UDP relay (UDP ASSOCIATE), which an HTTP proxy does not have.
   */
  upstream?: UpstreamProxy | null;
}

export interface TunnelStats {
  bytesIn: number;
  bytesOut: number;
  packetsIn: number;
  packetsOut: number;
  decryptFailures: number;
  replays: number;
  droppedOut: number;
  malformed: number;
}

const CONTROL_PAYLOAD_MAX = 1100;
const PUSH_REQUEST_EVERY_MS = 3_000;
/** The first TLS handshake must finish within this (a silent refusal looks like nothing at all). */
const TLS_HANDSHAKE_MS = 8_000;
/** How long a closing tunnel waits at most for the server to acknowledge our EXIT message. */
const EXIT_LINGER_MS = 2_000;
/** OCC magic + opcode 6 (EXIT), notes §6.5. */
const OCC_EXIT = Buffer.from('287f346bd4ef7a812d56b8d3afc5459c06', 'hex');
const RESET_WAIT_MS = 5_000;
/** OpenVPN's client default; a profile's `reneg-sec` overrides it, 0 turns our own rekeys off. */
const DEFAULT_RENEG_S = 3600;
const DEFAULT_MAX_SERVER_RENEG_PER_MINUTE = 6;
/** A renegotiation not finished by then is abandoned and the current key kept (OpenVPN's hand-window). */
const HAND_WINDOW_MS = 60_000;
/** Rekey long before a data packet id could wrap (notes §7.2). */
const PACKET_ID_REKEY = 0xff000000;
const MAX_PLAINTEXT = 16 * 1024;

/**
 * An OpenVPN client session over TCP or UDP (key_id 0; openvpn-protocol-notes.md §10). It speaks
 * to SoftEther (VPN Gate) and to stock OpenVPN 2.6 servers and hands IP packets to its owner
 * through write() and the 'packets' event.
 */
export class TunnelClient extends EventEmitter<{
  state: [TunnelState, string];
  /** IP packets opened together (one read of the carrier), in order. */
  packets: [Buffer[]];
  error: [Error];
  /** After an L1 reconnect; addressChanged means connections on the old address are lost. */
  reconnected: [{ config: PushedConfig; addressChanged: boolean }];
}> {
  readonly stats: TunnelStats & {
    reconnects: number;
    exitNotified: 'control' | 'occ' | null;
    compressedDropped: number;
  } = {
    bytesIn: 0,
    bytesOut: 0,
    packetsIn: 0,
    packetsOut: 0,
    decryptFailures: 0,
    replays: 0,
    droppedOut: 0,
    malformed: 0,
    reconnects: 0,
    exitNotified: null,
    compressedDropped: 0,
  };
  #closedByUs = false;
  config: PushedConfig | null = null;
  cipher: string | null = null;
  #state: TunnelState = 'DISCONNECTED';
  readonly #remote: OvpnRemote;
  readonly #log: Logger;
  readonly #wrapperFactory: (() => ControlWrapper) | null;
  #wrapper: ControlWrapper | null = null;
  /** The way to the server for this attempt (carrier.ts): the session above never asks which. */
  #carrier: Carrier | null = null;
  /** IP packets written in this turn, sealed and sent as one batch when it ends. */
  #outbox: Buffer[] = [];
  #outboxScheduled = false;
  /** Bumped by every teardown: a transport that finishes opening after it is dropped. */
  #transportGen = 0;
  #localSid = randomBytes(8);
  #remoteSid: Buffer | null = null;
  /** Key states by key_id; #primary sends data, older ones still decrypt (notes §7). */
  readonly #keys = new Map<number, KeyState>();
  #primary: KeyState;
  #ackFlush: NodeJS.Immediate | null = null;
  #pushTimer: NodeJS.Timeout | null = null;
  #pushParts: ReturnType<typeof parsePushOptions> | null = null;
  /** Cipher, auth and derivation fixed on key 0 and reused for every renegotiated key. */
  #negotiated: { cipher: string; tlsEkm: boolean; peerId: number | null } | null = null;
  #framing: Framing = 'none';
  /** Set after a node refused modern TLS: TLS 1.0+ and SECLEVEL 0 for this client from then on. */
  #legacyTls = false;
  readonly #tlsHandshakeMs: number;
  #warnedCompressed = false;
  renegotiations = 0;
  /** When the server started its recent renegotiations (the last minute's, at most the cap + 1). */
  readonly #serverRenegotiations: number[] = [];
  /** When we start the next renegotiation ourselves; the one in progress, if any. */
  #rekeyAt = Number.POSITIVE_INFINITY;
  #rekeying: { key: KeyState; since: number } | null = null;
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
    this.#primary = this.#newKey(0);
    this.#legacyTls = opts.legacyTls === true;
    this.#tlsHandshakeMs = opts.tlsHandshakeMs ?? TLS_HANDSHAKE_MS;
    const p = opts.profile;
    if (p.tlsCrypt) {
      const key = parseStaticKey(p.tlsCrypt);
      this.#wrapperFactory = () => tlsCryptWrapper(key);
    } else if (p.tlsAuth) {
      const key = parseStaticKey(p.tlsAuth);
      this.#wrapperFactory = () => tlsAuthWrapper(key, p.keyDirection, p.auth);
    } else {
      this.#wrapperFactory = null;
    }
  }

  /** When the last data-channel packet (pings included) arrived from the server; 0 before any. */
  get lastReceivedAt(): number {
    return this.#lastRecv;
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
          !this.#remoteSid
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
    return new Promise<PushedConfig>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          fail(
            new GatehopError(
              ErrorCodes.EGRESS_CONNECT_TIMEOUT,
              `tunnel to ${this.#remote.host}:${this.#remote.port} not up within ${timeoutMs} ms (state ${this.#state})`,
            ),
          ),
        timeoutMs,
      );
      const resetTimer =
        this.proto === 'udp'
          ? setTimeout(() => {
              if (!this.#remoteSid)
                fail(new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, 'no server reset within 5 s'));
            }, RESET_WAIT_MS)
          : null;
      const onAbort = (): void => fail(abortReason(signal!, 'tunnel connect'));
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = (): void => {
        clearTimeout(timer);
        if (resetTimer) clearTimeout(resetTimer);
        signal?.removeEventListener('abort', onAbort);
        this.#settle = null;
      };
      const fail = (e: Error): void => {
        done();
        reject(e);
      };
      this.#settle = {
        resolve: (c) => {
          done();
          resolve(c);
        },
        reject: fail,
      };
      this.#openTransport();
    });
  }

  #reset(): void {
    this.#wrapper = this.#wrapperFactory?.() ?? null;
    this.#localSid = randomBytes(8);
    this.#remoteSid = null;
    for (const k of this.#keys.values()) k.close();
    this.#keys.clear();
    this.#primary = this.#newKey(0);
    this.#keys.set(0, this.#primary);
    this.#pushParts = null;
    this.#negotiated = null;
  }

  #openTransport(): void {
    const gen = this.#transportGen;
    const current = (): boolean => gen === this.#transportGen && !this.#closedByUs;
    const { host, port, proto } = this.#remote;
    openCarrier({
      host,
      port,
      proto,
      upstream: this.opts.transport?.upstream ?? null,
      logger: this.#log,
      sink: {
        packets: (packets) => current() && this.#onPackets(packets),
        failed: (err) => current() && this.#fatal(err),
        malformed: () => void this.stats.malformed++,
      },
    }).then(
      (carrier) => {
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

  #sendControlRaw(plain: Buffer): void {
    this.#sendRaw(this.#wrapper ? this.#wrapper.wrap(plain) : plain);
  }

  #start(): void {
    this.#setState('WAIT', 'sending hard reset');
    this.#primary.rel.send(Op.CONTROL_HARD_RESET_CLIENT_V2, Buffer.alloc(0));
  }

  // ---- reliability layer (per key_id, reliable.ts) ----

  #newKey(keyId: number): KeyState {
    const k: KeyState = new KeyState(keyId, {
      // UDP to SoftEther: stop-and-wait (it has no reorder buffer); TCP: a window is fine.
      sendWindow: this.proto === 'udp' ? 1 : 8,
      transmit: (m) => this.#transmit(k, m),
      // Never resend the hard reset once the server answered (a duplicate wipes key 0 on Stable).
      mayRetransmit: (m) => !(m.opcode === Op.CONTROL_HARD_RESET_CLIENT_V2 && this.#remoteSid),
    });
    return k;
  }

  #transmit(k: KeyState, m: ControlMessage): void {
    const acks = this.#remoteSid ? k.rel.takeAcks(MAX_ACKS) : [];
    this.#sendControlRaw(
      encodeControl({
        opcode: m.opcode,
        keyId: k.keyId,
        sessionId: this.#localSid,
        acks,
        peerSessionId: this.#remoteSid,
        messageId: m.msgId,
        payload: m.payload,
      }),
    );
  }

  /** Acks go out together once per event-loop turn (piggybacked on a message when one is sent). */
  #scheduleAcks(): void {
    this.#ackFlush ??= setImmediate(() => {
      this.#ackFlush = null;
      if (!this.#remoteSid) return;
      for (const key of this.#keys.values()) {
        for (let acks = key.rel.takeAcks(MAX_ACKS); acks.length > 0; acks = key.rel.takeAcks(MAX_ACKS)) {
          this.#sendControlRaw(
            encodeControl({
              opcode: Op.ACK_V1,
              keyId: key.keyId,
              sessionId: this.#localSid,
              acks,
              peerSessionId: this.#remoteSid,
              messageId: null,
              payload: Buffer.alloc(0),
            }),
          );
        }
      }
    });
  }

  /** Packets in arrival order: each run of one key's data packets opened as one batch, control packets one by one. */
  #onPackets(packets: Buffer[]): void {
    const gen = this.#transportGen;
    let run: Buffer[] = [];
    for (const packet of packets) {
      if (this.#transportGen !== gen) return; // torn down by the packet before
      this.stats.bytesIn += packet.length;
      if (packet.length === 0) continue;
      const op = packet[0]! >> 3;
      if (op === Op.DATA_V1 || op === Op.DATA_V2) {
        if (run.length > 0 && (run[0]![0]! & 7) !== (packet[0]! & 7)) {
          this.#onData(run);
          run = [];
        }
        run.push(packet);
        continue;
      }
      if (run.length > 0) {
        this.#onData(run);
        run = [];
      }
      this.#onControl(packet);
    }
    if (run.length > 0 && this.#transportGen === gen) this.#onData(run);
  }

  #onControl(packet: Buffer): void {
    const plain = this.#wrapper ? this.#wrapper.unwrap(packet) : packet;
    const p = plain ? decodeControl(plain) : null;
    if (!p || (this.#remoteSid && !p.sessionId.equals(this.#remoteSid))) {
      this.stats.malformed++;
      return;
    }
    let k = this.#keys.get(p.keyId);
    // key_ids wrap 7 → 1: a soft reset on a finished key's id starts a new key, while one on a key
    // still negotiating is a retransmission.
    if (k && p.opcode === Op.CONTROL_SOFT_RESET_V1 && p.keyId !== 0 && k.serverKm) k = undefined;
    if (k && p.opcode === Op.CONTROL_SOFT_RESET_V1 && p.keyId === 0 && this.#negotiated) k = undefined;
    if (!k) {
      // The server starts a renegotiation on a new key_id (notes §7.2): answer with our own soft reset.
      if (p.opcode !== Op.CONTROL_SOFT_RESET_V1 || !this.#negotiated) {
        this.stats.malformed++;
        return;
      }
      if (!this.#allowServerRenegotiation()) return;
      k = this.#beginKey(p.keyId, 'server started a renegotiation');
    }
    k.rel.acknowledged(p.acks);
    if (p.opcode === Op.ACK_V1) return;
    if (p.messageId === null) {
      this.stats.malformed++;
      return;
    }
    if (p.opcode === Op.CONTROL_HARD_RESET_SERVER_V2) {
      if (k.keyId === 0 && !this.#remoteSid) {
        this.#remoteSid = p.sessionId;
        k.rel.acceptReset(p.messageId);
        this.#startTls(k);
      } else {
        k.rel.acceptReset(p.messageId); // a repeat: acknowledge it again
      }
    } else if (p.opcode === Op.CONTROL_SOFT_RESET_V1) {
      if (k.rel.acceptReset(p.messageId) && !k.started) this.#startTls(k);
    } else if (p.opcode === Op.CONTROL_V1 && this.#remoteSid) {
      for (const payload of k.rel.receive(p.messageId, p.payload)) k.tlsIn?.push(payload);
    } else {
      this.stats.malformed++;
      return;
    }
    this.#scheduleAcks();
  }

  /** A server renegotiating more often than the cap is dropped: each one costs us a TLS handshake. */
  #allowServerRenegotiation(): boolean {
    const now = Date.now();
    const cap = this.opts.maxServerRenegotiationsPerMinute ?? DEFAULT_MAX_SERVER_RENEG_PER_MINUTE;
    const recent = this.#serverRenegotiations;
    while (recent.length > 0 && now - recent[0]! > 60_000) recent.shift();
    recent.push(now);
    if (recent.length <= cap) return true;
    this.#fatal(
      new GatehopError(
        ErrorCodes.OVPN_PROTOCOL,
        `${this.#remote.host} started ${recent.length} renegotiations within a minute (at most ${cap}): dropped`,
      ),
      { reconnect: false },
    );
    return false;
  }

  /** A new key state: our soft reset first (message id 0), then TLS once the server's arrives. */
  #beginKey(keyId: number, why: string): KeyState {
    const old = this.#keys.get(keyId);
    old?.close();
    const k = this.#newKey(keyId);
    this.#keys.set(keyId, k);
    this.#log.info({ event: 'renegotiation', keyId, why }, 'renegotiating data channel keys');
    k.rel.send(Op.CONTROL_SOFT_RESET_V1, Buffer.alloc(0));
    return k;
  }

  // ---- TLS, key method 2, push ----

  #startTls(k: KeyState): void {
    k.started = true;
    if (k.keyId === 0) this.#setState('AUTH', 'TLS handshake');
    const profile = this.opts.profile;
    const duplex = new ControlDuplex((chunk) => {
      for (let o = 0; o < chunk.length; o += CONTROL_PAYLOAD_MAX)
        k.rel.send(Op.CONTROL_V1, chunk.subarray(o, o + CONTROL_PAYLOAD_MAX));
    });
    k.tlsIn = duplex;
    const tls = tlsConnect({
      socket: duplex,
      ...(profile.ca ? { ca: profile.ca } : {}),
      ...(profile.cert ? { cert: profile.cert } : {}),
      ...(profile.key ? { key: profile.key } : {}),
      // OpenVPN checks the chain against <ca> but never a host name.
      checkServerIdentity: () => undefined,
      rejectUnauthorized: true,
      ...(this.#legacyTls ? { minVersion: 'TLSv1' as const, ciphers: 'DEFAULT:@SECLEVEL=0' } : {}),
    });
    k.tls = tls;
    // A first handshake that does not finish in time: a refusal only when the server acknowledged
    // what we sent after our reset (it has our ClientHello and chose not to answer), else a
    // timeout (the hello, or the answer, was lost on the way).
    const handshakeTimer =
      k.keyId === 0
        ? setTimeout(() => {
            if (k.tls !== tls) return; // this key state is gone
            const heard = k.rel.highestAcked >= 1;
            const err = Object.assign(
              new Error(
                heard
                  ? `the server took our TLS hello and did not answer within ${this.#tlsHandshakeMs / 1000} s`
                  : `no TLS handshake within ${this.#tlsHandshakeMs / 1000} s`,
              ),
              { code: heard ? 'TLS_HELLO_UNANSWERED' : 'TLS_HANDSHAKE_TIMEOUT' },
            );
            this.#fatal(
              new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, `TLS with ${this.#remote.host}: ${err.message}`, {
                cause: err,
              }),
            );
          }, this.#tlsHandshakeMs)
        : null;
    handshakeTimer?.unref();
    tls.once('close', () => handshakeTimer && clearTimeout(handshakeTimer));
    tls.on('error', (err: Error) => {
      if (k.keyId === 0)
        this.#fatal(
          new GatehopError(ErrorCodes.EGRESS_FAILED, `TLS with ${this.#remote.host}: ${err.message}`, { cause: err }),
        );
      else
        this.#log.warn(
          { event: 'renegotiation-failed', keyId: k.keyId, err: err.message },
          'renegotiation TLS failed; keeping the current key',
        );
    });
    tls.on('secureConnect', () => {
      if (handshakeTimer) clearTimeout(handshakeTimer);
      const version = tls.getProtocol();
      if (this.#legacyTls && k.keyId === 0) {
        const weak = version === 'TLSv1' || version === 'TLSv1.1';
        const fields = { event: 'legacy-tls-negotiated', protocol: version, cipher: tls.getCipher()?.name };
        if (weak)
          this.#log.warn(fields, `control channel with ${this.#remote.host} is ${version} (insecure: old node)`);
        else this.#log.info(fields, `control channel with ${this.#remote.host} is ${version} after all`);
      }
      const problem = checkServerCertificate(tls.getPeerCertificate(), profile);
      if (problem) {
        this.#fatal(
          new GatehopError(
            ErrorCodes.EGRESS_NOT_ALLOWED,
            `server certificate of ${this.#remote.host} refused: ${problem}`,
          ),
        );
        return;
      }
      this.#sendKeyMethod(k);
    });
    tls.on('data', (chunk: Buffer) => this.#onPlaintext(k, chunk));
  }

  #sendKeyMethod(k: KeyState): void {
    const p = this.opts.profile;
    const cipher = (p.cipher ?? p.dataCiphers[0] ?? 'AES-128-CBC').toUpperCase();
    const aead = /GCM|POLY1305/.test(cipher);
    const ciphers = [...new Set([...p.dataCiphers, ...(p.cipher ? [p.cipher] : [])].filter(isSupportedCipher))];
    const peerInfo = [
      'IV_VER=2.6.14',
      'IV_PLAT=linux',
      'IV_TCPNL=1',
      'IV_NCP=2',
      `IV_CIPHERS=${(ciphers.length ? ciphers : SUPPORTED_CIPHERS).join(':')}`,
      'IV_PROTO=142',
      'IV_GUI_VER=gatehop_0.1.0',
      '',
    ].join('\n');
    if (p.authUserPass && !this.opts.credentials) {
      this.#fatal(
        new GatehopError(
          ErrorCodes.PROFILE_INVALID,
          'the profile asks for a user name and password and none were given',
        ),
      );
      return;
    }
    const keyBits = Number(/(\d{3})/.exec(cipher)?.[1] ?? 256);
    const { message, keys } = clientKeyMethod2({
      options: optionsString({ proto: this.proto, cipher, auth: p.auth, aead, keyBits }),
      username: this.opts.credentials?.username ?? '',
      password: this.opts.credentials?.password ?? '',
      peerInfo,
    });
    k.clientKeys = keys;
    k.tls!.write(message);
  }

  #onPlaintext(k: KeyState, chunk: Buffer): void {
    k.plain = Buffer.concat([k.plain, chunk]);
    if (k.plain.length > MAX_PLAINTEXT) {
      this.#fatal(new GatehopError(ErrorCodes.NETSTACK_FAILED, 'the server sent an oversized control message'));
      return;
    }
    if (!k.serverKm) {
      const km = parseServerKeyMethod2(k.plain);
      if (!km) return;
      k.serverKm = km;
      k.plain = Buffer.alloc(0);
      if (k.keyId !== 0) {
        // A renegotiated key: no push; same cipher and derivation as key 0 (notes §7.1).
        this.#activateKey(k);
        return;
      }
      this.#setState('GET_CONFIG', 'requesting configuration');
      const ask = (): void => void k.tls?.write('PUSH_REQUEST\0');
      ask();
      this.#pushTimer = setInterval(ask, PUSH_REQUEST_EVERY_MS);
      this.#pushTimer.unref();
      return;
    }
    let nul: number;
    while ((nul = k.plain.indexOf(0)) >= 0) {
      const text = k.plain.toString('utf8', 0, nul).trim();
      k.plain = k.plain.subarray(nul + 1);
      this.#onControlMessage(text);
    }
  }

  #onControlMessage(text: string): void {
    if (text.startsWith('PUSH_REPLY')) {
      if (this.#negotiated) return; // duplicates after configuration are normal with SoftEther
      this.#pushParts = parsePushOptions(text.slice('PUSH_REPLY'.length).replace(/^,/, ''), this.#pushParts ?? {});
      if (this.#pushParts.continuation === 2) return;
      this.#configure();
    } else if (text.startsWith('AUTH_FAILED')) {
      this.#fatal(new GatehopError(ErrorCodes.EGRESS_NOT_ALLOWED, `the server refused authentication: ${text}`));
    } else if (text.startsWith('RESTART') || text.startsWith('HALT')) {
      this.#fatal(new GatehopError(ErrorCodes.NETSTACK_CLOSED, `the server ended the session: ${text}`));
    } else {
      this.#log.debug({ event: 'control-message', text: text.slice(0, 200) }, 'control message ignored');
    }
  }

  #deriveKey2(k: KeyState, tlsEkm: boolean): Buffer {
    // No context argument at all: OpenVPN exports without a context (an empty one differs, notes §4.6).
    if (tlsEkm)
      return (k.tls!.exportKeyingMaterial as (n: number, label: string) => Buffer)(256, 'EXPORTER-OpenVPN-datakeys');
    return openvpnPrfKeys({
      preMaster: k.clientKeys!.preMaster,
      clientRandom1: k.clientKeys!.random1,
      serverRandom1: k.serverKm!.random1,
      clientRandom2: k.clientKeys!.random2,
      serverRandom2: k.serverKm!.random2,
      clientSessionId: this.#localSid,
      serverSessionId: this.#remoteSid!,
    });
  }

  #configure(): void {
    if (this.#pushTimer) clearInterval(this.#pushTimer);
    const pushed = this.#pushParts!;
    if (!pushed.address) {
      this.#fatal(new GatehopError(ErrorCodes.NETSTACK_FAILED, 'the server pushed no address'));
      return;
    }
    if (pushed.cipher && !isSupportedCipher(pushed.cipher)) {
      this.#fatal(
        new GatehopError(
          ErrorCodes.PROFILE_INVALID,
          `the server pushed cipher ${pushed.cipher}, which this client does not support`,
        ),
      );
      return;
    }
    const k = this.#primary;
    const serverCipher = optionValue(k.serverKm!.options, 'cipher');
    const p = this.opts.profile;
    const cipher = [pushed.cipher, serverCipher, p.cipher, 'AES-128-CBC']
      .find((c): c is string => !!c && isSupportedCipher(c))!
      .toUpperCase();
    this.#negotiated = { cipher, tlsEkm: pushed.tlsEkm ?? false, peerId: pushed.peerId ?? null };
    this.cipher = cipher;
    k.data = new DataChannel(
      cipher,
      p.auth,
      sliceKey2(this.#deriveKey2(k, this.#negotiated.tlsEkm)),
      0,
      this.#negotiated.peerId,
    );
    this.config = {
      address: pushed.address,
      netmask: pushed.netmask ?? '255.255.255.0',
      gateway: pushed.gateway ?? null,
      dns: pushed.dns,
      pingS: pushed.pingS ?? p.pingS ?? null,
      pingRestartS: pushed.pingRestartS ?? p.pingRestartS ?? null,
      cipher,
      peerId: pushed.peerId ?? null,
      tlsEkm: pushed.tlsEkm ?? false,
      ccExit: pushed.ccExit ?? false,
      compression: pushed.compression ?? null,
      topology: pushed.topology ?? null,
      tunMtu: pushed.tunMtu ?? null,
    };
    // Pushed framing wins; the profile's own directive counts only for a stock server (SoftEther
    // pushes no peer-id and never frames, whatever an old profile says).
    this.#framing = framingFor(this.config.compression ?? (this.config.peerId !== null ? p.compression : null));
    if (this.#framing !== 'none')
      this.#log.info(
        { event: 'compression-framing', framing: this.#framing },
        `data payloads framed (${this.#framing}); compressed ones are dropped`,
      );
    this.#lastRecv = this.#lastSent = Date.now();
    this.#rekeying = null;
    this.#scheduleRekey();
    this.#startKeepalive();
    this.#setState('CONNECTED', `cipher ${cipher}${this.config.tlsEkm ? ', keys by TLS-EKM' : ''}`);
    this.#log.info(
      { event: 'tunnel-up', address: this.config.address, cipher, peerId: this.config.peerId },
      'tunnel up',
    );
    this.#settle?.resolve(this.config);
  }

  /** A renegotiated key carries traffic from now on; the previous one still decrypts until replaced. */
  #activateKey(k: KeyState): void {
    const n = this.#negotiated!;
    k.data = new DataChannel(
      n.cipher,
      this.opts.profile.auth,
      sliceKey2(this.#deriveKey2(k, n.tlsEkm)),
      k.keyId,
      n.peerId,
    );
    const previous = this.#primary;
    this.#primary = k;
    this.renegotiations++;
    if (this.#rekeying?.key === k) this.#rekeying = null;
    this.#scheduleRekey();
    // Keep only the previous key as the lame duck (OpenVPN's transition window).
    for (const [id, key] of this.#keys) {
      if (key !== k && key !== previous) {
        key.close();
        this.#keys.delete(id);
      }
    }
    previous.tls?.removeAllListeners('data');
    this.#log.info(
      { event: 'renegotiated', keyId: k.keyId, renegotiations: this.renegotiations },
      'new data channel keys in use',
    );
  }

  // ---- data ----

  /** One key's data packets, opened as one batch. */
  #onData(packets: Buffer[]): void {
    const key = this.#keys.get(packets[0]![0]! & 7);
    if (!key?.data) {
      this.stats.malformed += packets.length;
      return;
    }
    const { decryptFailures, replays } = key.data.stats;
    const payloads = key.data.openBatch(packets);
    // Only dropped packets change these counters: no bookkeeping per packet.
    this.stats.decryptFailures += key.data.stats.decryptFailures - decryptFailures;
    this.stats.replays += key.data.stats.replays - replays;
    let heard = false;
    const inners: Buffer[] = [];
    for (const payload of payloads) {
      if (!payload) continue;
      heard = true;
      const inner = this.#framing === 'none' ? payload : unframe(this.#framing, payload);
      if (!inner) {
        this.stats.compressedDropped++;
        if (!this.#warnedCompressed) {
          this.#warnedCompressed = true;
          this.#log.warn(
            { event: 'compressed-payload', framing: this.#framing },
            'the server sent a compressed payload; Gatehop does not decompress (dropped)',
          );
        }
        continue;
      }
      if (inner.length === PING_PAYLOAD.length && inner.equals(PING_PAYLOAD)) continue;
      inners.push(inner);
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
    if (!this.#primary.data || this.#state !== 'CONNECTED') {
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
    const data = this.#primary.data;
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
      this.#checkRekey(now);
      const data = this.#primary.data;
      if (now - this.#lastSent >= pingMs && data) {
        this.#lastSent = now;
        this.#sendRaw(data.encrypt(frame(this.#framing, PING_PAYLOAD)));
      }
    }, 1000);
    this.#keepalive.unref();
  }

  // ---- renegotiation started by us (notes §7.2) ----

  #scheduleRekey(): void {
    const s = this.opts.profile.renegSec ?? DEFAULT_RENEG_S;
    this.#rekeyAt = s > 0 ? Date.now() + s * 1000 : Number.POSITIVE_INFINITY;
  }

  #checkRekey(now: number): void {
    const pending = this.#rekeying;
    if (pending) {
      if (now - pending.since < HAND_WINDOW_MS) return;
      this.#log.warn(
        { event: 'renegotiation-abandoned', keyId: pending.key.keyId },
        `renegotiation not finished in ${HAND_WINDOW_MS / 1000} s; keeping the current key`,
      );
      pending.key.close();
      if (this.#keys.get(pending.key.keyId) === pending.key) this.#keys.delete(pending.key.keyId);
      this.#rekeying = null;
      this.#rekeyAt = now + HAND_WINDOW_MS;
      return;
    }
    const sent = this.#primary.data?.stats.sent ?? 0;
    const why =
      sent >= PACKET_ID_REKEY ? 'packet ids near their end' : now >= this.#rekeyAt ? 'reneg-sec elapsed' : null;
    if (!why || this.#state !== 'CONNECTED') return;
    // A key the server is negotiating right now (a newer key_id than the primary's) goes first.
    if ([...this.#keys.values()].some((k) => !k.data)) return;
    const keyId = (this.#primary.keyId % 7) + 1; // key_ids wrap 7 -> 1 (0 is the first key's only)
    this.#rekeying = { key: this.#beginKey(keyId, `we start it: ${why}`), since: now };
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
    for (const k of this.#keys.values()) k.close();
    if (this.#ackFlush) clearImmediate(this.#ackFlush);
    this.#ackFlush = null;
    if (this.#pushTimer) clearInterval(this.#pushTimer);
    if (this.#keepalive) clearInterval(this.#keepalive);
    this.#pushTimer = this.#keepalive = null;
    this.#carrier?.close();
    this.#carrier = null;
  }

  close(): void {
    this.#closedByUs = true;
    this.#settle?.reject(new GatehopError(ErrorCodes.EGRESS_CLOSED, 'tunnel closed'));
    if (this.#state === 'DISCONNECTED' && !this.#carrier) return;
    const linger = this.#state === 'CONNECTED' && this.#notifyExit();
    this.#setState('DISCONNECTED', 'closed by us');
    if (!linger) {
      this.#teardown();
      return;
    }
    // The EXIT control message goes through TLS and the reliability layer: keep the transport
    // until the server has acknowledged it (retransmissions included), for at most EXIT_LINGER_MS.
    const k = this.#primary;
    const until = Date.now() + EXIT_LINGER_MS;
    const poll = setInterval(() => {
      const sent = k.rel.nextSendId > linger.msgIdBefore;
      if ((sent && k.rel.idle) || Date.now() > until) {
        clearInterval(poll);
        this.#teardown();
      }
    }, 20);
    poll.unref();
  }

  /**
   * Tells the server we are leaving so it frees our session now instead of at its ping-restart
   * (notes §6.5): the EXIT control message if it pushed `protocol-flags cc-exit`; over UDP
   * otherwise the OCC_EXIT data packet, to stock servers only (those push a peer-id; SoftEther
   * would hand the packet to its hub as IP). Over TCP, closing the connection says it. Returns
   * what to wait for before the transport closes (null: nothing).
   */
  #notifyExit(): { msgIdBefore: number } | null {
    const cfg = this.config;
    const k = this.#primary;
    if (!cfg || !k.data) return null;
    if (cfg.ccExit && k.tls) {
      const msgIdBefore = k.rel.nextSendId;
      k.tls.write('EXIT\0');
      this.stats.exitNotified = 'control';
      return { msgIdBefore };
    }
    if (this.proto === 'udp' && cfg.peerId !== null) {
      this.#sendRaw(k.data.encrypt(frame(this.#framing, OCC_EXIT)));
      this.stats.exitNotified = 'occ';
    }
    return null;
  }
}
