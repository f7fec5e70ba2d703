import { isIP } from 'node:net';

/**
 * An IPv4 address as lwIP keeps it in memory: network byte order read as a little-endian u32
 * (the first octet is the low byte). Only the glue ABI sees this form.
 */
export function ipv4ToWasm(ip: string): number {
  if (isIP(ip) !== 4) throw new TypeError(`not an IPv4 address: ${ip}`);
  const b = ip.split('.').map(Number);
  return (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
}

export function ipv4FromWasm(v: number): string {
  return `${v & 0xff}.${(v >>> 8) & 0xff}.${(v >>> 16) & 0xff}.${(v >>> 24) & 0xff}`;
}

/** A netmask from a prefix length or dotted form. */
export function netmaskFrom(mask: string | number): string {
  if (typeof mask === 'string') return mask;
  const bits = mask === 0 ? 0 : (0xffffffff << (32 - mask)) >>> 0;
  return `${bits >>> 24}.${(bits >>> 16) & 0xff}.${(bits >>> 8) & 0xff}.${bits & 0xff}`;
}
