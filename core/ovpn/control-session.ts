import { randomBytes } from 'node:crypto';
import { ErrorCodes, GatehopError } from '../common/index.js';
import { type TrustRule } from '../reach/index.js';
import { optionValue, parsePushOptions, parseServerKeyMethod2 } from './control-messages.js';
import { DataChannel, isSupportedCipher } from './data-channel.js';
import { startControlTls, sendKeyMethod } from './control-tls.js';
import { KeyState } from './key-state.js';
import { openvpnPrfKeys, sliceKey2 } from './keys.js';
import { decodeControl, encodeControl, MAX_ACKS, Op } from './packet.js';
import type { ControlMessage } from './reliable.js';

import type { ControlSessionHost, ControlSessionOptions } from './control-types.js';
export type { ControlSessionHost, ControlSessionOptions, SessionState } from './control-types.js';

const PUSH_REQUEST_EVERY_MS = 3_000;
/** OpenVPN's client default; a profile's `reneg-sec` overrides it, 0 turns our own rekeys off. */
const DEFAULT_RENEG_S = 3600;
/** A renegotiation not finished by then is abandoned and the current key kept (OpenVPN's hand-window). */
const HAND_WINDOW_MS = 60_000;
/** Rekey long before a data packet id could wrap (notes §7.2). */
const PACKET_ID_REKEY = 0xff000000;
const MAX_PLAINTEXT = 16 * 1024;

/**
 * One OpenVPN session's control channel (notes §2–§7): session ids, a reliability layer and a TLS
 * session per key_id, key method 2, the push, and renegotiations either side starts. It knows no
 * transport (the host sends its packets) and no IP: it hands the data channel's keys up.
 */
export class ControlSession {
  readonly #o: ControlSessionOptions;
  readonly #host: ControlSessionHost;
  readonly #localSid = randomBytes(8);
  #remoteSid: Buffer | null = null;
  /** Key states by key_id; #primary sends data, older ones still decrypt (notes §7). */
  readonly #keys = new Map<number, KeyState>();
  #primary: KeyState;
  #ackFlush: NodeJS.Immediate | null = null;
  #pushTimer: NodeJS.Timeout | null = null;
  #pushParts: ReturnType<typeof parsePushOptions> | null = null;
  /** Cipher, auth and derivation fixed on key 0 and reused for every renegotiated key. */
  #negotiated: { cipher: string; tlsEkm: boolean; peerId: number | null } | null = null;
  /** When the server started its recent renegotiations (the last minute's, at most the cap + 1). */
  readonly #serverRenegotiations: number[] = [];
  /** When we start the next renegotiation ourselves; the one in progress, if any. */
  #rekeyAt = Number.POSITIVE_INFINITY;
  #rekeying: { key: KeyState; since: number } | null = null;
  #closed = false;
  #trustRule: TrustRule | null = null;

  constructor(o: ControlSessionOptions, host: ControlSessionHost) {
    this.#o = o;
    this.#host = host;
    this.#primary = this.#newKey(0);
    this.#keys.set(0, this.#primary);
  }

  /** Which rule accepted the server's certificate at the first handshake (null before it). */
  get trustRule(): TrustRule | null {
    return this.#trustRule;
  }

  /** The server has answered our hard reset (a UDP attempt without one starts over). */
  get heardServer(): boolean {
    return this.#remoteSid !== null;
  }

  /** The data channel that seals what we send now; null before the push. */
  get sendingData(): DataChannel | null {
    return this.#primary.data;
  }

  /** The data channel of a key_id, for packets the server sealed under it. */
  dataFor(keyId: number): DataChannel | null {
    return this.#keys.get(keyId)?.data ?? null;
  }

  /** Sends the hard reset that opens the session. */
  start(): void {
    this.#host.state('WAIT', 'sending hard reset');
    this.#primary.rel.send(Op.CONTROL_HARD_RESET_CLIENT_V2, Buffer.alloc(0));
  }

