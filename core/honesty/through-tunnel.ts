/**
 * The few exchanges an honesty check makes through one node's tunnel, each bounded in time (the
 * caller's signal) and in bytes (a shared meter): a DNS query over UDP to a resolver, DNS over
 * HTTPS to a resolver by address, a plain-HTTP GET made as a browser makes it, a TLS handshake
 * checked against the OS roots.
 * Nothing here decides anything about the node; checks.ts does.
 */
import { randomInt, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import {
  checkServerIdentity,
  connect as tlsConnect,
  type DetailedPeerCertificate,
  type PeerCertificate,
  type TLSSocket,
} from 'node:tls';
import * as dnsPacket from 'dns-packet';
import {
  abortReason,
  decodeChunked,
  ErrorCodes,
  GatehopError,
  HttpFraming,
  readHttpHead,
  settleFirst,
  unbracket,
} from '../common/index.js';
import { publicRoots, subjectName } from '../reach/index.js';
import type { Egress } from '../contracts/index.js';
import type { DohServer } from './options.js';

/** Bytes moved so far by one check, both ways; past `max` every exchange stops. */
export class ByteMeter {
  n = 0;
  constructor(readonly max: number) {}

  add(bytes: number): void {
    this.n += bytes;
    if (this.n > this.max)
      throw new GatehopError(ErrorCodes.BUFFER_OVERFLOW, `the check's byte budget (${this.max}) is spent`);
  }
}

export interface Exchange {
  signal: AbortSignal;
  meter: ByteMeter;
}

/** A DNS answer: the response code and the addresses of the asked type. */
export interface DnsAnswer {
  rcode: string;
  addresses: string[];
}

const MAX_HTTP_HEAD = 16 * 1024;

/** One A query to `server` (UDP, port 53) through the egress; two tries. */
export async function dnsOverUdp(egress: Egress, server: string, name: string, x: Exchange): Promise<DnsAnswer> {
  const socket = await egress.bindUdp();
  const id = randomInt(1, 0xffff);
  const query = dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: 'A', name, class: 'IN' }],
  });
  try {
    // Two tries, two seconds each: the timer is the work's own (a resend), so no deadline here.
    return await settleFirst<DnsAnswer>({ signal: x.signal, what: `DNS ${name} at ${server}` }, (settle) => {
      let tries = 0;
      let timer: NodeJS.Timeout | null = null;
      const send = (): void => {
        tries++;
        try {
          x.meter.add(query.length);
        } catch (err) {
          return settle.reject(err as Error);
        }
        socket.send(query, server, 53);
        timer = setTimeout(
          () =>
            tries < 2
              ? send()
              : settle.reject(new GatehopError(ErrorCodes.DNS_TIMEOUT, `${server} did not answer for ${name}`)),
          2_000,
        );
      };
      socket.onMessage((d) => {
        if (d.address !== server || d.port !== 53) return;
        try {
          x.meter.add(d.data.length);
          const r = dnsPacket.decode(d.data);
          if (r.id !== id) return;
          settle.resolve(answerOf(r));
        } catch (err) {
          settle.reject(err as Error);
        }
      });
      socket.onClose(() => settle.reject(new GatehopError(ErrorCodes.EGRESS_CLOSED, 'the tunnel closed')));
      send();
      return () => {
        if (timer) clearTimeout(timer);
      };
    });
  } finally {
    socket.close();
  }
}

function answerOf(r: dnsPacket.Packet): DnsAnswer {
  const rcode = (r as { rcode?: string }).rcode ?? 'NOERROR';
  const addresses = (r.answers ?? [])
    .filter((a): a is dnsPacket.StringAnswer => a.type === 'A' && typeof a.data === 'string')
    .map((a) => a.data);
  return { rcode, addresses };
}

