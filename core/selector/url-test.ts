import { ErrorCodes, GatehopError, isHttpToken, settleFirst } from '../common/index.js';
import type { Dialer } from '../reach/index.js';

export interface UrlTestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The status that counts as healthy; without it, any 2xx does. */
  expectedStatus?: number;
  /** Host header instead of the URL's (a probe of a virtual host by address). */
  host?: string;
  headers?: Readonly<Record<string, string>>;
}

/** Header names and values that cannot break the request line (no CR/LF, no colon in names). */
function safeHeaders(h: Readonly<Record<string, string>> = {}): string {
  return Object.entries(h)
    .map(([k, v]) => {
      if (!isHttpToken(k) || /[\r\n]/.test(v))
        throw new GatehopError(ErrorCodes.CONFIG_INVALID, `URL test header ${JSON.stringify(k)} is not a valid header`);
      return `${k}: ${v}\r\n`;
    })
    .join('');
}

/**
 * An HTTP GET through `dial` (sing-box's urltest; GOST's http probe): the time from starting the
 * connection to the response's status line. Rejects on a status other than `expectedStatus` (any
 * 2xx when none is given), on timeout, or on abort.
 */
export async function urlTest(dialer: Dialer, url: string, opts: UrlTestOptions = {}): Promise<number> {
  const u = new URL(url);
  if (u.protocol !== 'http:')
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `URL test needs an http:// URL, got ${url}`);
  const extra = safeHeaders(opts.headers);
  if (opts.host !== undefined && /[\r\n\s]/.test(opts.host))
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `URL test Host ${JSON.stringify(opts.host)} is not a valid host`);
  const timeoutMs = opts.timeoutMs ?? 5000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  const started = performance.now();
  const stream = await dialer.dial(u.hostname, Number(u.port || 80), signal);
  try {
    return await settleFirst<number>({ signal, what: `URL test ${url}` }, (settle) => {
      let head = '';
      stream.on('data', (c: Buffer) => {
        head += c.toString('latin1');
        const eol = head.indexOf('\r\n');
        if (eol < 0) {
          if (head.length > 4096)
            settle.reject(new GatehopError(ErrorCodes.EGRESS_FAILED, `URL test ${url}: no status line`));
          return;
        }
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
        const status = m ? Number(m[1]) : 0;
        const healthy =
          opts.expectedStatus !== undefined ? status === opts.expectedStatus : status >= 200 && status < 300;
        if (healthy) settle.resolve(performance.now() - started);
        else
          settle.reject(
            new GatehopError(
              ErrorCodes.EGRESS_FAILED,
              `URL test ${url}: status ${status || 'unreadable'}${opts.expectedStatus !== undefined ? `, expected ${opts.expectedStatus}` : ''}`,
            ),
          );
      });
      stream.once('error', (err: Error) => settle.reject(err));
      stream.once('end', () =>
        settle.reject(new GatehopError(ErrorCodes.EGRESS_FAILED, `URL test ${url}: closed before a response`)),
      );
      stream.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${opts.host ?? u.host}\r\nUser-Agent: gatehop\r\n${extra}Connection: close\r\n\r\n`,
      );
    });
  } finally {
    stream.destroy();
  }
}