  /** Idempotent; the host hears nothing more from this session. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const k of this.#keys.values()) k.close();
    if (this.#ackFlush) clearImmediate(this.#ackFlush);
    this.#ackFlush = null;
    if (this.#pushTimer) clearInterval(this.#pushTimer);
    this.#pushTimer = null;
  }

  // ---- reliability layer (per key_id, reliable.ts) ----

  #newKey(keyId: number): KeyState {
    const k: KeyState = new KeyState(keyId, {
      // UDP to SoftEther: stop-and-wait (it has no reorder buffer); TCP: a window is fine.
      sendWindow: this.#o.proto === 'udp' ? 1 : 8,
      transmit: (m) => this.#transmit(k, m),
      // Never resend the hard reset once the server answered (a duplicate wipes key 0 on Stable).
      mayRetransmit: (m) => !(m.opcode === Op.CONTROL_HARD_RESET_CLIENT_V2 && this.#remoteSid),
    });
    return k;
  }

  #sendControlRaw(plain: Buffer): void {
    if (this.#closed) return;
    this.#host.sendRaw(this.#o.wrapper ? this.#o.wrapper.wrap(plain) : plain);
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

  /** A control packet from the carrier. */
  onControl(packet: Buffer): void {
    const wrapper = this.#o.wrapper;
    const plain = wrapper ? wrapper.unwrap(packet) : packet;
    const p = plain ? decodeControl(plain) : null;
    if (!p || (this.#remoteSid && !p.sessionId.equals(this.#remoteSid))) {
      this.#host.malformed();
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
        this.#host.malformed();
        return;
      }
      if (!this.#allowServerRenegotiation()) return;
      k = this.#beginKey(p.keyId, 'server started a renegotiation');
    }
    k.rel.acknowledged(p.acks);
    if (p.opcode === Op.ACK_V1) return;
    if (p.messageId === null) {
      this.#host.malformed();
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
      this.#host.malformed();
      return;
    }
    this.#scheduleAcks();
  }

  /** A server renegotiating more often than the cap is dropped: each one costs us a TLS handshake. */
  #allowServerRenegotiation(): boolean {
    const now = Date.now();
    const cap = this.#o.maxServerRenegotiationsPerMinute;
    const recent = this.#serverRenegotiations;
    while (recent.length > 0 && now - recent[0]! > 60_000) recent.shift();
    recent.push(now);
    if (recent.length <= cap) return true;
    this.#host.fatal(
      new GatehopError(
        ErrorCodes.OVPN_PROTOCOL,
        `${this.#o.remoteHost} started ${recent.length} renegotiations within a minute (at most ${cap}): dropped`,
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
    this.#o.logger.info({ event: 'renegotiation', keyId, why }, 'renegotiating data channel keys');
    k.rel.send(Op.CONTROL_SOFT_RESET_V1, Buffer.alloc(0));
    return k;
  }

  // ---- TLS, key method 2 (control-tls.ts), push ----

  #startTls(k: KeyState): void {
    startControlTls(k, {
      o: this.#o,
      host: this.#host,
      trustRule: () => this.#trustRule,
      setTrustRule: (rule) => (this.#trustRule = rule),
      secured: (key) => sendKeyMethod(key, { o: this.#o, host: this.#host }),
      plaintext: (key, chunk) => this.#onPlaintext(key, chunk),
    });
  }

  #onPlaintext(k: KeyState, chunk: Buffer): void {
    k.plain = Buffer.concat([k.plain, chunk]);
    if (k.plain.length > MAX_PLAINTEXT) {
      this.#host.fatal(new GatehopError(ErrorCodes.NETSTACK_FAILED, 'the server sent an oversized control message'));
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
      this.#host.state('GET_CONFIG', 'requesting configuration');
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
      this.#host.fatal(new GatehopError(ErrorCodes.EGRESS_NOT_ALLOWED, `the server refused authentication: ${text}`));
    } else if (text.startsWith('RESTART') || text.startsWith('HALT')) {
      this.#host.fatal(new GatehopError(ErrorCodes.EGRESS_CLOSED, `the server ended the session: ${text}`));
    } else {
      this.#o.logger.debug({ event: 'control-message', text: text.slice(0, 200) }, 'control message ignored');
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
    this.#pushTimer = null;
    const pushed = this.#pushParts!;
    if (!pushed.address) {
      this.#host.fatal(new GatehopError(ErrorCodes.NETSTACK_FAILED, 'the server pushed no address'));
      return;
    }
    if (pushed.cipher && !isSupportedCipher(pushed.cipher)) {
      this.#host.fatal(
        new GatehopError(
          ErrorCodes.PROFILE_INVALID,
          `the server pushed cipher ${pushed.cipher}, which this client does not support`,
        ),
      );
      return;
    }
    const k = this.#primary;
    const serverCipher = optionValue(k.serverKm!.options, 'cipher');
    const p = this.#o.profile;
    const cipher = [pushed.cipher, serverCipher, p.cipher, 'AES-128-CBC']
      .find((c): c is string => !!c && isSupportedCipher(c))!
      .toUpperCase();
    this.#negotiated = { cipher, tlsEkm: pushed.tlsEkm ?? false, peerId: pushed.peerId ?? null };
    k.data = new DataChannel(
      cipher,
      p.auth,
      sliceKey2(this.#deriveKey2(k, this.#negotiated.tlsEkm)),
      0,
      this.#negotiated.peerId,
    );
    this.#rekeying = null;
    this.#scheduleRekey();
    this.#host.configured({
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
    });
  }

  /** A renegotiated key carries traffic from now on; the previous one still decrypts until replaced. */
  #activateKey(k: KeyState): void {
    const n = this.#negotiated!;
    k.data = new DataChannel(
      n.cipher,
      this.#o.profile.auth,
      sliceKey2(this.#deriveKey2(k, n.tlsEkm)),
      k.keyId,
      n.peerId,
    );
    const previous = this.#primary;
    this.#primary = k;
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
    this.#host.renegotiated(k.keyId);
  }

  // ---- renegotiation started by us (notes §7.2) ----

  #scheduleRekey(): void {
    const s = this.#o.profile.renegSec ?? DEFAULT_RENEG_S;
    this.#rekeyAt = s > 0 ? Date.now() + s * 1000 : Number.POSITIVE_INFINITY;
  }

