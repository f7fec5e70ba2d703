import type { Duplex } from 'node:stream';
import { abortReason, ErrorCodes, GatehopError } from '../common/index.js';

/** How a URL test reaches its target: through a tunnel's egress, in practice. */
export type Dialer = (host: string, port: number, opts: { timeoutMs: number; signal: AbortSignal }) => Promise<Duplex>;

/**
 * An HTTP GET of a 204 endpoint through `dial` (sing-box's urltest): the time from starting the
 * connection to the response's status line. Rejects on anything but 2xx, on timeout, or on abort.
 */
export async function urlTest(dial: Dialer, url: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<number> {
  const u = new URL(url);
  if (u.protocol !== 'http:') throw new GatehopError(ErrorCodes.CONFIG_INVALID, `URL test needs an http:// URL, got ${url}`);
  const timeoutMs = opts.timeoutMs ?? 5000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  const started = performance.now();
  const stream = await dial(u.hostname, Number(u.port || 80), { timeoutMs, signal });
  try {
    return await new Promise<number>((resolve, reject) => {
      let head = '';
      const onAbort = (): void => reject(abortReason(signal, `URL test ${url}`));
      signal.addEventListener('abort', onAbort, { once: true });
      stream.on('data', (c: Buffer) => {
        head += c.toString('latin1');
        const eol = head.indexOf('\r\n');
        if (eol < 0) {
          if (head.length > 4096) reject(new GatehopError(ErrorCodes.EGRESS_FAILED, `URL test ${url}: no status line`));
          return;
        }
        signal.removeEventListener('abort', onAbort);
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
        const status = m ? Number(m[1]) : 0;
        if (status >= 200 && status < 300) resolve(performance.now() - started);
        else reject(new GatehopError(ErrorCodes.EGRESS_FAILED, `URL test ${url}: status ${status || 'unreadable'}`));
      });
      stream.once('error', reject);
      stream.once('end', () => reject(new GatehopError(ErrorCodes.EGRESS_FAILED, `URL test ${url}: closed before a response`)));
      stream.write(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUser-Agent: gatehop\r\nConnection: close\r\n\r\n`);
    });
  } finally {
    stream.destroy();
  }
}
