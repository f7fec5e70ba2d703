import { isDomainName } from '../rules/index.js';

/**
 * The name a connection addressed by IP announces in its first bytes: the TLS ClientHello's SNI or
 * an HTTP request's Host. Bytes come from a local client (untrusted all the same): every length is
 * checked against what is there, nothing is allocated from them but the name, and anything that is
 * not a well-formed hello or head yields null.
 */

/** How many first bytes are read at most while looking for a name. */
export const SNIFF_MAX_BYTES = 16 * 1024;

export type SniffResult = { name: string } | { need: 'more' } | null;

/** The name, `need: more` when the bytes so far are a valid but incomplete start, or null. */
export function sniffName(buf: Buffer): SniffResult {
  if (buf.length === 0) return { need: 'more' };
  if (buf[0] === 0x16) return sniffTls(buf);
  if (/^[A-Z]/.test(String.fromCharCode(buf[0]!))) return sniffHttp(buf);
  return null;
}

/** A name the first bytes announced, as domain rules compare names (the table's own test of a name). */
function valid(name: string): string | null {
  const n = name.toLowerCase().replace(/\.$/, '');
  return isDomainName(n) && !/^[\d.]+$/.test(n) ? n : null;
}

function sniffTls(buf: Buffer): SniffResult {
  // Record: type 0x16, version 0x03 0x0X, length; handshake: type 1 (ClientHello), 3-byte length.
  if (buf.length < 5) return { need: 'more' };
  if (buf[1] !== 0x03) return null;
  const recordLen = buf.readUInt16BE(3);
  if (buf.length < 5 + Math.min(recordLen, 4)) return { need: 'more' };
  if (buf[5] !== 0x01) return null;
  const end = 5 + recordLen;
  if (buf.length < end) return end <= SNIFF_MAX_BYTES ? { need: 'more' } : null;
  let p = 9; // handshake header
  p += 2 + 32; // client version, random
  if (p + 1 > end) return null;
  p += 1 + buf[p]!; // session id
  if (p + 2 > end) return null;
  p += 2 + buf.readUInt16BE(p); // cipher suites
  if (p + 1 > end) return null;
  p += 1 + buf[p]!; // compression methods
  if (p + 2 > end) return null;
  const extEnd = Math.min(end, p + 2 + buf.readUInt16BE(p));
  p += 2;
  while (p + 4 <= extEnd) {
    const type = buf.readUInt16BE(p);
    const len = buf.readUInt16BE(p + 2);
    p += 4;
    if (p + len > extEnd) return null;
    if (type === 0x0000) {
      // server_name: list length, then entries of (type 0 = host_name, length, name).
      let q = p + 2;
      const listEnd = Math.min(p + len, p + 2 + (len >= 2 ? buf.readUInt16BE(p) : 0));
      while (q + 3 <= listEnd) {
        const nameType = buf[q]!;
        const nameLen = buf.readUInt16BE(q + 1);
        q += 3;
        if (q + nameLen > listEnd) return null;
        if (nameType === 0) {
          const v = valid(buf.toString('latin1', q, q + nameLen));
          return v ? { name: v } : null;
        }
        q += nameLen;
      }
      return null;
    }
    p += len;
  }
  return null;
}

function sniffHttp(buf: Buffer): SniffResult {
  const text = buf.toString('latin1', 0, Math.min(buf.length, SNIFF_MAX_BYTES));
  const lineEnd = text.indexOf('\r\n');
  if (lineEnd < 0) return buf.length < SNIFF_MAX_BYTES && /^[A-Z]{1,16}( |$)/.test(text) ? { need: 'more' } : null;
  if (!/^[A-Z]{1,16} \S+ HTTP\/1\.[01]$/.test(text.slice(0, lineEnd))) return null;
  const headEnd = text.indexOf('\r\n\r\n');
  const head = headEnd < 0 ? text : text.slice(0, headEnd);
  const m = /\r\nhost:[ \t]*([^\r\n]*)\r\n/i.exec(headEnd < 0 ? text : `${head}\r\n`);
  if (!m) return headEnd < 0 && buf.length < SNIFF_MAX_BYTES ? { need: 'more' } : null;
  const host = m[1]!.trim().replace(/:\d+$/, '');
  const v = valid(host);
  return v ? { name: v } : null;
}
