/**
 * A constructed SoftEther Stable 4.x (VPN Gate) OpenVPN endpoint over UDP, built from the notes
 * (openvpn-protocol-notes.md §2–§5): it answers a client hard reset once, is stop-and-wait, runs
 * TLS with key-method 2, picks the cipher from the client's options string the way Stable ≤ 4.43
 * does (no AEAD: anything else becomes AES-128-CBC), sends its PUSH_REPLY on its own in the net30
 * form (`ifconfig ip ip+1`, ping 3, ping-restart 10) and again for every later PUSH_REQUEST, and
 * speaks P_DATA_V1 only. It records what the client sent so a test can check the Stable rules:
 * never more than 4 acks, never a second hard reset once answered. A fake for unit tests; the
 * rig's real SoftEther server is what the e2e tests use.
 */
import { randomBytes } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import {
  DataChannel,
  decodeControl,
  encodeControl,
  Op,
  openvpnPrfKeys,
  type ControlPacket,
} from '../../core/ovpn/index.js';

export interface StableServerOptions {
  cert: string;
  key: string;
  /** Ignore the hard resets of the first N client sessions (a lost server reset, notes §2.4). */
  ignoreSessions?: number;
  /** The PUSH_REPLY sent (default: Stable's net30 form). */
  pushReply?: string;
  /**
   * After its hard reset, no TLS. 'drop': not even an ack (a filter that drops the handshake on
   * the way: what a client may not take for a refusal). 'ack': the ClientHello acknowledged and
   * then nothing (an OpenVPN server that does not speak the client's TLS versions: a refusal).
   */
  silentTls?: 'drop' | 'ack';
}

const STABLE_CIPHERS = new Set(['AES-128-CBC', 'AES-192-CBC', 'AES-256-CBC']);
export const STABLE_PUSH_REPLY =
  'PUSH_REPLY,ping 3,ping-restart 10,ifconfig 10.211.1.5 10.211.1.6,dhcp-option DNS 10.211.1.6,route-gateway 10.211.1.6,redirect-gateway def1';

function str(s: string): Buffer {
  const body = Buffer.from(`${s}\0`);
  const len = Buffer.alloc(2);
  len.writeUInt16BE(body.length);
  return Buffer.concat([len, body]);
}

function readStr(b: Buffer, o: number): { value: string; next: number } {
  const n = b.readUInt16BE(o);
  return { value: b.toString('utf8', o + 2, o + 2 + n).replace(/\0+$/, ''), next: o + 2 + n };
}

export class StableServer {
  readonly received: ControlPacket[] = [];
  readonly sessionsSeen: string[] = [];
  readonly dataIn: Buffer[] = [];
  clientOptions = '';
  chosenCipher = '';
  pushRequests = 0;
  readonly #sock: Socket;
  #peer: RemoteInfo | null = null;
  readonly #sid = randomBytes(8);
  #clientSid: Buffer | null = null;
  #sendSeq = 0;
  #inFlight: { msgId: number; wire: Buffer } | null = null;
  readonly #queue: Buffer[] = [];
  #recvNext = 1;
  #tls: TLSSocket | null = null;
  #tlsIn: Duplex | null = null;
  #plain = Buffer.alloc(0);
  #data: DataChannel | null = null;
  #pushTimer: NodeJS.Timeout | null = null;
  #resendTimer: NodeJS.Timeout | null = null;

  private constructor(private readonly opts: StableServerOptions) {
    this.#sock = createSocket('udp4');
    this.#sock.on('message', (m, r) => this.#onMessage(m, r));
  }

