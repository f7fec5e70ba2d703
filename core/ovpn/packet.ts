/** OpenVPN wire packets (openvpn-protocol-notes §2): opcodes, control and ack layouts. */
import { ErrorCodes, GatehopError } from '../common/index.js';

export const Op = {
  CONTROL_SOFT_RESET_V1: 3,
  CONTROL_V1: 4,
  ACK_V1: 5,
  DATA_V1: 6,
  CONTROL_HARD_RESET_CLIENT_V2: 7,
  CONTROL_HARD_RESET_SERVER_V2: 8,
  DATA_V2: 9,
} as const;

/** SoftEther (Stable and the Debian 5.01 build) drops any packet with more than 4 acks. */
export const MAX_ACKS = 4;

export interface ControlPacket {
  opcode: number;
  keyId: number;
  sessionId: Buffer;
  acks: number[];
  /** Present when acks are: the receiver's session id. */
  peerSessionId: Buffer | null;
  /** Absent in P_ACK_V1. */
  messageId: number | null;
  payload: Buffer;
}

export function opcodeOf(byte0: number): number {
  return byte0 >> 3;
}

export function encodeControl(p: ControlPacket): Buffer {
  const acks = p.acks.slice(0, MAX_ACKS);
  const size =
    1 + 8 + 1 + acks.length * 4 + (acks.length > 0 ? 8 : 0) + (p.messageId === null ? 0 : 4) + p.payload.length;
  const b = Buffer.allocUnsafe(size);
  let o = 0;
  b[o++] = (p.opcode << 3) | (p.keyId & 7);
  p.sessionId.copy(b, o);
  o += 8;
  b[o++] = acks.length;
  for (const a of acks) {
    b.writeUInt32BE(a >>> 0, o);
    o += 4;
  }
  if (acks.length > 0) {
    p.peerSessionId!.copy(b, o);
    o += 8;
  }
  if (p.messageId !== null) {
    b.writeUInt32BE(p.messageId >>> 0, o);
    o += 4;
  }
  p.payload.copy(b, o);
  return b;
}

/** Parses a control or ack packet; null for anything malformed (dropped and counted by the caller). */
export function decodeControl(b: Buffer): ControlPacket | null {
  if (b.length < 10) return null;
  const opcode = opcodeOf(b[0]!);
  if (opcode === Op.DATA_V1 || opcode === Op.DATA_V2 || opcode < 3 || opcode > 8) return null;
  const n = b[9]!;
  if (n > 8) return null;
  let o = 10;
  if (b.length < o + n * 4 + (n > 0 ? 8 : 0)) return null;
  const acks: number[] = [];
  for (let i = 0; i < n; i++, o += 4) acks.push(b.readUInt32BE(o));
  let peerSessionId: Buffer | null = null;
  if (n > 0) {
    peerSessionId = Buffer.from(b.subarray(o, o + 8));
    o += 8;
  }
  let messageId: number | null = null;
  if (opcode !== Op.ACK_V1) {
    if (b.length < o + 4) return null;
    messageId = b.readUInt32BE(o);
    o += 4;
  }
  return {
    opcode,
    keyId: b[0]! & 7,
    sessionId: Buffer.from(b.subarray(1, 9)),
    acks,
    peerSessionId,
    messageId,
    payload: Buffer.from(b.subarray(o)),
  };
}

/** TCP framing: [u16 length][packet]. Records above `max` end the connection (SoftEther: 2000). */
const EMPTY = Buffer.alloc(0);

export class TcpRecordReader {
  #buf: Buffer = EMPTY;

  constructor(private readonly max = 2048) {}

  /**
   * Returns complete records, or throws on an impossible length. Records are views of the chunks
   * (no copy per record): the caller owns them, and the data path decrypts them in place.
   */
  push(chunk: Buffer): Buffer[] {
    const buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const out: Buffer[] = [];
    let at = 0;
    while (buf.length - at >= 2) {
      const n = buf.readUInt16BE(at);
      if (n === 0 || n > this.max)
        throw new GatehopError(ErrorCodes.OVPN_PROTOCOL, `TCP record of ${n} bytes (allowed 1..${this.max})`);
      if (buf.length - at < 2 + n) break;
      out.push(buf.subarray(at + 2, at + 2 + n));
      at += 2 + n;
    }
    this.#buf = at === buf.length ? EMPTY : buf.subarray(at);
    return out;
  }
}

export function frameTcp(packet: Buffer): Buffer {
  const head = Buffer.allocUnsafe(2);
  head.writeUInt16BE(packet.length);
  return Buffer.concat([head, packet]);
}

/**
 * A carrier's packets in arrival order: each run of one key's data packets handed over as one
 * batch (opened together), each control packet on its own, empty ones skipped. Stops as soon as
 * `live()` turns false (a packet handled before tore the transport down).
 */
export function demuxRuns(
  packets: readonly Buffer[],
  h: { live(): boolean; counted(packet: Buffer): void; data(run: Buffer[]): void; control(packet: Buffer): void },
): void {
  let run: Buffer[] = [];
  for (const packet of packets) {
    if (!h.live()) return;
    h.counted(packet);
    if (packet.length === 0) continue;
    const op = packet[0]! >> 3;
    if (op === Op.DATA_V1 || op === Op.DATA_V2) {
      if (run.length > 0 && (run[0]![0]! & 7) !== (packet[0]! & 7)) {
        h.data(run);
        run = [];
      }
      run.push(packet);
      continue;
    }
    if (run.length > 0) {
      h.data(run);
      run = [];
    }
    h.control(packet);
  }
  if (run.length > 0 && h.live()) h.data(run);
}
