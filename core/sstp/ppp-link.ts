/**
 * The client side of PPP inside SSTP (RFC 1661 LCP, RFC 2759 MS-CHAPv2 or RFC 1334 PAP, RFC 1332
 * IPCP with RFC 1877 DNS), in user space: IPv4 packets come out as 'packet' events and go in with
 * writeIp(). It is driven from outside: input() with each frame, tick() with the time (the owner's
 * one timer), so it holds no timers of its own and is tested with a fake clock.
 *
 * What VPN Gate's SoftEther does, and this follows (core/sstp/README.md): it asks for EAP, then
 * MS-CHAPv2, then PAP, moving on when we Nak; it rejects LCP options it does not know (the magic
 * number among them); it answers our IPCP request only after we acked its own; a retransmitted
 * request must keep its Identifier.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import { answerChallenge, chapOutcome, type ChapAnswer } from './chap-client.js';
import {
  bufferToIpv4,
  Code,
  decodeCp,
  decodeFrame,
  decodeOptions,
  encodeCp,
  encodeFrame,
  encodeOptions,
  Proto,
  type CpOption,
} from './ppp-codec.js';

export type PppAuth = 'mschapv2' | 'pap';

export interface PppLinkOptions {
  username: string;
  password: string;
  /** The methods we accept, best first (MS-CHAPv2 gives keys for the crypto binding; PAP does not). */
  auth: readonly PppAuth[];
  /** Hands a PPP frame to the carrier (an SSTP data packet). */
  send: (frame: Buffer) => void;
  logger: Logger;
  /** The largest packet we take (our MRU). */
  mru?: number;
  /** Retransmission interval of our requests, and how many tries a negotiation gets. */
  restartMs?: number;
  maxTries?: number;
  /** An LCP echo after this long without a frame from the server. */
  echoAfterMs?: number;
  random?: (n: number) => Buffer;
}

export interface PppUp {
  address: string;
  /** The server's end (from its IPCP request), the tunnel's gateway. */
  peerAddress: string | null;
  dns: string[];
  /** What we may send: the server's MRU. */
  mtu: number;
  auth: PppAuth | 'none';
}

export interface PppAuthenticated {
  auth: PppAuth | 'none';
  /** The client's MPPE keys (MS-CHAPv2 only): the crypto binding's HLAK. */
  keys: { sendKey: Buffer; recvKey: Buffer } | null;
}

export type PppPhase = 'dead' | 'establish' | 'authenticate' | 'network' | 'open' | 'terminate';

interface Pending {
  protocol: number;
  id: number;
  bytes: Buffer;
  options: CpOption[];
  sentAt: number;
  tries: number;
  acked: boolean;
}

const MSCHAPV2_OPTION = Buffer.from([0xc2, 0x23, 0x81]);
const PAP_OPTION = Buffer.from([0xc0, 0x23]);
const LCP_MRU = 1;
const LCP_AUTH = 3;
const LCP_MAGIC = 5;
const IPCP_ADDRESS = 3;
const IPCP_DNS1 = 129;
const IPCP_DNS2 = 131;
/** LCP options we can take as the server proposes them (ACCM means nothing over SSTP). */
const LCP_ACCEPTED = new Set([LCP_MRU, 2 /* ACCM */, LCP_AUTH, LCP_MAGIC]);

