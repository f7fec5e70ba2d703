import { request, type IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { abortReason, ErrorCodes, GatehopError, unbracket } from '../common/index.js';
import { publicRoots } from './public-roots.js';

/** How a list fetch left this machine: straight out, through a working tunnel, or through the user's upstream proxy. */
export type DialVia = 'direct' | 'tunnel' | 'upstream';

/**
 * Opens a TCP stream to host:port. Names are resolved by whoever dials: the system resolver
 * directly, the tunnel's DNS inside a tunnel, the proxy for an upstream (a blocked network often
 * poisons the names as well as dropping the addresses).
 */
export interface Dialer {
  readonly via: DialVia;
  /**
   * Names given to this dialer are resolved on this machine or its LAN although it does not go
   * straight out: an upstream proxy on loopback or the LAN reaches what a local name points at.
   */
  readonly resolvesNearby?: boolean;
  dial(host: string, port: number, signal: AbortSignal): Promise<Duplex>;
}

export interface HttpGetOptions {
  dialer: Dialer;
  signal?: AbortSignal;
  /** The whole exchange, redirects and body included (a stalled body is a timeout too). */
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
}

export interface HttpGetResult {
  status: number;
  /** The URL that answered, after redirects. */
  url: string;
  body: string;
  /** The body as it came (binary data: geosite.dat, mrs rule sets). */
  bytes: Buffer;
  /**
   * Every hop was https (the first URL and each redirect), so the body is what the server that
   * `url` names sent. False when any hop was plain http: anyone on the path could have written
   * the body, or the redirect that led to it (#59).
   */
  secure: boolean;
}

/**
 * One HTTP/1.1 GET over whatever the dialer opens (TLS for https, verified against the public
 * roots, core/reach's, by the URL's name or address). `Accept-Encoding: identity`, so a body's size is its size on the wire and no
 * decompression bomb can pass the cap. Any status is returned; a failure to get one is an error.
 */
export async function httpGet(url: string, opts: HttpGetOptions): Promise<HttpGetResult> {
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  let current = url;
  let secure = true;
  for (let hop = 0; ; hop++) {
    secure &&= new URL(current).protocol === 'https:';
    const res = await getOnce(current, opts.dialer, signal);
    const location = res.headers.location;
    if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location) {
      res.resume();
      if (hop >= (opts.maxRedirects ?? 3))
        throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `too many redirects (last to ${location})`);
      current = new URL(location, current).toString();
      continue;
    }
    const bytes = await readBody(res, opts.maxBytes, signal, current);
    return { status: res.statusCode ?? 0, url: current, bytes, body: bytes.toString('utf8'), secure };
  }
}

function getOnce(url: string, dialer: Dialer, signal: AbortSignal): Promise<IncomingMessage> {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return Promise.reject(new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `${url}: only http and https are fetched`));
  const host = unbracket(u.hostname);
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  if (signal.aborted) return Promise.reject(abortReason(signal, `fetch ${url}`));
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      reject(signal.aborted ? abortReason(signal, `fetch ${url}`) : err);
    };
    const req = request({
      method: 'GET',
      host,
      port,
      path: `${u.pathname}${u.search}`,
      headers: {
        Host: u.host,
        'User-Agent': 'gatehop',
        Accept: '*/*',
        'Accept-Encoding': 'identity',
        Connection: 'close',
      },
      signal,
      // The dialer decides how bytes leave; TLS (when https) runs over whatever it opened.
      createConnection: (_opts, done: (err: Error | null, socket: Duplex) => void) => {
        dialer.dial(host, port, signal).then(
          (raw) => {
            if (u.protocol === 'http:') return void done(null, raw);
            const tls = tlsConnect({
              socket: raw,
              // The name (or the address) the certificate must be for; SNI only for a name.
              host,
              servername: isIP(host) ? undefined : host,
              // The roots the node trust rule calls public, read now: NODE_EXTRA_CA_CERTS included
              // (Node reads it into its own default only at start).
              ca: [...publicRoots().pems],
              ALPNProtocols: ['http/1.1'],
            });
            tls.once('close', () => raw.destroy());
            done(null, tls);
          },
          // Node reads no socket when err is set (its typings want one anyway).
          (err: unknown) => done(err instanceof Error ? err : new Error(String(err)), undefined as unknown as Duplex),
        );
        return undefined;
      },
    });
    req.once('response', (res) => {
      settled = true;
      resolve(res);
    });
    req.once('error', (err: NodeJS.ErrnoException) => {
      fail(
        err instanceof GatehopError
          ? err
          : new GatehopError(ErrorCodes.LIST_FETCH_FAILED, describeNetError(err), { cause: err }),
      );
    });
    req.end();
  });
}

function describeNetError(err: NodeJS.ErrnoException): string {
  if (err.code === 'CERT_HAS_EXPIRED' || /certificate|self.signed|altname/i.test(err.message))
    return `TLS certificate refused: ${err.message}`;
  return err.code
    ? `${err.code}${err.message && !err.message.includes(err.code) ? ` (${err.message})` : ''}`
    : err.message;
}

async function readBody(res: IncomingMessage, maxBytes: number, signal: AbortSignal, url: string): Promise<Buffer> {
  const encoding = (res.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') {
    res.destroy();
    throw new GatehopError(
      ErrorCodes.LIST_FETCH_FAILED,
      `the server sent a ${encoding}-encoded body though asked for identity`,
    );
  }
  const declared = Number(res.headers['content-length'] ?? NaN);
  if (declared > maxBytes) {
    res.destroy();
    throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `body of ${declared} bytes exceeds ${maxBytes}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        res.destroy();
        throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `body exceeds ${maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (signal.aborted) throw abortReason(signal, `read ${url}`);
    if (err instanceof GatehopError) throw err;
    throw new GatehopError(
      ErrorCodes.LIST_FETCH_FAILED,
      `the body broke off after ${size} bytes: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (!res.complete) throw new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `the body broke off after ${size} bytes`);
  return Buffer.concat(chunks);
}
