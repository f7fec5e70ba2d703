/** An HTTP/1.x response's head: its status line and headers. */
export interface HttpHead {
  status: number;
  reason: string;
  /** Lower-cased names; a repeated header keeps its last value. */
  headers: Map<string, string>;
  /** The head's length with its blank line: the body starts here. */
  length: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** An HTTP token (RFC 9110 §5.6.2): what a header name must be. */
export function isHttpToken(text: string): boolean {
  return TOKEN.test(text);
}

/**
 * The head of an HTTP/1.x response once it is whole in `buf` (null before), from a peer Gatehop
 * does not trust (a node, a resolver beyond one, a server a check reached): the project's one
 * reader of a response head. `fail` makes the caller's coded error for a head longer than `maxHead`
 * (whole or still growing), a status line that is not `HTTP/1.x NNN`, and, with `strictHeaders`, a
 * header line that is not `token: value` (without it such a line is passed over).
 */
export function readHttpHead(
  buf: Buffer,
  o: { maxHead: number; strictHeaders?: boolean; fail: (message: string) => Error },
): HttpHead | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) {
    if (buf.length > o.maxHead) throw o.fail(`more than ${o.maxHead} bytes of HTTP head`);
    return null;
  }
  if (end + 4 > o.maxHead) throw o.fail(`an HTTP head of ${end + 4} bytes (at most ${o.maxHead})`);
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] ([1-5]\d\d)(?:$| (.*)$)/.exec(lines[0] ?? '');
  if (!m) throw o.fail(`not an HTTP answer (${JSON.stringify((lines[0] ?? '').slice(0, 60))})`);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) {
      if (o.strictHeaders) throw o.fail(`a malformed HTTP header (${JSON.stringify(line.slice(0, 60))})`);
      continue;
    }
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status: Number(m[1]), reason: m[2] ?? '', headers, length: end + 4 };
}
