/**
 * An HTTP/1.1 chunked body (RFC 9112 §7.1) as read so far, joined: null while its last chunk has
 * not come (or its framing does not hold). The caller bounds how much it reads before asking.
 */
export function decodeChunked(b: Buffer): Buffer | null {
  const out: Buffer[] = [];
  let o = 0;
  for (;;) {
    const eol = b.indexOf('\r\n', o);
    if (eol < 0) return null;
    const n = parseInt(b.subarray(o, eol).toString('latin1'), 16);
    if (!Number.isFinite(n) || n < 0) return null;
    if (n === 0) return Buffer.concat(out);
    if (b.length < eol + 2 + n + 2) return null;
    out.push(b.subarray(eol + 2, eol + 2 + n));
    o = eol + 2 + n + 2;
  }
}