export class PppLink extends EventEmitter<{
  authenticated: [PppAuthenticated];
  up: [PppUp];
  packet: [Buffer];
  down: [GatehopError];
}> {
  #phase: PppPhase = 'dead';
  #nextId = 1;
  #lcp: Pending | null = null;
  #ipcp: Pending | null = null;
  #pap: Pending | null = null;
  #peerLcpAcked = false;
  #peerIpcpAcked = false;
  #peerAuth: PppAuth | 'none' = 'none';
  #peerMru = 1500;
  #peerAddress: string | null = null;
  #magic: Buffer;
  #magicRejected = false;
  /** The MS-CHAPv2 response we sent, by Challenge identifier: a repeated Challenge gets the same answer. */
  #chap: ChapAnswer | null = null;
  #lastHeard = 0;
  #lastEcho = 0;
  #ended = false;
  readonly #o: Required<Omit<PppLinkOptions, 'logger' | 'send'>> & Pick<PppLinkOptions, 'logger' | 'send'>;
  readonly stats = { framesIn: 0, framesOut: 0, ipIn: 0, ipOut: 0, echoesSent: 0, protocolRejects: 0 };

  constructor(opts: PppLinkOptions) {
    super();
    this.#o = { mru: 1500, restartMs: 3000, maxTries: 10, echoAfterMs: 5000, random: randomBytes, ...opts };
    this.#magic = this.#o.random(4);
  }

  get phase(): PppPhase {
    return this.#phase;
  }

  start(now: number): void {
    if (this.#phase !== 'dead') return;
    this.#phase = 'establish';
    this.#lastHeard = now;
    this.#sendLcpRequest(now);
  }

  /** One PPP frame from the server. */
  input(frame: Buffer, now: number): void {
    if (this.#ended) return;
    this.stats.framesIn++;
    this.#lastHeard = now;
    try {
      const { protocol, payload } = decodeFrame(frame);
      if (protocol === Proto.IPV4) {
        if (this.#phase === 'open') {
          this.stats.ipIn++;
          this.emit('packet', payload);
        }
        return;
      }
      if (protocol === Proto.LCP) return this.#onLcp(payload, now);
      if (protocol === Proto.CHAP) return this.#onChap(payload);
      if (protocol === Proto.PAP) return this.#onPap(payload);
      if (protocol === Proto.IPCP) return this.#onIpcp(payload, now);
      // IPv6CP, CCP, EAP and anything else: refused with a Protocol-Reject once LCP is up.
      if (this.#phase !== 'establish' && this.#phase !== 'dead') this.#protocolReject(protocol, payload);
    } catch (err) {
      this.#fail(
        err instanceof GatehopError
          ? err
          : new GatehopError(ErrorCodes.SSTP_PROTOCOL, (err as Error).message, { cause: err }),
      );
    }
  }

  /** Retransmissions and keepalive; call about once a second. */
  tick(now: number): void {
    if (this.#ended) return;
    for (const p of [this.#lcp, this.#pap, this.#ipcp]) {
      if (!p || p.acked || now - p.sentAt < this.#o.restartMs) continue;
      if (p.tries >= this.#o.maxTries) {
        const what = p.protocol === Proto.LCP ? 'LCP' : p.protocol === Proto.IPCP ? 'IPCP' : 'PAP';
        return this.#fail(
          new GatehopError(
            p.protocol === Proto.PAP ? ErrorCodes.SSTP_AUTH_FAILED : ErrorCodes.SSTP_PROTOCOL,
            `${what}: no answer after ${p.tries} tries`,
          ),
        );
      }
      // The same Identifier and bytes: SoftEther treats a new Identifier as a new request.
      p.tries++;
      p.sentAt = now;
      this.#send(p.protocol, p.bytes);
    }
    if (
      this.#phase === 'open' &&
      now - this.#lastHeard >= this.#o.echoAfterMs &&
      now - this.#lastEcho >= this.#o.echoAfterMs
    ) {
      this.#lastEcho = now;
      this.stats.echoesSent++;
      this.#send(Proto.LCP, encodeCp(Code.ECHO_REQ, this.#id(), this.#ourMagic()));
    }
  }

  writeIp(packet: Buffer): void {
    if (this.#phase !== 'open') return;
    this.stats.ipOut++;
    this.#send(Proto.IPV4, packet);
  }

  /** Ends the link politely: one Terminate-Request (the carrier closes right after). */
  close(): void {
    if (this.#ended) return;
    if (this.#phase !== 'dead') this.#send(Proto.LCP, encodeCp(Code.TERM_REQ, this.#id()));
    this.#phase = 'terminate';
    this.#ended = true;
  }

  // ---- LCP ----

  #sendLcpRequest(now: number, options?: CpOption[]): void {
    const mru = Buffer.alloc(2);
    mru.writeUInt16BE(this.#o.mru, 0);
    const opts = options ?? [
      { type: LCP_MRU, value: mru },
      ...(this.#magicRejected ? [] : [{ type: LCP_MAGIC, value: this.#magic }]),
    ];
    this.#lcp = this.#request(Proto.LCP, opts, now);
  }

  #onLcp(payload: Buffer, now: number): void {
    const p = decodeCp(payload);
    switch (p.code) {
      case Code.CONF_REQ:
        return this.#onPeerLcpRequest(p.id, decodeOptions(p.data), now);
      case Code.CONF_ACK:
        if (this.#lcp && p.id === this.#lcp.id) {
          this.#lcp.acked = true;
          this.#lcpMaybeOpen(now);
        }
        return;
      case Code.CONF_NAK:
      case Code.CONF_REJ: {
        if (!this.#lcp || p.id !== this.#lcp.id) return;
        const named = decodeOptions(p.data);
        let opts = this.#lcp.options;
        if (p.code === Code.CONF_REJ) {
          const gone = new Set(named.map((o) => o.type));
          if (gone.has(LCP_MAGIC)) this.#magicRejected = true;
          opts = opts.filter((o) => !gone.has(o.type));
        } else {
          for (const n of named) {
            // An MRU the server wants us to take instead: within reason, or dropped (1500 is the default).
            if (n.type === LCP_MRU && n.value.length === 2) {
              const v = n.value.readUInt16BE(0);
              opts = opts.filter((o) => o.type !== LCP_MRU);
              if (v >= 576 && v <= 1500) opts.push({ type: LCP_MRU, value: n.value });
            } else if (n.type === LCP_MAGIC)
              opts = opts.map((o) =>
                o.type === LCP_MAGIC ? { type: LCP_MAGIC, value: (this.#magic = this.#o.random(4)) } : o,
              );
          }
        }
        return this.#sendLcpRequest(now, opts);
      }
      case Code.TERM_REQ:
        this.#send(Proto.LCP, encodeCp(Code.TERM_ACK, p.id));
        return this.#fail(
          new GatehopError(ErrorCodes.SSTP_REFUSED, 'the server ended the PPP link (LCP Terminate-Request)'),
        );
      case Code.TERM_ACK:
        return;
      case Code.ECHO_REQ:
        if (this.#phase === 'establish') return; // RFC 1661: only in the Opened state
        return this.#send(
          Proto.LCP,
          encodeCp(Code.ECHO_REPLY, p.id, Buffer.concat([this.#ourMagic(), p.data.subarray(4)])),
        );
      case Code.ECHO_REPLY:
      case Code.DISCARD_REQ:
      case Code.IDENTIFICATION:
      case Code.TIME_REMAINING:
        return;
      case Code.CODE_REJ:
        return this.#fail(
          new GatehopError(ErrorCodes.SSTP_PROTOCOL, `the server rejected LCP code ${p.data[0] ?? '?'}`),
        );
      case Code.PROTO_REJ: {
        const rejected = p.data.length >= 2 ? p.data.readUInt16BE(0) : 0;
        if (rejected === Proto.IPCP || rejected === Proto.IPV4)
          return this.#fail(
            new GatehopError(ErrorCodes.SSTP_PROTOCOL, 'the server does not carry IPv4 (it rejected IPCP)'),
          );
        return;
      }
      default:
        // An unknown code is returned whole in a Code-Reject (RFC 1661 5.6).
        return this.#send(
          Proto.LCP,
          encodeCp(Code.CODE_REJ, this.#id(), payload.subarray(0, Math.min(payload.length, this.#peerMru - 4))),
        );
    }
  }

  #onPeerLcpRequest(id: number, options: CpOption[], now: number): void {
    const reject = options.filter((o) => !LCP_ACCEPTED.has(o.type));
    if (reject.length > 0) return this.#send(Proto.LCP, encodeCp(Code.CONF_REJ, id, encodeOptions(reject)));
    const nak: CpOption[] = [];
    let auth: PppAuth | 'none' = 'none';
    let mru = 1500;
    for (const o of options) {
      if (o.type === LCP_AUTH) {
        const m = methodOf(o.value);
        if (m && this.#o.auth.includes(m)) auth = m;
        // EAP, CHAP-MD5 or a method we refuse: ask for the best one we take.
        else nak.push({ type: LCP_AUTH, value: this.#o.auth[0] === 'pap' ? PAP_OPTION : MSCHAPV2_OPTION });
      } else if (o.type === LCP_MRU && o.value.length === 2) mru = o.value.readUInt16BE(0);
    }
    if (nak.length > 0) return this.#send(Proto.LCP, encodeCp(Code.CONF_NAK, id, encodeOptions(nak)));
    this.#send(Proto.LCP, encodeCp(Code.CONF_ACK, id, encodeOptions(options)));
    this.#peerAuth = auth;
    this.#peerMru = Math.max(576, Math.min(mru, 1500));
    this.#peerLcpAcked = true;
    // A Configure-Request after LCP was up starts it again (RFC 1661): so does ours.
    if (this.#phase !== 'establish') {
      this.#phase = 'establish';
      this.#sendLcpRequest(now);
      return;
    }
    this.#lcpMaybeOpen(now);
  }

  #lcpMaybeOpen(now: number): void {
    if (this.#phase !== 'establish' || !this.#peerLcpAcked || !this.#lcp?.acked) return;
    this.#o.logger.debug({ event: 'ppp-lcp-open', auth: this.#peerAuth, mru: this.#peerMru }, 'PPP: LCP is open');
    if (this.#peerAuth === 'none') return this.#authenticated({ auth: 'none', keys: null }, now);
    this.#phase = 'authenticate';
    if (this.#peerAuth === 'pap') {
      const u = Buffer.from(this.#o.username, 'utf8');
      const pw = Buffer.from(this.#o.password, 'utf8');
      const data = Buffer.concat([Buffer.from([u.length]), u, Buffer.from([pw.length]), pw]);
      const id = this.#id();
      this.#pap = {
        protocol: Proto.PAP,
        id,
        bytes: encodeCp(1, id, data),
        options: [],
        sentAt: now,
        tries: 1,
        acked: false,
      };
      this.#send(Proto.PAP, this.#pap.bytes);
    }
    // MS-CHAPv2: the server speaks first (its Challenge).
  }

  // ---- authentication ----

  #onChap(payload: Buffer): void {
    if (this.#phase !== 'authenticate' || this.#peerAuth !== 'mschapv2') return;
    const p = decodeCp(payload);
    if (p.code === 1) {
      // A repeated challenge gets the same answer.
      if (this.#chap?.id !== p.id) this.#chap = answerChallenge(p, this.#o);
      return this.#send(Proto.CHAP, this.#chap.response);
    }
    if (!this.#chap) return;
    const keys = chapOutcome(p, this.#chap, this.#o.password);
    if (keys) this.#authenticated({ auth: 'mschapv2', keys }, this.#lastHeard);
  }

  #onPap(payload: Buffer): void {
    if (this.#phase !== 'authenticate' || !this.#pap) return;
    const p = decodeCp(payload);
    if (p.id !== this.#pap.id) return;
    const msgLen = p.data[0] ?? 0;
    const message = p.data.subarray(1, 1 + msgLen).toString('latin1');
    if (p.code === 2) {
      this.#pap.acked = true;
      return this.#authenticated({ auth: 'pap', keys: null }, this.#lastHeard);
    }
    if (p.code === 3)
      throw new GatehopError(ErrorCodes.SSTP_AUTH_FAILED, `PAP refused${message ? `: ${message}` : ''}`);
  }

  #authenticated(a: PppAuthenticated, now: number): void {
    this.#o.logger.debug({ event: 'ppp-authenticated', auth: a.auth }, `PPP: authenticated (${a.auth})`);
    this.emit('authenticated', a);
    if (this.#ended) return;
    this.#phase = 'network';
    const zero = Buffer.alloc(4);
    this.#ipcp = this.#request(
      Proto.IPCP,
      [
        { type: IPCP_ADDRESS, value: zero },
        { type: IPCP_DNS1, value: zero },
        { type: IPCP_DNS2, value: zero },
      ],
      now,
    );
  }

  // ---- IPCP ----

  #onIpcp(payload: Buffer, now: number): void {
    if (this.#phase !== 'network' && this.#phase !== 'open') return;
    const p = decodeCp(payload);
    if (p.code === Code.CONF_REQ) {
      const options = decodeOptions(p.data);
      const reject = options.filter((o) => o.type !== IPCP_ADDRESS || o.value.length !== 4);
      if (reject.length > 0) return this.#send(Proto.IPCP, encodeCp(Code.CONF_REJ, p.id, encodeOptions(reject)));
      const addr = options.find((o) => o.type === IPCP_ADDRESS);
      this.#peerAddress = addr && !addr.value.equals(Buffer.alloc(4)) ? bufferToIpv4(addr.value) : null;
      this.#send(Proto.IPCP, encodeCp(Code.CONF_ACK, p.id, p.data));
      this.#peerIpcpAcked = true;
      return this.#ipcpMaybeOpen();
    }
    if (!this.#ipcp || p.id !== this.#ipcp.id) {
      if (p.code === Code.TERM_REQ) this.#send(Proto.IPCP, encodeCp(Code.TERM_ACK, p.id));
      return;
    }
    if (p.code === Code.CONF_ACK) {
      this.#ipcp.acked = true;
      return this.#ipcpMaybeOpen();
    }
    if (p.code === Code.CONF_NAK || p.code === Code.CONF_REJ) {
      const named = decodeOptions(p.data);
      let opts = this.#ipcp.options;
      if (p.code === Code.CONF_REJ) {
        if (named.some((o) => o.type === IPCP_ADDRESS))
          throw new GatehopError(
            ErrorCodes.SSTP_PROTOCOL,
            'the server will not give us an IPv4 address (it rejected IP-Address)',
          );
        const gone = new Set(named.map((o) => o.type));
        opts = opts.filter((o) => !gone.has(o.type));
      } else {
        // The server's values: our address and its DNS servers.
        for (const n of named) {
          if (n.value.length !== 4 || ![IPCP_ADDRESS, IPCP_DNS1, IPCP_DNS2].includes(n.type)) continue;
          opts = [...opts.filter((o) => o.type !== n.type), { type: n.type, value: Buffer.from(n.value) }];
        }
      }
      this.#ipcp = this.#request(Proto.IPCP, opts, now);
    }
  }

  #ipcpMaybeOpen(): void {
    if (this.#phase !== 'network' || !this.#peerIpcpAcked || !this.#ipcp?.acked) return;
    const value = (t: number): string | null => {
      const o = this.#ipcp!.options.find((x) => x.type === t);
      return o && !o.value.equals(Buffer.alloc(4)) ? bufferToIpv4(o.value) : null;
    };
    const address = value(IPCP_ADDRESS);
    if (!address)
      return this.#fail(new GatehopError(ErrorCodes.SSTP_PROTOCOL, 'IPCP finished without an IPv4 address for us'));
    this.#phase = 'open';
    const up: PppUp = {
      address,
      peerAddress: this.#peerAddress,
      dns: [value(IPCP_DNS1), value(IPCP_DNS2)].filter((d): d is string => d !== null),
      mtu: this.#peerMru,
      auth: this.#peerAuth,
    };
    this.#o.logger.debug({ event: 'ppp-up', ...up }, `PPP: IPv4 ${address} is up`);
    this.emit('up', up);
  }

  // ---- helpers ----

  #request(protocol: number, options: CpOption[], now: number): Pending {
    const id = this.#id();
    const bytes = encodeCp(Code.CONF_REQ, id, encodeOptions(options));
    this.#send(protocol, bytes);
    return { protocol, id, bytes, options, sentAt: now, tries: 1, acked: false };
  }

  #protocolReject(protocol: number, payload: Buffer): void {
    this.stats.protocolRejects++;
    const data = Buffer.concat([Buffer.from([protocol >> 8, protocol & 0xff]), payload]);
    this.#send(Proto.LCP, encodeCp(Code.PROTO_REJ, this.#id(), data.subarray(0, this.#peerMru - 4)));
  }

  #ourMagic(): Buffer {
    return this.#magicRejected ? Buffer.alloc(4) : this.#magic;
  }

  #id(): number {
    const id = this.#nextId;
    this.#nextId = (this.#nextId + 1) & 0xff || 1;
    return id;
  }

  #send(protocol: number, payload: Buffer): void {
    this.stats.framesOut++;
    this.#o.send(encodeFrame(protocol, payload));
  }

  #fail(err: GatehopError): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#phase = 'dead';
    this.emit('down', err);
  }
}

function methodOf(v: Buffer): PppAuth | null {
  if (v.equals(MSCHAPV2_OPTION)) return 'mschapv2';
  if (v.equals(PAP_OPTION)) return 'pap';
  return null;
}
