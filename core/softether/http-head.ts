import { ErrorCodes, GatehopError, readHttpHead, type HttpHead } from '../common/index.js';

/** A node's HTTP response head: SoftEther's are a few hundred bytes. */
export const MAX_HEAD = 8 * 1024;
/** A Hello or a Welcome PACK travels in a body of at most this (SoftEther's own cap on a PACK over HTTP). */
export const MAX_BODY = 64 * 1024;

export interface HttpResponseHead extends HttpHead {
  /** Content-Length, checked against MAX_BODY. */
  contentLength: number;
}

/**
 * The head of the HTTP response a node answers a POST with, once it is complete in `buf` (null
 * before). GH_ERR_SOFTETHER_PROTOCOL for a head past MAX_HEAD, a status line that is not HTTP/1.x,
 * a malformed header, or a body without a length or over MAX_BODY: the body is read by that length.
 */
export function parseResponseHead(buf: Buffer): HttpResponseHead | null {
  const head = readHttpHead(buf, { maxHead: MAX_HEAD, strictHeaders: true, fail: bad });
  if (!head) return null;
  const declared = head.headers.get('content-length');
  if (declared === undefined || !/^\d{1,10}$/.test(declared)) throw bad('an HTTP answer without a Content-Length');
  const contentLength = Number(declared);
  if (contentLength > MAX_BODY) throw bad(`an HTTP body of ${contentLength} bytes (at most ${MAX_BODY})`);
  return { ...head, contentLength };
}

function bad(message: string): GatehopError {
  return new GatehopError(ErrorCodes.SOFTETHER_PROTOCOL, message);
}
