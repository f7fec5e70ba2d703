/**
 * The IPv4 packets the capture gateway reads and writes itself (UDP, ICMP; TCP goes to lwIP):
 * parsing bounded by the packet's own lengths, and building with checksums. Everything here comes
 * from the captured program, so a packet that does not add up is dropped, never trusted.
 */

export const PROTO_ICMP = 1;
export const PROTO_TCP = 6;
export const PROTO_UDP = 17;

export interface Ipv4Header {
  /** Header length in bytes. */
  ihl: number;
  protocol: number;
  src: string;
  dst: string;
  /** The packet as its header says (trailing bytes past totalLength dropped). */
  totalLength: number;
  /** A fragment (MF set, or an offset): the gateway takes whole packets only. */
  fragment: boolean;
  ttl: number;
}

export function ipv4String(b: Buffer, at: number): string {
  return `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
}

function writeIpv4(b: Buffer, at: number, ip: string): void {
  const parts = ip.split('.');
  for (let i = 0; i < 4; i++) b[at + i] = Number(parts[i]);
}

/** The header of an IPv4 packet, or null when it is not one that adds up. */
export function parseIpv4(p: Buffer): Ipv4Header | null {
  if (p.length < 20 || p[0]! >> 4 !== 4) return null;
  const ihl = (p[0]! & 0x0f) * 4;
  const totalLength = p.readUInt16BE(2);
  if (ihl < 20 || totalLength < ihl || totalLength > p.length) return null;
  const flagsFrag = p.readUInt16BE(6);
  return {
    ihl,
    protocol: p[9]!,
    src: ipv4String(p, 12),
    dst: ipv4String(p, 16),
    totalLength,
    fragment: (flagsFrag & 0x2000) !== 0 || (flagsFrag & 0x1fff) !== 0,
    ttl: p[8]!,
  };
}

export interface UdpPacket {
  srcPort: number;
  dstPort: number;
  payload: Buffer;
}

/** The UDP datagram inside an IPv4 packet, or null when its length does not fit. */
export function parseUdp(p: Buffer, h: Ipv4Header): UdpPacket | null {
  const at = h.ihl;
  if (h.totalLength - at < 8) return null;
  const len = p.readUInt16BE(at + 4);
  if (len < 8 || at + len > h.totalLength) return null;
  return { srcPort: p.readUInt16BE(at), dstPort: p.readUInt16BE(at + 2), payload: p.subarray(at + 8, at + len) };
}

/** RFC 1071's one's-complement sum of `b[from, to)`, added to `sum` (not folded). */
function sum16(b: Buffer, from: number, to: number, sum = 0): number {
  let i = from;
  for (; i + 1 < to; i += 2) sum += (b[i]! << 8) | b[i + 1]!;
  if (i < to) sum += b[i]! << 8;
  return sum;
}

function fold(sum: number): number {
  while (sum > 0xffff) sum = (sum & 0xffff) + Math.floor(sum / 0x10000);
  return ~sum & 0xffff;
}

/** A 20-byte IPv4 header at the start of `b` (no options, DF, TTL 64), its checksum computed. */
export function writeIpv4Header(b: Buffer, totalLength: number, protocol: number, src: string, dst: string): void {
  b[0] = 0x45;
  b[1] = 0;
  b.writeUInt16BE(totalLength, 2);
  b.writeUInt16BE(0, 4); // id: DF set, never fragmented
  b.writeUInt16BE(0x4000, 6);
  b[8] = 64;
  b[9] = protocol;
  b.writeUInt16BE(0, 10);
  writeIpv4(b, 12, src);
  writeIpv4(b, 16, dst);
  b.writeUInt16BE(fold(sum16(b, 0, 20)), 10);
}

/** An IPv4 UDP packet from src:srcPort to dst:dstPort, checksums computed. */
export function buildUdp(src: string, srcPort: number, dst: string, dstPort: number, payload: Buffer): Buffer {
  const udpLen = 8 + payload.length;
  const b = Buffer.allocUnsafe(20 + udpLen);
  writeIpv4Header(b, 20 + udpLen, PROTO_UDP, src, dst);
  b.writeUInt16BE(srcPort, 20);
  b.writeUInt16BE(dstPort, 22);
  b.writeUInt16BE(udpLen, 24);
  b.writeUInt16BE(0, 26);
  payload.copy(b, 28);
  // Pseudo-header: source, destination, protocol, UDP length.
  let s = sum16(b, 12, 20);
  s += PROTO_UDP + udpLen;
  s = sum16(b, 20, 20 + udpLen, s);
  const c = fold(s);
  b.writeUInt16BE(c === 0 ? 0xffff : c, 26);
  return b;
}

function icmp(src: string, dst: string, body: Buffer): Buffer {
  const b = Buffer.allocUnsafe(20 + body.length);
  writeIpv4Header(b, b.length, PROTO_ICMP, src, dst);
  body.copy(b, 20);
  b.writeUInt16BE(0, 22);
  b.writeUInt16BE(fold(sum16(b, 20, b.length)), 22);
  return b;
}

/** A TCP segment's SYN (without ACK): a connection being opened. Null when `p` holds no whole TCP header. */
export function tcpSyn(p: Buffer, h: Ipv4Header): { srcPort: number; dstPort: number; seq: number } | null {
  const at = h.ihl;
  if (h.totalLength - at < 20) return null;
  const flags = p[at + 13]!;
  if ((flags & 0x12) !== 0x02) return null;
  return { srcPort: p.readUInt16BE(at), dstPort: p.readUInt16BE(at + 2), seq: p.readUInt32BE(at + 4) };
}

/** The reset that refuses a SYN (RFC 793: seq 0, acknowledging the SYN): "connection refused" at once. */
export function tcpRefusal(h: Ipv4Header, syn: { srcPort: number; dstPort: number; seq: number }): Buffer {
  const b = Buffer.alloc(40);
  writeIpv4Header(b, 40, PROTO_TCP, h.dst, h.src);
  b.writeUInt16BE(syn.dstPort, 20);
  b.writeUInt16BE(syn.srcPort, 22);
  b.writeUInt32BE(0, 24);
  b.writeUInt32BE((syn.seq + 1) >>> 0, 28);
  b[32] = 5 << 4;
  b[33] = 0x14; // RST, ACK
  let s = sum16(b, 12, 20);
  s += PROTO_TCP + 20;
  s = sum16(b, 20, 40, s);
  b.writeUInt16BE(fold(s), 36);
  return b;
}

/** The echo reply to an ICMP echo request (type 8) in `p`, or null when it is not one. */
export function echoReply(p: Buffer, h: Ipv4Header): Buffer | null {
  const at = h.ihl;
  if (h.totalLength - at < 8 || p[at] !== 8 || p[at + 1] !== 0) return null;
  const body = Buffer.from(p.subarray(at, h.totalLength));
  body[0] = 0; // echo reply
  return icmp(h.dst, h.src, body);
}

/**
 * ICMP destination unreachable for `p` (code 13, communication administratively prohibited, unless
 * given): a program told at once instead of left waiting. Carries the header and 8 bytes, as RFC 792.
 */
export function unreachable(p: Buffer, h: Ipv4Header, from: string, code = 13): Buffer {
  const quoted = p.subarray(0, Math.min(h.totalLength, h.ihl + 8));
  const body = Buffer.alloc(8 + quoted.length);
  body[0] = 3;
  body[1] = code;
  quoted.copy(body, 8);
  return icmp(from, h.src, body);
}

/**
 * ICMPv6 destination unreachable, administratively prohibited (RFC 4443), for an IPv6 packet `p`:
 * IPv6 is not carried, and a program told so at once tries IPv4 instead of waiting. Null when `p`
 * is not an IPv6 packet one may answer (too short, or itself ICMPv6 error traffic).
 */
export function ipv6Refusal(p: Buffer): Buffer | null {
  if (p.length < 40 || p[0]! >> 4 !== 6) return null;
  const next = p[6]!;
  if (next === 58 && p.length >= 41 && p[40]! < 128) return null; // never answer an ICMPv6 error
  const src = p.subarray(8, 24);
  if (src.every((b) => b === 0) || src[0] === 0xff) return null; // unspecified or multicast source
  const quoted = p.subarray(0, Math.min(p.length, 1280 - 48));
  const b = Buffer.alloc(48 + quoted.length);
  b[0] = 0x60;
  b.writeUInt16BE(8 + quoted.length, 4);
  b[6] = 58; // ICMPv6
  b[7] = 64;
  p.copy(b, 8, 24, 40); // from the address it was sent to
  p.copy(b, 24, 8, 24); // to its sender
  b[40] = 1; // destination unreachable
  b[41] = 1; // communication administratively prohibited
  quoted.copy(b, 48);
  let s = sum16(b, 8, 40);
  s += 8 + quoted.length + 58;
  s = sum16(b, 40, b.length, s);
  b.writeUInt16BE(fold(s), 42);
  return b;
}
