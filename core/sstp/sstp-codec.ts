/**
 * SSTP packets ([MS-SSTP] 2.2): a 4-byte header (version 1.0 = 0x10, the control bit, a 12-bit
 * length that includes the header) and either a PPP frame (data) or a control message (type,
 * attribute count, attributes of reserved/id/12-bit length/value). Everything a server sends is
 * checked: a bad version, a length that does not fit, an attribute that runs past its message
 * is a GH_ERR_SSTP_PROTOCOL error, never an exception of another kind.
 */
import { ErrorCodes, GatehopError } from '../common/index.js';

export const SSTP_VERSION = 0x10;
/** The header's 12-bit length caps a packet at 4095 bytes, header included. */
export const MAX_SSTP_PACKET = 0xfff;

export const MsgType = {
  CALL_CONNECT_REQUEST: 1,
  CALL_CONNECT_ACK: 2,
  CALL_CONNECT_NAK: 3,
  CALL_CONNECTED: 4,
  CALL_ABORT: 5,
  CALL_DISCONNECT: 6,
  CALL_DISCONNECT_ACK: 7,
  ECHO_REQUEST: 8,
  ECHO_RESPONSE: 9,
} as const;

export const AttrId = {
  ENCAPSULATED_PROTOCOL_ID: 1,
  STATUS_INFO: 2,
  CRYPTO_BINDING: 3,
  CRYPTO_BINDING_REQ: 4,
} as const;

export const ENCAPSULATED_PPP = 1;

export interface SstpAttribute {
  id: number;
  value: Buffer;
}

export type SstpPacket =
  { control: false; data: Buffer } | { control: true; type: number; attributes: SstpAttribute[] };

const bad = (what: string): GatehopError =>
  new GatehopError(ErrorCodes.SSTP_PROTOCOL, `malformed SSTP packet: ${what}`);

function header(control: boolean, length: number): Buffer {
  if (length > MAX_SSTP_PACKET)
    throw new GatehopError(
      ErrorCodes.SSTP_PROTOCOL,
      `SSTP packet of ${length} bytes is over the ${MAX_SSTP_PACKET}-byte limit`,
    );
  const h = Buffer.alloc(4);
  h[0] = SSTP_VERSION;
  h[1] = control ? 1 : 0;
  h.writeUInt16BE(length, 2);
  return h;
}

export function encodeData(pppFrame: Buffer): Buffer {
  return Buffer.concat([header(false, pppFrame.length + 4), pppFrame]);
}

export function encodeControl(type: number, attributes: readonly SstpAttribute[] = []): Buffer {
  const attrs = attributes.map((a) => {
    const h = Buffer.alloc(4);
    h[1] = a.id;
    h.writeUInt16BE(a.value.length + 4, 2);
    return Buffer.concat([h, a.value]);
  });
  const body = Buffer.alloc(4);
  body.writeUInt16BE(type, 0);
  body.writeUInt16BE(attributes.length, 2);
  const len = 4 + 4 + attrs.reduce((n, a) => n + a.length, 0);
  return Buffer.concat([header(true, len), body, ...attrs]);
}

/** One whole packet (as SstpReader cuts them). */
export function decodePacket(buf: Buffer): SstpPacket {
  if (buf.length < 4) throw bad(`${buf.length} bytes is shorter than a header`);
  if (buf[0] !== SSTP_VERSION) throw bad(`version 0x${buf[0]!.toString(16)} (expected 0x10)`);
  const len = buf.readUInt16BE(2) & 0xfff;
  if (len < 4 || len !== buf.length) throw bad(`length field ${len} for a ${buf.length}-byte packet`);
  const control = (buf[1]! & 1) === 1;
  const body = buf.subarray(4);
  if (!control) return { control: false, data: body };
  if (body.length < 4) throw bad('control message shorter than its type and attribute count');
  const type = body.readUInt16BE(0);
  const count = body.readUInt16BE(2);
  const attributes: SstpAttribute[] = [];
  let off = 4;
  for (let i = 0; i < count; i++) {
    if (off + 4 > body.length) throw bad(`attribute ${i + 1} of ${count} is missing`);
    const alen = body.readUInt16BE(off + 2) & 0xfff;
    if (alen < 4 || off + alen > body.length) throw bad(`attribute ${i + 1} length ${alen} runs past the message`);
    attributes.push({ id: body[off + 1]!, value: body.subarray(off + 4, off + alen) });
    off += alen;
  }
  return { control: true, type, attributes };
}