  /** Called every second while the tunnel is up: starts our renegotiation when due, abandons a stuck one. */
  checkRekey(now: number): void {
    const pending = this.#rekeying;
    if (pending) {
      if (now - pending.since < HAND_WINDOW_MS) return;
      this.#o.logger.warn(
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
    if (!why || !this.#negotiated) return;
    // A key the server is negotiating right now (a newer key_id than the primary's) goes first.
    if ([...this.#keys.values()].some((k) => !k.data)) return;
    const keyId = (this.#primary.keyId % 7) + 1; // key_ids wrap 7 -> 1 (0 is the first key's only)
    this.#rekeying = { key: this.#beginKey(keyId, `we start it: ${why}`), since: now };
  }

  // ---- leaving ----

  /**
   * The EXIT control message (a server that pushed `protocol-flags cc-exit`, notes §6.5); what to
   * wait for before the carrier closes, or null when it cannot be sent.
   */
  sendExit(): { msgIdBefore: number } | null {
    const k = this.#primary;
    if (!k.tls || !k.data) return null;
    const msgIdBefore = k.rel.nextSendId;
    k.tls.write('EXIT\0');
    return { msgIdBefore };
  }

  /** The EXIT message has gone out and the server acknowledged everything sent. */
  exitAcknowledged(msgIdBefore: number): boolean {
    const k = this.#primary;
    return k.rel.nextSendId > msgIdBefore && k.rel.idle;
  }
}
