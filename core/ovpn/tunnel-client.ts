import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { abortReason, ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import { clientKeyMethod2, optionsString, optionValue, parsePushOptions, parseServerKeyMethod2, type ClientKeySource, type PushedConfig, type ServerKeyMethod2 } from './control-messages.js';
import { DataChannel, isSupportedCipher, PING_PAYLOAD, SUPPORTED_CIPHERS } from './data-channel.js';
import { openvpnPrfKeys, sliceKey2 } from './keys.js';
import { decodeControl, encodeControl, frameTcp, MAX_ACKS, Op, TcpRecordReader } from './packet.js';
import { parseStaticKey, tlsAuthWrapper, tlsCryptWrapper, type ControlWrapper } from './control-wrap.js';
import type { OvpnProfile, OvpnRemote } from './profile.js';

export type TunnelState = 'CONNECTING' | 'WAIT' | 'AUTH' | 'GET_CONFIG' | 'CONNECTED' | 'RECONNECTING' | 'DISCONNECTED';

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
const RESET_WAIT_MS = 5_000;
const MAX_PLAINTEXT = 16 * 1024;
const MAX_TCP_BUFFER = 4 * 1024 * 1024;

interface Outgoing {
  opcode: number;
  msgId: number;
  payload: Buffer;
  rtoMs: number;
  timer: NodeJS.Timeout | null;
}

/**
 * An OpenVPN client session over TCP or UDP (key_id 0; openvpn-protocol-notes.md §10). It speaks
 * to SoftEther (VPN Gate) and to stock OpenVPN 2.6 servers and hands IP packets to its owner
 * through write() and the 'packet' event.
 */
export class TunnelClient extends EventEmitter<{
  state: [TunnelState, string];
  packet: [Buffer];
  error: [Error];
  /** After an L1 reconnect; addressChanged means connections on the old address are lost. */
  reconnected: [{ config: PushedConfig; addressChanged: boolean }];
}> {
  readonly stats: TunnelStats & { reconnects: number } = { bytesIn: 0, bytesOut: 0, packetsIn: 0, packetsOut: 0, decryptFailures: 0, replays: 0, droppedOut: 0, malformed: 0, reconnects: 0 };
  #closedByUs = false;
  config: PushedConfig | null = null;
  cipher: string | null = null;
  #state: TunnelState = 'DISCONNECTED';
  readonly #remote: OvpnRemote;
  readonly #log: Logger;
  readonly #wrapperFactory: (() => ControlWrapper) | null;
  #wrapper: ControlWrapper | null = null;
  // per attempt
  #tcp: Socket | null = null;
  #udp: UdpSocket | null = null;
  #localSid = randomBytes(8);
  #remoteSid: Buffer | null = null;
  #sendSeq = 0;
  #outQueue: Outgoing[] = [];
  #unacked = new Map<number, Outgoing>();
  #acksToSend: number[] = [];
  #ackFlush: NodeJS.Immediate | null = null;
  #recvNext = 0;
  #recvBuf = new Map<number, Buffer>();
  #tlsIn: ControlDuplex | null = null;
  #tls: TLSSocket | null = null;
  #plain = Buffer.alloc(0);
  #clientKeys: ClientKeySource | null = null;
  #serverKm: ServerKeyMethod2 | null = null;
  #pushTimer: NodeJS.Timeout | null = null;
  #pushParts: ReturnType<typeof parsePushOptions> | null = null;
  #data: DataChannel | null = null;
  #keepalive: NodeJS.Timeout | null = null;
  #lastSent = 0;
  #lastRecv = 0;
  #settle: { resolve: (c: PushedConfig) => void; reject: (e: Error) => void } | null = null;

  constructor(private readonly opts: TunnelClientOptions) {
    super();
    const r = opts.profile.remotes[opts.remoteIndex ?? 0];
    if (!r) throw new GatehopError(ErrorCodes.PROFILE_INVALID, 'profile has no such remote');
    this.#remote = r;
    this.#log = opts.logger.child({ component: 'ovpn', remote: `${r.host}:${r.port}/${r.proto}` });
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
        return await this.#attempt(Math.min(deadline - Date.now(), this.proto === 'udp' ? RESET_WAIT_MS * 6 : deadline - Date.now()), opts.signal);
      } catch (err) {
        lastErr = err as Error;
        this.#teardown();
        if (opts.signal?.aborted) throw abortReason(opts.signal, 'tunnel connect');
        if (!(err instanceof GatehopError && err.code === ErrorCodes.EGRESS_CONNECT_TIMEOUT && this.proto === 'udp' && !this.#remoteSid)) break;
      }
    }
    this.#setState('DISCONNECTED', lastErr?.message ?? 'connect timed out');
    throw lastErr ?? new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, 'tunnel connect timed out');
  }

  #attempt(timeoutMs: number, signal?: AbortSignal): Promise<PushedConfig> {
    this.#reset();
    this.#setState('CONNECTING', 'opening transport');
    return new Promise<PushedConfig>((resolve, reject) => {
      const timer = setTimeout(() => fail(new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, `tunnel to ${this.#remote.host}:${this.#remote.port} not up within ${timeoutMs} ms (state ${this.#state})`)), timeoutMs);
      const resetTimer = this.proto === 'udp' ? setTimeout(() => {
        if (!this.#remoteSid) fail(new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, 'no server reset within 5 s'));
      }, RESET_WAIT_MS) : null;
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
    this.#sendSeq = 0;
    this.#outQueue = [];
    this.#unacked.clear();
    this.#acksToSend = [];
    this.#recvNext = 0;
    this.#recvBuf.clear();
    this.#plain = Buffer.alloc(0);
    this.#serverKm = null;
    this.#pushParts = null;
    this.#data = null;
  }

  #openTransport(): void {
    const { host, port } = this.#remote;
    if (this.proto === 'tcp') {
      const reader = new TcpRecordReader(2048);
      const s = tcpConnect({ host, port, noDelay: true });
      this.#tcp = s;
      s.on('connect', () => this.#start());
      s.on('data', (chunk: Buffer) => {
        let records: Buffer[];
        try {
          records = reader.push(chunk);
        } catch (err) {
          this.#fatal(new GatehopError(ErrorCodes.NETSTACK_FAILED, `server sent a bad TCP record: ${(err as Error).message}`));
          return;
        }
        for (const r of records) this.#onPacket(r);
      });
      s.on('error', (err) => this.#fatal(new GatehopError(ErrorCodes.EGRESS_CONNECT_REFUSED, `TCP ${host}:${port}: ${err.message}`, { cause: err })));
      s.on('close', () => this.#fatal(new GatehopError(ErrorCodes.NETSTACK_CLOSED, `TCP ${host}:${port} closed by the server`)));
    } else {
      const u = createSocket('udp4');
      this.#udp = u;
      u.on('message', (msg, rinfo) => {
        if (rinfo.address === host && rinfo.port === port) this.#onPacket(msg);
      });
      u.on('error', (err) => this.#fatal(new GatehopError(ErrorCodes.EGRESS_FAILED, `UDP ${host}:${port}: ${err.message}`, { cause: err })));
      u.connect(port, host, () => this.#start());
    }
  }

  #sendRaw(packet: Buffer): void {
    this.stats.bytesOut += packet.length;
    if (this.#tcp) {
      if (this.#tcp.writableLength > MAX_TCP_BUFFER) {
        this.stats.droppedOut++;
        return;
      }
      this.#tcp.write(frameTcp(packet));
    } else if (this.#udp) {
      this.#udp.send(packet);
    }
  }

  #sendControlRaw(plain: Buffer): void {
    this.#sendRaw(this.#wrapper ? this.#wrapper.wrap(plain) : plain);
  }

  #start(): void {
    this.#setState('WAIT', 'sending hard reset');
    this.#sendControl(Op.CONTROL_HARD_RESET_CLIENT_V2, Buffer.alloc(0));
  }

  // ---- reliability layer ----

  /** UDP to SoftEther: stop-and-wait (it has no reorder buffer); TCP: a window is fine. */
  get #window(): number {
    return this.proto === 'udp' ? 1 : 8;
  }

  #sendControl(opcode: number, payload: Buffer): void {
    this.#outQueue.push({ opcode, msgId: this.#sendSeq++, payload, rtoMs: 2000, timer: null });
    this.#pump();
  }

  #pump(): void {
    while (this.#outQueue.length > 0 && this.#unacked.size < this.#window) {
      const o = this.#outQueue.shift()!;
      this.#unacked.set(o.msgId, o);
      this.#transmit(o);
    }
  }

  #transmit(o: Outgoing): void {
    const acks = this.#remoteSid ? this.#acksToSend.splice(0, MAX_ACKS) : [];
    this.#sendControlRaw(encodeControl({ opcode: o.opcode, keyId: 0, sessionId: this.#localSid, acks, peerSessionId: this.#remoteSid, messageId: o.msgId, payload: o.payload }));
    o.timer = setTimeout(() => {
      if (!this.#unacked.has(o.msgId)) return;
      // Never resend the hard reset once the server answered (a duplicate wipes key 0 on Stable).
      if (o.opcode === Op.CONTROL_HARD_RESET_CLIENT_V2 && this.#remoteSid) return;
      o.rtoMs = Math.min(o.rtoMs * 2, 16_000);
      this.#transmit(o);
    }, o.rtoMs);
    o.timer.unref();
  }

  #queueAck(msgId: number): void {
    this.#acksToSend.push(msgId);
    this.#ackFlush ??= setImmediate(() => {
      this.#ackFlush = null;
      while (this.#acksToSend.length > 0 && this.#remoteSid) {
        const acks = this.#acksToSend.splice(0, MAX_ACKS);
        this.#sendControlRaw(encodeControl({ opcode: Op.ACK_V1, keyId: 0, sessionId: this.#localSid, acks, peerSessionId: this.#remoteSid, messageId: null, payload: Buffer.alloc(0) }));
      }
    });
  }

  #onPacket(packet: Buffer): void {
    this.stats.bytesIn += packet.length;
    if (packet.length === 0) return;
    const op = packet[0]! >> 3;
    if (op === Op.DATA_V1 || op === Op.DATA_V2) return this.#onData(packet);
    const plain = this.#wrapper ? this.#wrapper.unwrap(packet) : packet;
    const p = plain ? decodeControl(plain) : null;
    if (!p || p.keyId !== 0) {
      this.stats.malformed++;
      return;
    }
    if (this.#remoteSid && !p.sessionId.equals(this.#remoteSid)) {
      this.stats.malformed++;
      return;
    }
    for (const id of p.acks) {
      const o = this.#unacked.get(id);
      if (o) {
        if (o.timer) clearTimeout(o.timer);
        this.#unacked.delete(id);
      }
    }
    if (p.opcode === Op.ACK_V1) return this.#pump();
    if (p.opcode === Op.CONTROL_HARD_RESET_SERVER_V2) {
      if (!this.#remoteSid) {
        this.#remoteSid = p.sessionId;
        this.#recvNext = 1;
        this.#queueAck(p.messageId!);
        this.#startTls();
      } else {
        this.#queueAck(p.messageId!);
      }
      return this.#pump();
    }
    if (p.opcode === Op.CONTROL_SOFT_RESET_V1) {
      this.#fatal(new GatehopError(ErrorCodes.NETSTACK_FAILED, 'the server started a renegotiation, which this client does not do yet'));
      return;
    }
    if (p.opcode !== Op.CONTROL_V1 || p.messageId === null || !this.#remoteSid) return this.#pump();
    const id = p.messageId;
    if (id < this.#recvNext) this.#queueAck(id); // a retransmission of something delivered: ack again
    else if (id < this.#recvNext + 16) {
      this.#queueAck(id);
      if (!this.#recvBuf.has(id)) this.#recvBuf.set(id, p.payload);
      while (this.#recvBuf.has(this.#recvNext)) {
        const payload = this.#recvBuf.get(this.#recvNext)!;
        this.#recvBuf.delete(this.#recvNext++);
        this.#tlsIn?.push(payload);
      }
    }
    this.#pump();
  }

  // ---- TLS, key method 2, push ----

  #startTls(): void {
    this.#setState('AUTH', 'TLS handshake');
    const profile = this.opts.profile;
    const duplex = new ControlDuplex((chunk) => {
      for (let o = 0; o < chunk.length; o += CONTROL_PAYLOAD_MAX) this.#sendControl(Op.CONTROL_V1, chunk.subarray(o, o + CONTROL_PAYLOAD_MAX));
    });
    this.#tlsIn = duplex;
    const tls = tlsConnect({
      socket: duplex,
      ...(profile.ca ? { ca: profile.ca } : {}),
      ...(profile.cert ? { cert: profile.cert } : {}),
      ...(profile.key ? { key: profile.key } : {}),
      // OpenVPN checks the chain against <ca> but never a host name.
      checkServerIdentity: () => undefined,
      rejectUnauthorized: true,
    });
    this.#tls = tls;
    tls.on('error', (err) => this.#fatal(new GatehopError(ErrorCodes.EGRESS_FAILED, `TLS with ${this.#remote.host}: ${err.message}`, { cause: err })));
    tls.on('secureConnect', () => this.#sendKeyMethod());
    tls.on('data', (chunk: Buffer) => this.#onPlaintext(chunk));
  }

  #sendKeyMethod(): void {
    const p = this.opts.profile;
    const cipher = (p.cipher ?? p.dataCiphers[0] ?? 'AES-128-CBC').toUpperCase();
    const aead = /GCM|POLY1305/.test(cipher);
    const ciphers = [...new Set([...p.dataCiphers, ...(p.cipher ? [p.cipher] : [])].filter(isSupportedCipher))];
    const peerInfo = ['IV_VER=2.6.14', 'IV_PLAT=linux', 'IV_TCPNL=1', 'IV_NCP=2', `IV_CIPHERS=${(ciphers.length ? ciphers : SUPPORTED_CIPHERS).join(':')}`, 'IV_PROTO=142', 'IV_GUI_VER=gatehop_0.1.0', ''].join('\n');
    if (p.authUserPass && !this.opts.credentials) {
      this.#fatal(new GatehopError(ErrorCodes.PROFILE_INVALID, 'the profile asks for a user name and password and none were given'));
      return;
    }
    const keyBits = Number(/(\d{3})/.exec(cipher)?.[1] ?? 256);
    const { message, keys } = clientKeyMethod2({
      options: optionsString({ proto: this.proto, cipher, auth: p.auth, aead, keyBits }),
      username: this.opts.credentials?.username ?? '',
      password: this.opts.credentials?.password ?? '',
      peerInfo,
    });
    this.#clientKeys = keys;
    this.#tls!.write(message);
  }

  #onPlaintext(chunk: Buffer): void {
    this.#plain = Buffer.concat([this.#plain, chunk]);
    if (this.#plain.length > MAX_PLAINTEXT) {
      this.#fatal(new GatehopError(ErrorCodes.NETSTACK_FAILED, 'the server sent an oversized control message'));
      return;
    }
    if (!this.#serverKm) {
      const km = parseServerKeyMethod2(this.#plain);
      if (!km) return;
      this.#serverKm = km;
      this.#plain = Buffer.alloc(0);
      this.#setState('GET_CONFIG', 'requesting configuration');
      const ask = (): void => void this.#tls?.write('PUSH_REQUEST\0');
      ask();
      this.#pushTimer = setInterval(ask, PUSH_REQUEST_EVERY_MS);
      this.#pushTimer.unref();
      return;
    }
    let nul: number;
    while ((nul = this.#plain.indexOf(0)) >= 0) {
      const text = this.#plain.toString('utf8', 0, nul).trim();
      this.#plain = this.#plain.subarray(nul + 1);
      this.#onControlMessage(text);
    }
  }

  #onControlMessage(text: string): void {
    if (text.startsWith('PUSH_REPLY')) {
      if (this.#data) return; // duplicates after configuration are normal with SoftEther
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

  #configure(): void {
    if (this.#pushTimer) clearInterval(this.#pushTimer);
    const pushed = this.#pushParts!;
    if (!pushed.address) {
      this.#fatal(new GatehopError(ErrorCodes.NETSTACK_FAILED, 'the server pushed no address'));
      return;
    }
    const serverCipher = optionValue(this.#serverKm!.options, 'cipher');
    const p = this.opts.profile;
    const cipher = [pushed.cipher, serverCipher, p.cipher, 'AES-128-CBC'].find((c): c is string => !!c && isSupportedCipher(c))!.toUpperCase();
    if (pushed.cipher && !isSupportedCipher(pushed.cipher)) {
      this.#fatal(new GatehopError(ErrorCodes.PROFILE_INVALID, `the server pushed cipher ${pushed.cipher}, which this client does not support`));
      return;
    }
    let key2: Buffer;
    // No context argument at all: OpenVPN exports without a context (an empty one differs, notes §4.6).
    if (pushed.tlsEkm) key2 = (this.#tls!.exportKeyingMaterial as (n: number, label: string) => Buffer)(256, 'EXPORTER-OpenVPN-datakeys');
    else {
      key2 = openvpnPrfKeys({
        preMaster: this.#clientKeys!.preMaster,
        clientRandom1: this.#clientKeys!.random1,
        serverRandom1: this.#serverKm!.random1,
        clientRandom2: this.#clientKeys!.random2,
        serverRandom2: this.#serverKm!.random2,
        clientSessionId: this.#localSid,
        serverSessionId: this.#remoteSid!,
      });
    }
    this.cipher = cipher;
    this.#data = new DataChannel(cipher, p.auth, sliceKey2(key2), 0, pushed.peerId ?? null);
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
      topology: pushed.topology ?? null,
      tunMtu: pushed.tunMtu ?? null,
    };
    this.#lastRecv = this.#lastSent = Date.now();
    this.#startKeepalive();
    this.#setState('CONNECTED', `cipher ${cipher}${this.config.tlsEkm ? ', keys by TLS-EKM' : ''}`);
    this.#log.info({ event: 'tunnel-up', address: this.config.address, cipher, peerId: this.config.peerId }, 'tunnel up');
    this.#settle?.resolve(this.config);
  }

  // ---- data ----

  #onData(packet: Buffer): void {
    if (!this.#data) return;
    const payload = this.#data.decrypt(packet);
    this.stats.decryptFailures = this.#data.stats.decryptFailures;
    this.stats.replays = this.#data.stats.replays;
    if (!payload) return;
    this.#lastRecv = Date.now();
    if (payload.equals(PING_PAYLOAD)) return;
    this.stats.packetsIn++;
    this.emit('packet', payload);
  }

  /** Sends one IP packet into the tunnel; false when not connected (the packet is dropped). */
  write(ip: Buffer): boolean {
    if (!this.#data || this.#state !== 'CONNECTED') {
      this.stats.droppedOut++;
      return false;
    }
    this.stats.packetsOut++;
    this.#lastSent = Date.now();
    this.#sendRaw(this.#data.encrypt(ip));
    return true;
  }

  #startKeepalive(): void {
    const pingMs = Math.min(this.config!.pingS ?? 10, 3) * 1000;
    const restartMs = (this.config!.pingRestartS ?? 60) * 1000;
    this.#keepalive = setInterval(() => {
      const now = Date.now();
      if (now - this.#lastRecv > restartMs) {
        this.#fatal(new GatehopError(ErrorCodes.EGRESS_HOST_UNREACHABLE, `nothing from the server for ${restartMs / 1000} s (ping-restart)`));
        return;
      }
      if (now - this.#lastSent >= pingMs && this.#data) {
        this.#lastSent = now;
        this.#sendRaw(this.#data.encrypt(PING_PAYLOAD));
      }
    }, 1000);
    this.#keepalive.unref();
  }

  // ---- teardown ----

  #fatal(err: Error): void {
    if (this.#state === 'DISCONNECTED' || this.#state === 'RECONNECTING') return;
    if (this.#settle) {
      this.#settle.reject(err);
      return;
    }
    this.#teardown();
    const forMs = this.opts.reconnectForMs ?? 30_000;
    if (this.#state === 'CONNECTED' && forMs > 0 && !this.#closedByUs) {
      void this.#reconnect(err, forMs);
      return;
    }
    this.#down(err);
  }

  #down(err: Error): void {
    this.#log.info({ event: 'tunnel-down', err: err.message }, 'tunnel down');
    this.#setState('DISCONNECTED', err.message);
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }

  /** L1: the same server again, with new session ids; the 'packet' interface never changes. */
  async #reconnect(cause: Error, forMs: number): Promise<void> {
    const previous = this.config;
    this.#setState('RECONNECTING', cause.message);
    this.#log.info({ event: 'tunnel-reconnecting', err: cause.message }, 'tunnel lost; reconnecting to the same server');
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
    if (!this.#closedByUs) this.#down(new GatehopError(ErrorCodes.EGRESS_HOST_UNREACHABLE, `reconnect failed for ${Math.round(forMs / 1000)} s: ${last.message}`));
  }

  #teardown(): void {
    for (const o of this.#unacked.values()) if (o.timer) clearTimeout(o.timer);
    this.#unacked.clear();
    this.#outQueue = [];
    if (this.#ackFlush) clearImmediate(this.#ackFlush);
    this.#ackFlush = null;
    if (this.#pushTimer) clearInterval(this.#pushTimer);
    if (this.#keepalive) clearInterval(this.#keepalive);
    this.#pushTimer = this.#keepalive = null;
    this.#tls?.removeAllListeners('data');
    this.#tls?.on('error', () => {});
    this.#tls?.destroy();
    this.#tls = null;
    this.#tlsIn = null;
    this.#data = null;
    this.#tcp?.removeAllListeners('close');
    this.#tcp?.on('error', () => {});
    this.#tcp?.destroy();
    this.#tcp = null;
    try {
      this.#udp?.close();
    } catch {
      /* already closed */
    }
    this.#udp = null;
  }

  close(): void {
    this.#closedByUs = true;
    this.#settle?.reject(new GatehopError(ErrorCodes.EGRESS_CLOSED, 'tunnel closed'));
    if (this.#state === 'DISCONNECTED' && !this.#tcp && !this.#udp) return;
    this.#teardown();
    this.#setState('DISCONNECTED', 'closed by us');
  }
}

/** The TLS engine's transport: its writes become P_CONTROL_V1 payloads, in-order payloads are pushed in. */
class ControlDuplex extends Duplex {
  constructor(private readonly send: (chunk: Buffer) => void) {
    super();
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.send(chunk);
    cb();
  }
}