  static async start(opts: StableServerOptions): Promise<StableServer> {
    const s = new StableServer(opts);
    await new Promise<void>((resolve) => s.#sock.bind(0, '127.0.0.1', resolve));
    return s;
  }

  get port(): number {
    return this.#sock.address().port;
  }

  /** Sends one IP packet to the client on the data channel. */
  sendData(payload: Buffer): void {
    this.#send(this.#data!.encrypt(payload));
  }

  close(): void {
    if (this.#pushTimer) clearTimeout(this.#pushTimer);
    if (this.#resendTimer) clearInterval(this.#resendTimer);
    this.#tls?.destroy();
    this.#sock.close();
  }

  #send(b: Buffer): void {
    if (this.#peer) this.#sock.send(b, this.#peer.port, this.#peer.address);
  }

  #control(opcode: number, msgId: number | null, acks: number[], payload: Buffer = Buffer.alloc(0)): Buffer {
    return encodeControl({
      opcode,
      keyId: 0,
      sessionId: this.#sid,
      acks,
      peerSessionId: acks.length ? this.#clientSid : null,
      messageId: msgId,
      payload,
    });
  }

  #onMessage(msg: Buffer, rinfo: RemoteInfo): void {
    const op = msg[0]! >> 3;
    if (op === Op.DATA_V1) {
      const plain = this.#data?.decrypt(msg);
      if (plain) this.dataIn.push(plain);
      return;
    }
    const p = decodeControl(msg);
    if (!p) return;
    this.received.push(p);
    if (p.acks.length > 4) return; // Stable drops the whole packet
    if (op === Op.CONTROL_HARD_RESET_CLIENT_V2) {
      const sid = p.sessionId.toString('hex');
      if (!this.sessionsSeen.includes(sid)) this.sessionsSeen.push(sid);
      if (this.sessionsSeen.indexOf(sid) < (this.opts.ignoreSessions ?? 0)) return; // its reset was "lost"
      if (this.#clientSid?.equals(p.sessionId)) return; // answered once, never again
      this.#peer = rinfo;
      this.#clientSid = p.sessionId;
      this.#send(this.#control(Op.CONTROL_HARD_RESET_SERVER_V2, this.#sendSeq++, [p.messageId!]));
      this.#startTls();
      return;
    }
    if (!this.#clientSid || !p.sessionId.equals(this.#clientSid)) return;
    if (this.opts.silentTls === 'drop') return;
    if (this.opts.silentTls === 'ack') {
      if (op === Op.CONTROL_V1 && p.messageId !== null) this.#send(this.#control(Op.ACK_V1, null, [p.messageId]));
      return;
    }
    if (this.#inFlight && p.acks.includes(this.#inFlight.msgId)) {
      this.#inFlight = null;
      this.#pump();
    }
    if (op !== Op.CONTROL_V1 || p.messageId === null) return;
    this.#send(this.#control(Op.ACK_V1, null, [p.messageId]));
    if (p.messageId === this.#recvNext) {
      this.#recvNext++;
      this.#tlsIn!.push(Buffer.from(p.payload));
    }
  }

  /** Stop-and-wait, as Stable is towards UDP clients. */
  #pump(): void {
    if (this.#inFlight || this.#queue.length === 0) return;
    const msgId = this.#sendSeq++;
    const wire = this.#control(Op.CONTROL_V1, msgId, [], this.#queue.shift()!);
    this.#inFlight = { msgId, wire };
    this.#send(wire);
  }

  #startTls(): void {
    const server = this;
    this.#tlsIn = new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        for (let o = 0; o < chunk.length; o += 1100) server.#queue.push(chunk.subarray(o, o + 1100));
        server.#pump();
        cb();
      },
    });
    this.#resendTimer = setInterval(() => this.#inFlight && this.#send(this.#inFlight.wire), 500);
    this.#tls = new TLSSocket(this.#tlsIn, { isServer: true, cert: this.opts.cert, key: this.opts.key });
    this.#tls.on('error', () => {});
    this.#tls.on('data', (c: Buffer) => this.#onPlain(c));
  }

  #onPlain(chunk: Buffer): void {
    this.#plain = Buffer.concat([this.#plain, chunk]);
    if (!this.#data && this.#plain.length >= 119) {
      const preMaster = this.#plain.subarray(5, 53);
      const cRandom1 = this.#plain.subarray(53, 85);
      const cRandom2 = this.#plain.subarray(85, 117);
      const options = readStr(this.#plain, 117);
      this.clientOptions = options.value;
      const asked = /(?:^|,)cipher ([^,]+)/.exec(options.value)?.[1]?.toUpperCase() ?? '';
      this.chosenCipher = STABLE_CIPHERS.has(asked) ? asked : 'AES-128-CBC';
      const sRandom1 = randomBytes(32);
      const sRandom2 = randomBytes(32);
      const reply = `V4,dev-type tun,link-mtu 1542,tun-mtu 1500,proto UDPv4,cipher ${this.chosenCipher},auth SHA1,keysize ${this.chosenCipher.slice(4, 7)},key-method 2,tls-server`;
      this.#tls!.write(
        Buffer.concat([Buffer.from([0, 0, 0, 0, 2]), sRandom1, sRandom2, str(reply), Buffer.from([0, 0, 0, 0])]),
      );
      const key2 = openvpnPrfKeys({
        preMaster,
        clientRandom1: cRandom1,
        serverRandom1: sRandom1,
        clientRandom2: cRandom2,
        serverRandom2: sRandom2,
        clientSessionId: this.#clientSid!,
        serverSessionId: this.#sid,
      });
      // The server's view: it encrypts with the client's decrypt keys and the other way round.
      this.#data = new DataChannel(
        this.chosenCipher,
        'SHA1',
        {
          encryptCipher: key2.subarray(128, 192),
          encryptHmac: key2.subarray(192, 256),
          decryptCipher: key2.subarray(0, 64),
          decryptHmac: key2.subarray(64, 128),
        },
        0,
        null,
      );
      this.#plain = Buffer.alloc(0);
      // Stable authenticates and asks DHCP after the first PUSH_REQUEST, then pushes on its own.
      return;
    }
    let nul: number;
    while ((nul = this.#plain.indexOf(0)) >= 0) {
      const text = this.#plain.toString('utf8', 0, nul);
      this.#plain = this.#plain.subarray(nul + 1);
      if (!text.startsWith('PUSH_REQUEST')) continue;
      this.pushRequests++;
      if (this.pushRequests === 1)
        this.#pushTimer = setTimeout(() => this.#tls?.write(`${this.opts.pushReply ?? STABLE_PUSH_REPLY}\0`), 300);
      else this.#tls!.write(`${this.opts.pushReply ?? STABLE_PUSH_REPLY}\0`); // the stored reply again
    }
  }
}
