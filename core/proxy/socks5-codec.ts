/**
 * SOCKS5 wire formats (RFC 1928, RFC 1929), the server's side. Pure functions over buffers: each
 * parser says whether it needs more bytes, or returns the value with the number of bytes consumed,
 * or names what is malformed. None of them throws on any input. Addresses and UDP headers are
 * core/common's socks5-wire, the one codec the upstream client uses too.
 */
import {
  encodeSocksAddress,
  encodeSocksUdpHeader,
  parseSocksAddress,
  SocksAddrType,
  unmapIpv4,
  type SocksAddress,
} from '../reach/index.js';

export { unmapIpv4, type SocksAddress };

export const SOCKS_VERSION = 0x05;
export const AUTH_VERSION = 0x01;

export const Method = { NO_AUTH: 0x00, USER_PASS: 0x02, NONE_ACCEPTABLE: 0xff } as const;
export const Command = { CONNECT: 0x01, BIND: 0x02, UDP_ASSOCIATE: 0x03 } as const;
export const AddrType = SocksAddrType;

export const Reply = {
  SUCCEEDED: 0x00,
  GENERAL_FAILURE: 0x01,
  NOT_ALLOWED: 0x02,
  NETWORK_UNREACHABLE: 0x03,
  HOST_UNREACHABLE: 0x04,
  CONNECTION_REFUSED: 0x05,
  TTL_EXPIRED: 0x06,
  COMMAND_NOT_SUPPORTED: 0x07,
  ADDRESS_TYPE_NOT_SUPPORTED: 0x08,
} as const;
export type ReplyCode = (typeof Reply)[keyof typeof Reply];

export type Parsed<T> =
  | { readonly kind: 'incomplete' }
  | { readonly kind: 'ok'; readonly value: T; readonly consumed: number }
  | { readonly kind: 'malformed'; readonly reason: MalformedReason; readonly reply?: ReplyCode };

export type MalformedReason =
  | 'bad-version'
  | 'no-methods'
  | 'bad-auth-version'
  | 'empty-username'
  | 'bad-command'
  | 'bad-address-type'
  | 'empty-domain'
  | 'bad-reserved';

const INCOMPLETE = { kind: 'incomplete' } as const;
const malformed = (reason: MalformedReason, reply?: ReplyCode): Parsed<never> =>
  reply === undefined ? { kind: 'malformed', reason } : { kind: 'malformed', reason, reply };

export interface Greeting {
  readonly methods: readonly number[];
}

/** VER NMETHODS METHODS... */
export function parseGreeting(buf: Buffer): Parsed<Greeting> {
  if (buf.length < 2) return INCOMPLETE;
  if (buf[0] !== SOCKS_VERSION) return malformed('bad-version');
  const n = buf[1]!;
  if (n === 0) return malformed('no-methods');
  if (buf.length < 2 + n) return INCOMPLETE;
  return { kind: 'ok', value: { methods: [...buf.subarray(2, 2 + n)] }, consumed: 2 + n };
}

export interface UserPass {
  readonly username: string;
  readonly password: string;
}

/** RFC 1929: VER ULEN UNAME PLEN PASSWD */
export function parseUserPass(buf: Buffer): Parsed<UserPass> {
  if (buf.length < 2) return INCOMPLETE;
  if (buf[0] !== AUTH_VERSION) return malformed('bad-auth-version');
  const ulen = buf[1]!;
  if (ulen === 0) return malformed('empty-username');
  if (buf.length < 2 + ulen + 1) return INCOMPLETE;
  const plen = buf[2 + ulen]!;
  const end = 3 + ulen + plen;
  if (buf.length < end) return INCOMPLETE;
  return {
    kind: 'ok',
    value: {
      username: buf.toString('utf8', 2, 2 + ulen),
      password: buf.toString('utf8', 3 + ulen, end),
    },
    consumed: end,
  };
}

export interface SocksRequest {
  readonly command: number;
  readonly target: SocksAddress;
}

/** Parses ATYP ADDR PORT at `offset`. */
function parseAddress(buf: Buffer, offset: number): Parsed<SocksAddress> {
  const a = parseSocksAddress(buf, offset);
  if (a.kind === 'ok' || a.kind === 'incomplete') return a;
  if (a.kind === 'empty-domain') return malformed('empty-domain', Reply.GENERAL_FAILURE);
  return malformed('bad-address-type', Reply.ADDRESS_TYPE_NOT_SUPPORTED);
}

/** VER CMD RSV ATYP DST.ADDR DST.PORT */
export function parseRequest(buf: Buffer): Parsed<SocksRequest> {
  if (buf.length < 4) return INCOMPLETE;
  if (buf[0] !== SOCKS_VERSION) return malformed('bad-version');
  const command = buf[1]!;
  const addr = parseAddress(buf, 3);
  if (addr.kind !== 'ok') return addr;
  if (command !== Command.CONNECT && command !== Command.BIND && command !== Command.UDP_ASSOCIATE) {
    return malformed('bad-command', Reply.COMMAND_NOT_SUPPORTED);
  }
  return { kind: 'ok', value: { command, target: addr.value }, consumed: 3 + addr.consumed };
}

export interface UdpRequestHeader {
  readonly frag: number;
  readonly target: SocksAddress;
  /** Offset of the payload in the datagram. */
  readonly headerLength: number;
}

/** RSV(2) FRAG ATYP DST.ADDR DST.PORT DATA; a datagram is complete or malformed, never partial. */
export function parseUdpHeader(datagram: Buffer): Parsed<UdpRequestHeader> {
  if (datagram.length < 4) return malformed('bad-reserved');
  const frag = datagram[2]!;
  const addr = parseAddress(datagram, 3);
  if (addr.kind === 'incomplete') return malformed('bad-address-type');
  if (addr.kind === 'malformed') return addr;
  const headerLength = 3 + addr.consumed;
  return { kind: 'ok', value: { frag, target: addr.value, headerLength }, consumed: headerLength };
}

export function encodeMethodSelection(method: number): Buffer {
  return Buffer.from([SOCKS_VERSION, method]);
}

export function encodeAuthResult(ok: boolean): Buffer {
  return Buffer.from([AUTH_VERSION, ok ? 0x00 : 0x01]);
}

/** VER REP RSV ATYP BND.ADDR BND.PORT; an IPv4-mapped IPv6 address is sent as IPv4. */
export function encodeReply(reply: ReplyCode, host = '0.0.0.0', port = 0): Buffer {
  return Buffer.concat([Buffer.from([SOCKS_VERSION, reply, 0x00]), encodeSocksAddress(host, port)]);
}

export function encodeUdpHeader(host: string, port: number): Buffer {
  return encodeSocksUdpHeader(host, port);
}
