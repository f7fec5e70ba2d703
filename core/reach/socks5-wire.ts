import { isIP } from 'node:net';
import { compressIpv6, ipv6ToBytes, unmapIpv4 } from './address.js';

/**
 * SOCKS5's address and UDP wire format (RFC 1928 §4, §5, §7), once, for both directions: the proxy
 * front end (core/proxy, server side) and the client that talks to a user's upstream proxy
 * (upstream-proxy.ts). Pure functions over Buffers, no I/O.
 */

export const SocksAddrType = { IPV4: 0x01, DOMAIN: 0x03, IPV6: 0x04 } as const;

export interface SocksAddress {
  /** An IP literal (IPv6 in RFC 5952 form) or a domain name, as sent. */
  readonly host: string;
  readonly port: number;
  readonly type: 'ipv4' | 'ipv6' | 'domain';
}

/** What parsing ATYP ADDR PORT found: the address, more bytes needed, or why it cannot be one. */
export type AddressParse =
  | { kind: 'ok'; value: SocksAddress; consumed: number }
  | { kind: 'incomplete' }
  | { kind: 'bad-address-type' }
  | { kind: 'empty-domain' };

/** ATYP ADDR PORT at `offset`. */
export function parseSocksAddress(buf: Buffer, offset: number): AddressParse {
  if (buf.length < offset + 1) return { kind: 'incomplete' };
  const atyp = buf[offset]!;
  let at = offset + 1;
  let host: string;
  let type: SocksAddress['type'];
  if (atyp === SocksAddrType.IPV4) {
    if (buf.length < at + 4 + 2) return { kind: 'incomplete' };
    host = `${buf[at]}.${buf[at + 1]}.${buf[at + 2]}.${buf[at + 3]}`;
    type = 'ipv4';
    at += 4;
  } else if (atyp === SocksAddrType.IPV6) {
    if (buf.length < at + 16 + 2) return { kind: 'incomplete' };
    const groups: string[] = [];
    for (let i = 0; i < 8; i++) groups.push(buf.readUInt16BE(at + i * 2).toString(16));
    host = compressIpv6(groups);
    type = 'ipv6';
    at += 16;
  } else if (atyp === SocksAddrType.DOMAIN) {
    if (buf.length < at + 1) return { kind: 'incomplete' };
    const len = buf[at]!;
    if (len === 0) return { kind: 'empty-domain' };
    if (buf.length < at + 1 + len + 2) return { kind: 'incomplete' };
    host = buf.toString('latin1', at + 1, at + 1 + len);
    type = 'domain';
    at += 1 + len;
  } else {
    return { kind: 'bad-address-type' };
  }
  return { kind: 'ok', value: { host, port: buf.readUInt16BE(at), type }, consumed: at + 2 - offset };
}

/**
 * ATYP ADDR PORT for `host:port`. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) goes as the IPv4
 * address it is (a proxy without IPv6 still takes it); a name longer than 255 bytes is refused.
 */
export function encodeSocksAddress(host: string, port: number): Buffer {
  const plain = unmapIpv4(host);
  const family = isIP(plain);
  const p = [(port >> 8) & 0xff, port & 0xff];
  if (family === 4) return Buffer.from([SocksAddrType.IPV4, ...plain.split('.').map(Number), ...p]);
  if (family === 6) return Buffer.concat([Buffer.from([SocksAddrType.IPV6]), ipv6ToBytes(plain), Buffer.from(p)]);
  const name = Buffer.from(plain, 'utf8');
  if (name.length === 0 || name.length > 255)
    throw new RangeError(`a SOCKS5 name is 1 to 255 bytes, not ${name.length}`);
  return Buffer.concat([Buffer.from([SocksAddrType.DOMAIN, name.length]), name, Buffer.from(p)]);
}

/** RSV(2) FRAG ATYP DST.ADDR DST.PORT, FRAG 0 (RFC 1928 §7). */
export function encodeSocksUdpHeader(host: string, port: number): Buffer {
  return Buffer.concat([Buffer.from([0x00, 0x00, 0x00]), encodeSocksAddress(host, port)]);
}

/** A UDP datagram's header: its fragment number, target and where the payload starts; null when malformed. */
export function parseSocksUdpHeader(
  datagram: Buffer,
):
  | { frag: number; target: SocksAddress; headerLength: number }
  | { error: 'bad-reserved' | 'bad-address-type' | 'empty-domain' } {
  if (datagram.length < 4) return { error: 'bad-reserved' };
  const addr = parseSocksAddress(datagram, 3);
  if (addr.kind === 'incomplete' || addr.kind === 'bad-address-type') return { error: 'bad-address-type' };
  if (addr.kind === 'empty-domain') return { error: 'empty-domain' };
  return { frag: datagram[2]!, target: addr.value, headerLength: 3 + addr.consumed };
}