/**
 * Cuts a TLS byte stream into SSTP packets. A peer that declares a bad header ends the stream
 * with an error; partial packets wait for more bytes (never more than one packet is buffered).
 */
export class SstpReader {
  #buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.#buf = this.#buf.length ? Buffer.concat([this.#buf, chunk]) : chunk;
    const out: Buffer[] = [];
    while (this.#buf.length >= 4) {
      if (this.#buf[0] !== SSTP_VERSION)
        throw bad(`version 0x${this.#buf[0]!.toString(16)} in the stream (expected 0x10)`);
      const len = this.#buf.readUInt16BE(2) & 0xfff;
      if (len < 4) throw bad(`length field ${len} in the stream`);
      if (this.#buf.length < len) break;
      out.push(this.#buf.subarray(0, len));
      this.#buf = this.#buf.subarray(len);
    }
    return out;
  }

  get buffered(): number {
    return this.#buf.length;
  }
}

// ---- the messages a client sends and reads ----

export function callConnectRequest(): Buffer {
  const v = Buffer.alloc(2);
  v.writeUInt16BE(ENCAPSULATED_PPP, 0);
  return encodeControl(MsgType.CALL_CONNECT_REQUEST, [{ id: AttrId.ENCAPSULATED_PROTOCOL_ID, value: v }]);
}

/** Call Connected with its Crypto Binding attribute (hash protocol, nonce, cert hash, Compound MAC). */
export function callConnected(hashProtocol: number, nonce: Buffer, certHash: Buffer, mac: Buffer): Buffer {
  const v = Buffer.alloc(100);
  v[3] = hashProtocol;
  nonce.copy(v, 4, 0, 32);
  certHash.copy(v, 36, 0, 32);
  mac.copy(v, 68, 0, 32);
  return encodeControl(MsgType.CALL_CONNECTED, [{ id: AttrId.CRYPTO_BINDING, value: v }]);
}

/** The Crypto Binding Request of a Call Connect Ack: which hashes the server takes, and its nonce. */
export function parseCryptoBindingRequest(p: Extract<SstpPacket, { control: true }>): {
  hashBitmask: number;
  nonce: Buffer;
} {
  const a = p.attributes.find((x) => x.id === AttrId.CRYPTO_BINDING_REQ);
  if (!a || a.value.length < 36) throw bad('Call Connect Ack without a 36-byte Crypto Binding Request');
  return { hashBitmask: a.value[3]!, nonce: Buffer.from(a.value.subarray(4, 36)) };
}

/** A Status Info attribute (Nak, Abort): the attribute it is about and the status code. */
export function statusInfoOf(p: Extract<SstpPacket, { control: true }>): { attribute: number; status: number } | null {
  const a = p.attributes.find((x) => x.id === AttrId.STATUS_INFO);
  if (!a || a.value.length < 8) return null;
  return { attribute: a.value[3]!, status: a.value.readUInt32BE(4) };
}

const STATUS_NAMES: Record<number, string> = {
  0: 'no error',
  1: 'duplicate attribute',
  2: 'unrecognized attribute',
  3: 'invalid attribute value length',
  4: 'value not supported',
  5: 'unaccepted frame received',
  6: 'retry count exceeded',
  7: 'invalid frame received',
  8: 'negotiation timeout',
  9: 'attribute not supported in message',
  10: 'required attribute missing',
  11: 'status info not supported in message',
};

export function describeStatus(s: { attribute: number; status: number } | null): string {
  return s ? `${STATUS_NAMES[s.status] ?? `status ${s.status}`} (attribute ${s.attribute})` : 'no status given';
}
