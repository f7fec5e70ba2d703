/**
 * PPP frames as SSTP carries them (RFC 1661 without HDLC flags or escaping): address 0xFF,
 * control 0x03, a 16-bit protocol, then the payload. The control protocols (LCP, IPCP, PAP,
 * CHAP) share one packet header (code, identifier, 16-bit length) and LCP/IPCP carry options
 * (type, length, value). Parsing is strict about lengths and tolerant of what RFC 1661 allows
 * (padding after a packet, address/control and protocol compression on input).
 */
import { ErrorCodes, GatehopError } from '../common/index.js';

export const Proto = {
  IPV4: 0x0021,
  IPV6: 0x0057,
  LCP: 0xc021,
  PAP: 0xc023,
  CHAP: 0xc223,
  EAP: 0xc227,
  IPCP: 0x8021,
  IPV6CP: 0x8057,
  CCP: 0x80fd,
} as const;

/** Configure-Request … Code-Reject, Echo: the codes LCP and IPCP share (IPCP uses 1–7). */
export const Code = {
  CONF_REQ: 1,
  CONF_ACK: 2,
  CONF_NAK: 3,
  CONF_REJ: 4,
  TERM_REQ: 5,
  TERM_ACK: 6,
  CODE_REJ: 7,
  PROTO_REJ: 8,
  ECHO_REQ: 9,
  ECHO_REPLY: 10,
  DISCARD_REQ: 11,
  IDENTIFICATION: 12,
  TIME_REMAINING: 13,
} as const;

export interface PppFrame {
  protocol: number;
  payload: Buffer;
}

export interface CpPacket {
  code: number;
  id: number;
  data: Buffer;
}

export interface CpOption {
  type: number;
  value: Buffer;
}

const bad = (what: string): GatehopError => new GatehopError(ErrorCodes.SSTP_PROTOCOL, `malformed PPP frame: ${what}`);

export function encodeFrame(protocol: number, payload: Buffer): Buffer {
  const h = Buffer.from([0xff, 0x03, protocol >> 8, protocol & 0xff]);
  return Buffer.concat([h, payload]);
}

export function decodeFrame(buf: Buffer): PppFrame {
  let off = 0;
  if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0x03) off = 2;
  if (buf.length < off + 1) throw bad('no protocol field');
  // Protocol-field compression: a protocol whose first byte is odd is one byte long.
  if (buf[off]! & 1) return { protocol: buf[off]!, payload: buf.subarray(off + 1) };
  if (buf.length < off + 2) throw bad('protocol field cut short');
  return { protocol: buf.readUInt16BE(off), payload: buf.subarray(off + 2) };
}

export function encodeCp(code: number, id: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.alloc(4);
  h[0] = code;
  h[1] = id & 0xff;
  h.writeUInt16BE(data.length + 4, 2);
  return Buffer.concat([h, data]);
}

export function decodeCp(payload: Buffer): CpPacket {
  if (payload.length < 4) throw bad(`control packet of ${payload.length} bytes`);
  const len = payload.readUInt16BE(2);
  if (len < 4 || len > payload.length) throw bad(`control packet length ${len} for ${payload.length} bytes`);
  return { code: payload[0]!, id: payload[1]!, data: payload.subarray(4, len) };
}

export function encodeOptions(options: readonly CpOption[]): Buffer {
  return Buffer.concat(options.map((o) => Buffer.concat([Buffer.from([o.type, o.value.length + 2]), o.value])));
}

export function decodeOptions(data: Buffer): CpOption[] {
  const out: CpOption[] = [];
  let off = 0;
  while (off < data.length) {
    if (off + 2 > data.length) throw bad('option header cut short');
    const len = data[off + 1]!;
    if (len < 2 || off + len > data.length) throw bad(`option ${data[off]} length ${len} runs past the packet`);
    out.push({ type: data[off]!, value: data.subarray(off + 2, off + len) });
    off += len;
  }
  return out;
}

export const ipv4ToBuffer = (ip: string): Buffer => Buffer.from(ip.split('.').map((x) => Number(x)));
export const bufferToIpv4 = (b: Buffer): string => [...b.subarray(0, 4)].join('.');
