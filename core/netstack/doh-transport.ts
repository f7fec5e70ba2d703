import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { decodeChunked, ErrorCodes, GatehopError, readHttpHead, settleFirst } from '../common/index.js';
import { publicRoots } from '../reach/index.js';

/** A DNS-over-HTTPS resolver dialled by address (RFC 8484); its certificate must be valid for `serverName`. */
export interface DohEndpoint {
  address: string;
  serverName: string;
  port: number;
  path: string;
}

/** What the transport needs of a stack: TCP connections through it (so no query leaves the tunnel in clear). */
export interface TcpOpener {
  connectTcp(address: string, port: number, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<Duplex>;
}

/** The largest answer taken (a DNS message is at most 64 KiB). */
const MAX_RESPONSE = 65_535 + 16 * 1024;

interface Pending {
  body: Buffer;
  resolve: (b: Buffer) => void;
  reject: (e: Error) => void;
}

/**
 * DNS over HTTPS through a tunnel's own stack (privacy.encryptedDns): one HTTP/1.1 keep-alive
 * connection at a time per resolver, queries sent one after another on it, the next resolver tried
 * when one fails. The node sees only TLS to the resolver's address, never a name.
 */
export class DohTransport {
  #conn: { tls: TLSSocket; endpoint: DohEndpoint } | null = null;
  #connecting: Promise<{ tls: TLSSocket; endpoint: DohEndpoint }> | null = null;
  #queue: Pending[] = [];
  #busy = false;
  #next = 0;
  #closed = false;
  readonly stats = { queries: 0, connections: 0, failures: 0 };

  constructor(
    private readonly stack: TcpOpener,
    private readonly endpoints: readonly DohEndpoint[],
    private readonly timeoutMs = 5_000,
  ) {
    if (endpoints.length === 0) throw new GatehopError(ErrorCodes.CONFIG_INVALID, 'no DNS-over-HTTPS resolver given');
  }

  /** A DNS message in, its answer out (wire format). */
  query(message: Buffer, signal?: AbortSignal): Promise<Buffer> {
    if (this.#closed) return Promise.reject(new GatehopError(ErrorCodes.EGRESS_CLOSED, 'the tunnel is closed'));
    this.stats.queries++;
    return settleFirst<Buffer>({ signal, what: 'DNS over HTTPS' }, (settle) => {
      const p: Pending = { body: message, resolve: (b) => settle.resolve(b), reject: (e) => settle.reject(e) };
      this.#queue.push(p);
      this.#pump();
      // Given up before its turn (an abort): it leaves the queue; one on the wire finishes unheard.
      return () => {
        const i = this.#queue.indexOf(p);
        if (i >= 0) this.#queue.splice(i, 1);
      };
    });
  }

  #pump(): void {
    if (this.#busy || this.#closed) return;
    const p = this.#queue.shift();
    if (!p) return;
    this.#busy = true;
    this.#send(p)
      .then(p.resolve, (err: Error) => {
        this.stats.failures++;
        p.reject(err);
      })
      .finally(() => {
        this.#busy = false;
        this.#pump();
      });
  }

  /** One exchange: on this connection, or on a new one (the next resolver) if it fails before an answer. */
  async #send(p: Pending): Promise<Buffer> {
    let last: Error | null = null;
    for (let attempt = 0; attempt < Math.max(2, this.endpoints.length); attempt++) {
      let conn: { tls: TLSSocket; endpoint: DohEndpoint };
      try {
        conn = await this.#connection();
      } catch (err) {
        last = err as Error;
        this.#next = (this.#next + 1) % this.endpoints.length;
        continue;
      }
      try {
        return await exchange(conn.tls, conn.endpoint, p.body, this.timeoutMs);
      } catch (err) {
        last = err as Error;
        this.#drop();
      }
    }
    throw new GatehopError(ErrorCodes.DNS_TIMEOUT, `DNS over HTTPS failed: ${last?.message ?? 'no resolver'}`);
  }

  #connection(): Promise<{ tls: TLSSocket; endpoint: DohEndpoint }> {
    if (this.#conn && !this.#conn.tls.destroyed) return Promise.resolve(this.#conn);
    this.#connecting ??= this.#open(this.endpoints[this.#next]!).finally(() => (this.#connecting = null));
    return this.#connecting;
  }

