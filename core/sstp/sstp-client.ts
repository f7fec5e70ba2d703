/**
 * An MS-SSTP client ([MS-SSTP]) in user space: the HTTPS connection from sstp-dial.ts, SSTP's
 * call set-up (Call Connect Request → Ack with the server's nonce → PPP → Call Connected with the
 * crypto binding), echo keepalives both ways, and PPP (ppp-link.ts) carrying IPv4 packets, which
 * its owner takes from 'packets' events (those one read brought) and hands in with write(). One timer drives PPP's
 * retransmissions and the keepalives; close() sends Call Disconnect and ends the connection.
 */
import { EventEmitter } from 'node:events';
import type { TLSSocket } from 'node:tls';
import { abortReason, ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import { type NodeTrust, type TrustRule, type UpstreamProxy } from '../reach/index.js';
import {
  certHashField,
  compoundMac,
  HASH_SHA1,
  HASH_SHA256,
  hlakOf,
  pickBindingHash,
  type BindingHash,
} from './crypto-binding.js';
import { PppLink, type PppAuth, type PppAuthenticated, type PppUp } from './ppp-link.js';
import {
  callConnected,
  callConnectRequest,
  decodePacket,
  describeStatus,
  encodeControl,
  encodeData,
  MsgType,
  parseCryptoBindingRequest,
  SstpReader,
  statusInfoOf,
  type SstpPacket,
} from './sstp-codec.js';
import { dialSstp } from './sstp-dial.js';

export type SstpState = 'CONNECTING' | 'CONNECTED' | 'DISCONNECTED';

export interface SstpClientOptions {
  /** Where to connect (the node's address or name) and the port (443, or the node's SoftEther TCP port). */
  host: string;
  port: number;
  /**
   * Whom the node's certificate may come from (core/reach/node-trust); `serverName`, the node's
   * DDNS name, is also the SNI and the HTTP Host.
   */
  trust: NodeTrust & { serverName: string };
  sni?: boolean;
  /** VPN Gate's SSTP account is vpn / vpn. */
  username?: string;
  password?: string;
  auth?: readonly PppAuth[];
  upstream?: UpstreamProxy | null;
  logger: Logger;
}

export interface SstpLinkConfig {
  address: string;
  /** The server's PPP address (the tunnel's gateway), if it gave one. */
  gateway: string | null;
  dns: string[];
  mtu: number;
  auth: PppAuth | 'none';
  bindingHash: BindingHash;
  tlsProtocol: string | null;
}

export interface SstpStats {
  bytesIn: number;
  bytesOut: number;
  packetsIn: number;
  packetsOut: number;
  droppedOut: number;
  echoRequests: number;
}

const TICK_MS = 1_000;
/** An SSTP Echo Request after this much silence (the spec's hello timer is 60 s; servers send theirs every few s). */
const HELLO_MS = 10_000;
const DISCONNECT_LINGER_MS = 1_000;
/** Beyond this much unsent data, IP packets are dropped (TCP inside retransmits) rather than queued without end. */
const MAX_QUEUED = 4 * 1024 * 1024;
/** Past this much unsent to the server (IP, control and PPP together) it is dropped: it is not reading. */
const MAX_PEER_BACKLOG = MAX_QUEUED + 256 * 1024;

export class SstpClient extends EventEmitter<{ state: [SstpState, string]; packets: [Buffer[]]; error: [Error] }> {
  /** IP packets from the read being handled, handed on together when it is done (a stack takes them as one batch). */
  #rx: Buffer[] | null = null;
  #state: SstpState = 'DISCONNECTED';
  #tls: TLSSocket | null = null;
  #ppp: PppLink | null = null;
  #timer: NodeJS.Timeout | null = null;
  #lastRecv = 0;
  #lastSent = 0;
  #closedByUs = false;
  #settle: { resolve: (c: SstpLinkConfig) => void; reject: (e: Error) => void } | null = null;
  #binding: { hash: BindingHash; nonce: Buffer; certDer: Buffer } | null = null;
  #tlsProtocol: string | null = null;
  readonly #log: Logger;
  readonly stats: SstpStats = { bytesIn: 0, bytesOut: 0, packetsIn: 0, packetsOut: 0, droppedOut: 0, echoRequests: 0 };
  config: SstpLinkConfig | null = null;
  /** Which trust rule accepted the node's certificate (null before TLS). */
  trustRule: TrustRule | null = null;

  constructor(private readonly opts: SstpClientOptions) {
    super();
    this.#log = opts.logger;
  }

  get state(): SstpState {
    return this.#state;
  }

  /** When the server was last heard from (any SSTP packet). */
  get lastReceivedAt(): number {
    return this.#lastRecv;
  }

  get #where(): string {
    return `${this.opts.trust.serverName} (${this.opts.host}:${this.opts.port})`;
  }

  async connect(o: { timeoutMs: number; signal?: AbortSignal }): Promise<SstpLinkConfig> {
    if (this.#state !== 'DISCONNECTED' || this.#closedByUs)
      throw new GatehopError(ErrorCodes.EGRESS_CLOSED, 'this SSTP client was used already');
    const deadline = AbortSignal.timeout(o.timeoutMs);
    const signal = o.signal ? AbortSignal.any([o.signal, deadline]) : deadline;
    this.#setState('CONNECTING', 'dialling');
    let conn;
    try {
      conn = await dialSstp({
        host: this.opts.host,
        port: this.opts.port,
        trust: this.opts.trust,
        ...(this.opts.sni !== undefined ? { sni: this.opts.sni } : {}),
        upstream: this.opts.upstream,
        signal,
      });
    } catch (err) {
      this.#setState('DISCONNECTED', (err as Error).message);
      throw err;
    }
    if (this.#closedByUs) {
      conn.tls.destroy();
      throw new GatehopError(ErrorCodes.EGRESS_CLOSED, 'closed while connecting');
    }
    this.#tls = conn.tls;
    this.#tlsProtocol = conn.protocol;
    this.trustRule = conn.trustRule;
    this.#binding = { hash: 'sha256', nonce: Buffer.alloc(32), certDer: conn.certDer };
    const result = new Promise<SstpLinkConfig>((resolve, reject) => (this.#settle = { resolve, reject }));
    const onAbort = (): void => this.#fatal(abortReason(signal, `SSTP with ${this.#where}`));
    signal.addEventListener('abort', onAbort, { once: true });
    void result.finally(() => signal.removeEventListener('abort', onAbort)).catch(() => {});
    this.#wire(conn.tls, conn.rest);
    this.#lastRecv = Date.now();
    this.#sendRaw(callConnectRequest());
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
    this.#timer.unref();
    return result;
  }

  /** One IPv4 packet into the tunnel. False when it was dropped (closed, or too much already queued). */
  write(packet: Buffer): boolean {
    const tls = this.#tls;
    if (this.#state !== 'CONNECTED' || !tls || !this.#ppp) return false;
    if (tls.writableLength > MAX_QUEUED) {
      this.stats.droppedOut++;
      return false;
    }
    this.stats.packetsOut++;
    this.#ppp.writeIp(packet);
    return true;
  }

  /** Call Disconnect, a short wait for its Ack, then the connection ends. Idempotent. */
  close(): void {
    if (this.#closedByUs) return;
    this.#closedByUs = true;
    const tls = this.#tls;
    this.#ppp?.close();
    if (tls && !tls.destroyed) {
      this.#sendRaw(encodeControl(MsgType.CALL_DISCONNECT));
      const linger = setTimeout(() => tls.destroy(), DISCONNECT_LINGER_MS);
      linger.unref();
      tls.once('close', () => clearTimeout(linger));
      tls.end();
    }
    this.#teardown('closed');
  }

  #wire(tls: TLSSocket, rest: Buffer): void {
    const reader = new SstpReader();
    const onBytes = (chunk: Buffer): void => {
      this.stats.bytesIn += chunk.length;
      this.#lastRecv = Date.now();
      this.#rx = [];
      try {
        for (const raw of reader.push(chunk)) this.#onPacket(decodePacket(raw));
      } catch (err) {
        this.#rx = null;
        this.#fatal(err as Error);
        return;
      }
      const batch = this.#rx;
      this.#rx = null;
      if (batch.length > 0) this.emit('packets', batch);
    };
    tls.on('data', onBytes);
    tls.on('error', (err: Error) =>
      this.#fatal(
        new GatehopError(ErrorCodes.EGRESS_FAILED, `SSTP connection to ${this.#where}: ${err.message}`, { cause: err }),
      ),
    );
    tls.on('close', () => {
      if (!this.#closedByUs)
        this.#fatal(new GatehopError(ErrorCodes.EGRESS_FAILED, `${this.#where} closed the SSTP connection`));
    });
    if (rest.length) onBytes(rest);
    tls.resume();
  }

  #onPacket(p: SstpPacket): void {
    if (!p.control) {
      this.stats.packetsIn++;
      this.#ppp?.input(p.data, Date.now());
      return;
    }
    switch (p.type) {
      case MsgType.CALL_CONNECT_ACK:
        return this.#onConnectAck(p);
      case MsgType.CALL_CONNECT_NAK:
        return this.#callEnded('refused', p);
      case MsgType.ECHO_REQUEST:
        return this.#sendRaw(encodeControl(MsgType.ECHO_RESPONSE));
      case MsgType.ECHO_RESPONSE:
        return;
      case MsgType.CALL_ABORT:
        return this.#callEnded('aborted', p);
      case MsgType.CALL_DISCONNECT:
        this.#sendRaw(encodeControl(MsgType.CALL_DISCONNECT_ACK));
        return this.#fatal(new GatehopError(ErrorCodes.SSTP_REFUSED, `${this.#where} ended the SSTP call`));
      case MsgType.CALL_DISCONNECT_ACK:
        return;
      default:
        this.#log.debug({ event: 'sstp-unknown-message', type: p.type }, `SSTP: ignoring message type ${p.type}`);
    }
  }

  /** The server refused or aborted the call: the status it gave says why. */
  #callEnded(how: 'refused' | 'aborted', p: Extract<SstpPacket, { control: true }>): void {
    this.#fatal(
      new GatehopError(
        ErrorCodes.SSTP_REFUSED,
        `${this.#where} ${how} the SSTP call: ${describeStatus(statusInfoOf(p))}`,
      ),
    );
  }

  #onConnectAck(p: Extract<SstpPacket, { control: true }>): void {
    if (this.#ppp) return; // a repeat
    const req = parseCryptoBindingRequest(p);
    const hash = pickBindingHash(req.hashBitmask);
    if (!hash)
      throw new GatehopError(
        ErrorCodes.SSTP_PROTOCOL,
        `${this.#where} offers no hash we know for the crypto binding (bitmask ${req.hashBitmask})`,
      );
    this.#binding = { hash, nonce: req.nonce, certDer: this.#binding!.certDer };
    const ppp = new PppLink({
      username: this.opts.username ?? 'vpn',
      password: this.opts.password ?? 'vpn',
      auth: this.opts.auth ?? ['mschapv2', 'pap'],
      send: (frame) => this.#sendRaw(encodeData(frame)),
      logger: this.#log,
    });
    this.#ppp = ppp;
    ppp.on('authenticated', (a) => this.#sendCallConnected(a));
    ppp.on('up', (up) => this.#onUp(up));
    ppp.on('packet', (pkt) => {
      if (this.#rx) this.#rx.push(pkt);
      else this.emit('packets', [pkt]);
    });
    ppp.on('down', (err) => this.#fatal(err));
    ppp.start(Date.now());
  }

  /** After PPP authentication, as [MS-SSTP] 3.2.5.2 orders: the crypto binding ties TLS to PPP. */
  #sendCallConnected(a: PppAuthenticated): void {
    const b = this.#binding!;
    const proto = b.hash === 'sha256' ? HASH_SHA256 : HASH_SHA1;
    const certHash = certHashField(b.certDer, b.hash);
    const zeroMac = callConnected(proto, b.nonce, certHash, Buffer.alloc(32));
    const mac = compoundMac(hlakOf(a.keys), zeroMac, b.hash);
    this.#sendRaw(callConnected(proto, b.nonce, certHash, mac));
  }

  #onUp(up: PppUp): void {
    const config: SstpLinkConfig = {
      address: up.address,
      gateway: up.peerAddress,
      dns: up.dns,
      mtu: up.mtu,
      auth: up.auth,
      bindingHash: this.#binding!.hash,
      tlsProtocol: this.#tlsProtocol,
    };
    this.config = config;
    this.#setState('CONNECTED', `IPv4 ${up.address} (${up.auth})`);
    this.#log.info(
      {
        event: 'sstp-connected',
        server: this.#where,
        address: up.address,
        gateway: up.peerAddress,
        dns: up.dns,
        auth: up.auth,
        tls: this.#tlsProtocol,
      },
      `SSTP tunnel to ${this.#where} is up: ${up.address}`,
    );
    this.#settle?.resolve(config);
    this.#settle = null;
  }

  #tick(): void {
    const now = Date.now();
    this.#ppp?.tick(now);
    if (this.#state === 'CONNECTED' && now - this.#lastRecv >= HELLO_MS && now - this.#lastSent >= HELLO_MS) {
      this.stats.echoRequests++;
      this.#sendRaw(encodeControl(MsgType.ECHO_REQUEST));
    }
  }

  #sendRaw(bytes: Buffer): void {
    const tls = this.#tls;
    if (!tls || tls.destroyed || !tls.writable) return;
    // IP packets stop at MAX_QUEUED (dropped, as a full link drops them); what we owe the server
    // (echo replies, PPP answers) may go a little past it, no further: a server that asks and
    // never reads would otherwise grow this buffer without end.
    if (tls.writableLength + bytes.length > MAX_PEER_BACKLOG) {
      this.#fatal(
        new GatehopError(
          ErrorCodes.BUFFER_OVERFLOW,
          `${this.#where} stopped reading: ${tls.writableLength} bytes are waiting to be sent to it`,
        ),
      );
      return;
    }
    this.stats.bytesOut += bytes.length;
    this.#lastSent = Date.now();
    // What one turn of the event loop sends goes out together: corked until its end, then one
    // TLS write (one record, one syscall) instead of one per packet.
    if (!tls.writableCorked) {
      tls.cork();
      queueMicrotask(() => tls.uncork());
    }
    tls.write(bytes);
  }

  #fatal(err: Error): void {
    if (this.#state === 'DISCONNECTED' && !this.#settle) return;
    this.#log.info(
      { event: 'sstp-down', server: this.#where, err: err.message },
      `SSTP with ${this.#where}: ${err.message}`,
    );
    const settle = this.#settle;
    this.#settle = null;
    this.#tls?.destroy();
    this.#teardown(err.message);
    if (settle) settle.reject(err);
    else if (!this.#closedByUs) this.emit('error', err);
  }

  #teardown(reason: string): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#ppp?.removeAllListeners();
    const wasUp = this.#state !== 'DISCONNECTED';
    this.#state = 'DISCONNECTED';
    if (wasUp) this.emit('state', 'DISCONNECTED', reason);
    const settle = this.#settle;
    this.#settle = null;
    settle?.reject(new GatehopError(ErrorCodes.EGRESS_CLOSED, `SSTP with ${this.#where}: ${reason}`));
  }

  #setState(s: SstpState, reason: string): void {
    if (this.#state === s) return;
    this.#state = s;
    this.emit('state', s, reason);
  }
}
