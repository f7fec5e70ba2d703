import { ErrorCodes, GatehopError } from '../common/index.js';

/** A node's HTTP response head: SoftEther's are a few hundred bytes. */
export const MAX_HEAD = 8 * 1024;
/** A Hello or a Welcome PACK travels in a body of at most this (SoftEther's own cap on a PACK over HTTP). */
export const MAX_BODY = 64 * 1024;

export interface HttpResponseHead {
  status: number;
  reason: string;
  /** Lower-cased names; a repeated header keeps its last value. */
  headers: Map<string, string>;
  /** The head's length with its blank line: the body starts here. */
  length: number;
  /** Content-Length, checked against MAX_BODY. */
  contentLength: number;
}

/**
 * The head of the HTTP response a node answers a POST with, once it is complete in `buf` (null
 * before). GH_ERR_SOFTETHER_PROTOCOL for a head past MAX_HEAD, a status line that is not HTTP/1.x,
 * a malformed header, or a body without a length or over MAX_BODY: the body is read by that length.
 */
export function parseResponseHead(buf: Buffer): HttpResponseHead | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) {
    if (buf.length > MAX_HEAD) throw bad(`more than ${MAX_HEAD} bytes of HTTP head`);
    return null;
  }
  if (end + 4 > MAX_HEAD) throw bad(`an HTTP head of ${end + 4} bytes (at most ${MAX_HEAD})`);
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(lines[0] ?? '');
  if (!m) throw bad(`not an HTTP answer (${JSON.stringify((lines[0] ?? '').slice(0, 60))})`);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(line.slice(0, colon)))
      throw bad(`a malformed HTTP header (${JSON.stringify(line.slice(0, 60))})`);
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  const declared = headers.get('content-length');
  if (declared === undefined || !/^\d{1,10}$/.test(declared)) throw bad('an HTTP answer without a Content-Length');
  const contentLength = Number(declared);
  if (contentLength > MAX_BODY) throw bad(`an HTTP body of ${contentLength} bytes (at most ${MAX_BODY})`);
  return { status: Number(m[1]), reason: m[2] ?? '', headers, length: end + 4, contentLength };
}

function bad(message: string): GatehopError {
  return new GatehopError(ErrorCodes.SOFTETHER_PROTOCOL, message);
}