  async #open(endpoint: DohEndpoint): Promise<{ tls: TLSSocket; endpoint: DohEndpoint }> {
    const tcp = await this.stack.connectTcp(endpoint.address, endpoint.port, { timeoutMs: this.timeoutMs });
    const tls = await settleFirst<TLSSocket>(
      {
        what: `TLS with ${endpoint.serverName}`,
        deadline: {
          ms: this.timeoutMs,
          error: () => new GatehopError(ErrorCodes.DNS_TIMEOUT, `TLS with ${endpoint.serverName} took too long`),
        },
      },
      (settle) => {
        const t = tlsConnect({
          socket: tcp,
          servername: endpoint.serverName,
          ca: [...publicRoots().pems],
          // Verified by Node: the chain to the OS roots and the resolver's name.
          rejectUnauthorized: true,
          ALPNProtocols: ['http/1.1'],
        });
        t.once('secureConnect', () => settle.resolve(t));
        t.once('error', (err: Error) =>
          settle.reject(
            new GatehopError(ErrorCodes.NODE_CERT_REFUSED, `DNS over HTTPS to ${endpoint.serverName}: ${err.message}`),
          ),
        );
        return (resolved) => {
          t.removeAllListeners('error');
          if (resolved) t.on('error', () => {});
          else t.destroy();
        };
      },
    );
    if (this.#closed) {
      tls.destroy();
      throw new GatehopError(ErrorCodes.EGRESS_CLOSED, 'the tunnel is closed');
    }
    this.stats.connections++;
    this.#conn = { tls, endpoint };
    tls.once('close', () => {
      if (this.#conn?.tls === tls) this.#conn = null;
    });
    return this.#conn;
  }

  #drop(): void {
    this.#conn?.tls.destroy();
    this.#conn = null;
  }

  close(): void {
    this.#closed = true;
    this.#drop();
    for (const p of this.#queue.splice(0)) p.reject(new GatehopError(ErrorCodes.EGRESS_CLOSED, 'the tunnel is closed'));
  }
}

/** One POST and its response on a keep-alive connection (Content-Length or chunked). */
function exchange(tls: TLSSocket, e: DohEndpoint, body: Buffer, timeoutMs: number): Promise<Buffer> {
  const head =
    `POST ${e.path} HTTP/1.1\r\nHost: ${e.serverName}\r\nContent-Type: application/dns-message\r\n` +
    `Accept: application/dns-message\r\nContent-Length: ${body.length}\r\n\r\n`;
  return settleFirst<Buffer>(
    {
      what: `DNS over HTTPS to ${e.serverName}`,
      deadline: {
        ms: timeoutMs,
        error: () => new GatehopError(ErrorCodes.DNS_TIMEOUT, `${e.serverName} did not answer within ${timeoutMs} ms`),
      },
    },
    (settle) => {
      let buf = Buffer.alloc(0);
      const onClose = (): void =>
        settle.reject(new GatehopError(ErrorCodes.EGRESS_CLOSED, `${e.serverName} closed the connection`));
      const onData = (c: Buffer): void => {
        buf = Buffer.concat([buf, c]);
        let answer: DohAnswer | null;
        try {
          answer = parseDohAnswer(buf, e.serverName);
        } catch (err) {
          return settle.reject(err as Error);
        }
        if (!answer) return;
        if (answer.status !== 200)
          return settle.reject(
            new GatehopError(ErrorCodes.EGRESS_FAILED, `${e.serverName} answered HTTP ${answer.status}`),
          );
        settle.resolve(Buffer.from(answer.body));
      };
      tls.on('data', onData);
      tls.once('close', onClose);
      tls.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
      return () => {
        tls.off('data', onData);
        tls.off('close', onClose);
      };
    },
  );
}

export interface DohAnswer {
  status: number;
  body: Buffer;
}

/**
 * A DoH server's HTTP/1.1 answer as read so far (a resolver on the far side of a node: untrusted
 * bytes): null while incomplete, the status and body once whole (Content-Length or chunked); a
 * coded refusal for an answer past MAX_RESPONSE, with no length, or not HTTP at all.
 */
export function parseDohAnswer(buf: Buffer, from = 'the resolver'): DohAnswer | null {
  if (buf.length > MAX_RESPONSE) throw new GatehopError(ErrorCodes.BUFFER_OVERFLOW, `${from} sent too long an answer`);
  const head = readHttpHead(buf, {
    maxHead: MAX_RESPONSE,
    fail: (message) => new GatehopError(ErrorCodes.SESSION_PROTOCOL, `${from}: ${message}`),
  });
  if (!head) return null;
  const { status } = head;
  const rest = buf.subarray(head.length);
  const length = head.headers.get('content-length');
  if (length !== undefined) {
    const n = Number(length);
    if (!Number.isInteger(n) || n < 0 || n > MAX_RESPONSE)
      throw new GatehopError(ErrorCodes.SESSION_PROTOCOL, `${from}: a bad Content-Length`);
    return rest.length < n ? null : { status, body: rest.subarray(0, n) };
  }
  if (/chunked/i.test(head.headers.get('transfer-encoding') ?? '')) {
    const body = decodeChunked(rest);
    return body ? { status, body } : null;
  }
  throw new GatehopError(ErrorCodes.SESSION_PROTOCOL, `${from}: an answer without a length`);
}