/** A TCP stream through the egress whose bytes count on the meter, and whose life ends with the signal. */
async function openMetered(egress: Egress, host: string, port: number, x: Exchange): Promise<Duplex> {
  const { stream } = await egress.connectTcp(host, port, { signal: x.signal, timeoutMs: 6_000, check: true });
  const onAbort = (): void => void stream.destroy(abortReason(x.signal, `${host}:${port}`));
  x.signal.addEventListener('abort', onAbort, { once: true });
  stream.once('close', () => x.signal.removeEventListener('abort', onAbort));
  const write = stream.write.bind(stream);
  stream.write = ((chunk: Buffer | string, ...rest: unknown[]) => {
    x.meter.add(typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length);
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof stream.write;
  stream.on('data', (c: Buffer) => {
    try {
      x.meter.add(c.length);
    } catch (err) {
      stream.destroy(err as Error);
    }
  });
  return stream;
}

/** The certificate verdict of a TLS handshake against the OS roots (public-roots.ts), by name. */
export interface TlsOutcome {
  /** Chains to a public root and is valid for the name asked. */
  trusted: boolean;
  /** OpenSSL's reason when the chain does not verify (UNABLE_TO_GET_ISSUER_CERT_LOCALLY, …), or a name mismatch. */
  error: string | null;
  /** Who issued the certificate shown (the top of what it sent). */
  issuer: string;
  /** The names it is for. */
  subject: string;
}

/** TLS to `serverName` at `host`:`port` through the egress, verified against the OS roots. */
export async function tlsHandshake(
  egress: Egress,
  host: string,
  port: number,
  serverName: string,
  x: Exchange,
): Promise<{ tls: TLSSocket; outcome: TlsOutcome }> {
  const stream = await openMetered(egress, host, port, x);
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({
      socket: stream,
      ...(isIP(serverName) ? {} : { servername: serverName }),
      ca: [...publicRoots().pems],
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    const fail = (err: Error): void => {
      tls.destroy();
      reject(err);
    };
    tls.once('error', fail);
    tls.once('secureConnect', () => {
      tls.off('error', fail);
      tls.on('error', () => {});
      const cert = tls.getPeerCertificate(true);
      const top = topOf(cert);
      const nameError = tls.authorized ? (tlsCheckName(serverName, cert) ?? null) : null;
      resolve({
        tls,
        outcome: {
          trusted: tls.authorized && nameError === null,
          error: tls.authorized ? nameError : String(tls.authorizationError ?? 'UNKNOWN'),
          issuer: top,
          subject: typeof cert.subject?.CN === 'string' ? cert.subject.CN : (cert.subjectaltname ?? ''),
        },
      });
    });
  });
}

/** Node's own name rule (RFC 6125), as a browser applies it. */
function tlsCheckName(serverName: string, cert: PeerCertificate): string | undefined {
  const err = checkServerIdentity(serverName, cert);
  return err ? `ERR_TLS_CERT_ALTNAME_INVALID: ${err.message}` : undefined;
}

/** The issuer at the top of the chain the server showed (its root or last intermediate), by name. */
function topOf(cert: DetailedPeerCertificate): string {
  let c = cert;
  for (let i = 0; i < 16 && c.issuerCertificate && c.issuerCertificate !== c; i++) c = c.issuerCertificate;
  try {
    const x = new X509Certificate(c.raw);
    return x.subject === x.issuer ? subjectName(x) : (x.issuer.match(/CN=([^\n]+)/)?.[1] ?? subjectName(x));
  } catch {
    return 'unknown';
  }
}

/** A response to a plain request: status, headers (lower-case), body (at most what the meter allows). */
export interface HttpResponse {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
}

/**
 * What a current desktop Chrome sends for a plain-HTTP page, in its order (#59: the checks'
 * requests used to be an HTTP/1.0 GET with a bare "Mozilla/5.0", which a node could pass through
 * untouched while it rewrote everyone else's). Over plain HTTP Chrome offers gzip and deflate only.
 */
const BROWSER_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Connection', 'keep-alive'],
  ['Upgrade-Insecure-Requests', '1'],
  [
    'User-Agent',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36',
  ],
  [
    'Accept',
    'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  ],
  ['Accept-Encoding', 'gzip, deflate'],
  ['Accept-Language', 'en-US,en;q=0.9'],
];

/** The request head a browser sends for `url`. */
export function browserRequest(url: URL): string {
  const lines = [
    `GET ${url.pathname}${url.search} HTTP/1.1`,
    `Host: ${url.host}`,
    ...BROWSER_HEADERS.map(([k, v]) => `${k}: ${v}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * A GET of `url` (plain http://) through the egress as a browser makes it: HTTP/1.1, keep-alive,
 * a browser's headers; the answer read as far as its framing says (Content-Length, chunked, or
 * the end), its gzip or deflate undone within the budget, the connection then closed.
 */
export async function browserGet(egress: Egress, url: string, x: Exchange): Promise<HttpResponse> {
  const u = new URL(url);
  const stream = await openMetered(egress, unbracket(u.hostname), Number(u.port || 80), x);
  const res = await readResponse(stream, Buffer.from(browserRequest(u), 'latin1'));
  return { ...res, body: decodeBody(res, x.meter) };
}

/** The body without its Content-Encoding (gzip, deflate), no larger than what the meter has left. */
function decodeBody(res: HttpResponse, meter: ByteMeter): Buffer {
  const encoding = (res.headers.get('content-encoding') ?? 'identity').toLowerCase().trim();
  if (encoding === 'identity' || res.body.length === 0) return res.body;
  const maxOutputLength = Math.max(1, meter.max - meter.n);
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(res.body, { maxOutputLength });
    if (encoding === 'deflate') {
      // "deflate" is zlib-wrapped by the RFC, raw in some servers: as browsers do, take either.
      try {
        return inflateSync(res.body, { maxOutputLength });
      } catch {
        return inflateRawSync(res.body, { maxOutputLength });
      }
    }
  } catch (err) {
    throw new GatehopError(
      ErrorCodes.SESSION_PROTOCOL,
      `a ${encoding} body that does not decode: ${(err as Error).message}`,
    );
  }
  throw new GatehopError(ErrorCodes.SESSION_PROTOCOL, `a body in ${encoding}, which was not asked for`);
}

/**
 * A request written to `stream` and its response read as far as its framing says: Content-Length
 * bytes, the last chunk, or (neither) the end of the stream. Then the stream is closed.
 */
function readResponse(stream: Duplex, request: Buffer): Promise<HttpResponse> {
  return new Promise<HttpResponse>((resolve, reject) => {
    const framing = new HttpFraming();
    let done = false;
    const finish = (err: Error | null): void => {
      if (done) return;
      done = true;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', finish);
      stream.destroy();
      if (err) return reject(err);
      try {
        resolve(parseResponse(framing.bytes));
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    };
    const onData = (c: Buffer): void => {
      if (framing.push(c)) finish(null);
    };
    const onEnd = (): void => finish(null);
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', finish);
    stream.write(request);
  });
}

/** A whole plain-HTTP answer (what came through a node: untrusted): status, headers, body; a coded refusal if it is not HTTP. */
export function parseResponse(raw: Buffer): HttpResponse {
  const fail = (message: string): Error => new GatehopError(ErrorCodes.SESSION_PROTOCOL, `the answer: ${message}`);
  const head = readHttpHead(raw, { maxHead: MAX_HTTP_HEAD, fail });
  if (!head) throw fail('not an HTTP response (no end of head)');
  const { headers } = head;
  let body = raw.subarray(head.length);
  if (headers.get('transfer-encoding')?.toLowerCase().includes('chunked'))
    body = decodeChunked(body) ?? Buffer.alloc(0);
  else {
    const length = Number(headers.get('content-length'));
    if (Number.isInteger(length) && length >= 0 && length < body.length) body = body.subarray(0, length);
  }
  return { status: head.status, headers, body };
}

/**
 * One A query by DNS over HTTPS (RFC 8484, POST) to a resolver dialled by address through the egress,
 * its certificate checked for the resolver's name against the OS roots. A certificate that does not
 * verify is thrown as GH_ERR_NODE_CERT_REFUSED with the issuer shown (it is itself evidence).
 */
export async function dnsOverHttps(egress: Egress, doh: DohServer, name: string, x: Exchange): Promise<DnsAnswer> {
  const { tls, outcome } = await tlsHandshake(egress, doh.address, doh.port, doh.serverName, x);
  if (!outcome.trusted) {
    tls.destroy();
    throw Object.assign(
      new GatehopError(
        ErrorCodes.NODE_CERT_REFUSED,
        `${doh.serverName} (${doh.address}) showed a certificate from ${outcome.issuer}: ${outcome.error}`,
      ),
      { outcome },
    );
  }
  const query = dnsPacket.encode({
    type: 'query',
    id: 0,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: 'A', name, class: 'IN' }],
  });
  const head = `POST ${doh.path} HTTP/1.1\r\nHost: ${doh.serverName}\r\nContent-Type: application/dns-message\r\nAccept: application/dns-message\r\nContent-Length: ${query.length}\r\nConnection: close\r\n\r\n`;
  const res = await readResponse(tls, Buffer.concat([Buffer.from(head, 'latin1'), query]));
  if (res.status !== 200)
    throw new GatehopError(ErrorCodes.EGRESS_FAILED, `${doh.serverName} answered HTTP ${res.status}`);
  return answerOf(dnsPacket.decode(res.body));
}
