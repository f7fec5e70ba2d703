import { request as httpRequest, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { hostPort, isGatehopError, unbracket } from '../common/index.js';
import type { Decision, InboundType } from '../rules/index.js';
import { ProxySession, type SessionContext } from './session.js';
import { HTTPS_ONLY_PAGE } from './https-only.js';
import { httpStatusFor } from './reply-codes.js';
import { bump } from './proxy-stats.js';
import { unmapIpv4 } from './socks5-codec.js';
import { parseAuthority, parseBasicAuth, stripHopByHop, withHost } from './http-headers.js';

const UPGRADE_KEEP = new Set(['connection', 'upgrade']);
/** Where the proxy serves its PAC script (the system proxy's auto-config URL in rule mode). */
export const PAC_PATH = '/proxy.pac';

/**
 * One HTTP proxy client connection. Node's HTTP server (llhttp) parses it; this session answers
 * CONNECT by tunnelling, absolute-URI requests by forwarding each over a fresh upstream connection
 * through the session's egress, and Upgrade requests by relaying raw bytes after the head.
 */
export class HttpSession extends ProxySession<Socket> {
  readonly kind = 'http' as const;
  protected inType: InboundType = 'HTTP';
  #sawRequest = false;

  constructor(id: number, socket: Socket, ctx: SessionContext, rejected: boolean, onClosed: (s: ProxySession) => void) {
    super(id, socket, ctx, rejected, onClosed);
    socket.on('data', () => this.touch());
  }

  protected override onHandshakeTimeout(): void {
    if (!this.#sawRequest) this.#rawRefusal(408, 'handshake-timeout');
    else super.onHandshakeTimeout();
  }

  /** The parser rejected the input (garbage, oversized head): answer and close. */
  onParseError(code: string | undefined): void {
    const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    this.countMalformed(code === 'HPE_HEADER_OVERFLOW' ? 'http-header-too-large' : 'http-malformed');
    this.#rawRefusal(status, 'malformed');
  }

  /**
   * Starts a request: admission and, unless `anonymous`, credentials (scrypt off the thread; a
   * backed-off client waits).
   */
  async #beginRequest(req: IncomingMessage, anonymous = false): Promise<{ ok: boolean; status?: number }> {
    this.#sawRequest = true;
    this.handshakeDone();
    this.touch();
    if (this.rejected) return { ok: false, status: 503 };
    const creds = this.ctx.options.credentials;
    if (creds && !anonymous) {
      const given = parseBasicAuth(req.headers['proxy-authorization']);
      const admitted = given ? null : (creds.admitted?.(req.socket.remoteAddress ?? '') ?? null);
      if (admitted !== null) {
        this.user = admitted;
        return { ok: true };
      }
      if (
        !given ||
        !(await creds.verify(
          given.username,
          given.password,
          req.socket.remoteAddress ?? '',
          () => req.socket.destroyed,
        ))
      ) {
        this.ctx.stats.authFailures++;
        this.log.info({ event: 'auth-failed', user: given?.username }, 'HTTP proxy authentication failed');
        return { ok: false, status: 407 };
      }
      this.user = given.username;
    }
    return { ok: true };
  }

  async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The system proxy's auto-config script (rule mode), asked of the proxy itself. It is answered
    // without proxy credentials: the OS and browsers fetch a PAC file without them, and behind a
    // 407 they go DIRECT, outside the tunnel (#45). It tells where flows go, nothing secret.
    const pac = req.method === 'GET' && (req.url ?? '').split('?')[0] === PAC_PATH;
    // The listener's own pages (a shared listener's page for a phone): asked of it, not through it.
    const page = !pac && this.ctx.options.pages !== undefined && (req.url ?? '').startsWith('/');
    const begin = await this.#beginRequest(req, pac || page);
    if (this.closed) return;
    if (!begin.ok) return this.#respondError(res, begin.status!, req);
    if (pac) return this.#servePac(req, res);
    if (page) return this.#servePage(req, res);
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      this.countMalformed('http-not-absolute-uri');
      return this.#respondError(res, 400, req, 'This is a proxy: send an absolute URI or CONNECT.');
    }
    if (url.protocol !== 'http:') {
      this.countMalformed('http-unsupported-scheme');
      return this.#respondError(res, 400, req, `Scheme ${url.protocol} is not proxied; use CONNECT.`);
    }
    const port = url.port ? Number(url.port) : 80;
    const host = unbracket(url.hostname);
    // Each request of a keep-alive connection is its own flow, routed by its own host.
    this.inType = 'HTTP';
    await this.openFlow(
      { carries: 'http', host, port },
      {
        refused: (why) => {
          if (why.kind === 'rule') return this.#respondError(res, 403, req, refusedBy(why.decision));
          if (why.kind === 'https-only') return this.#refusePlainRequest(res, req);
          const code = isGatehopError(why.error) ? why.error.code : undefined;
          this.#respondError(res, httpStatusFor(code), req, why.error.message);
        },
        carry: (conn) => this.#forward(req, res, url, conn.stream),
      },
    );
  }

  /** Sends one absolute-URI request on over its own upstream connection and its response back. */
  #forward(req: IncomingMessage, res: ServerResponse, url: URL, upstream: Duplex): void {
    this.#countUp(req);
    const headers = withHost(stripHopByHop(req.rawHeaders), url.host);
    const forward = httpRequest({
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      createConnection: () => upstream,
    });
    forward.on('error', (err) => {
      if (res.headersSent) this.forceClose('upstream-error', err);
      else this.#respondError(res, 502, req, err.message);
    });
    forward.on('response', (ures) => {
      res.writeHead(ures.statusCode ?? 502, ures.statusMessage, stripHopByHop(ures.rawHeaders));
      ures.on('data', () => this.touch());
      ures.pipe(res);
      ures.on('error', (err) => this.forceClose('upstream-error', err));
      res.on('finish', () => upstream.destroy());
    });
    res.on('close', () => {
      if (!res.writableFinished) forward.destroy();
    });
    req.pipe(forward);
  }

  async onConnect(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // Nothing the client sends after CONNECT is read until the tunnel is there (or refused).
    socket.pause();
    const begin = await this.#beginRequest(req);
    if (this.closed) return;
    if (!begin.ok) return this.#rawRefusal(begin.status!, 'refused');
    const target = parseAuthority(req.url ?? '');
    if (!target) {
      this.countMalformed('http-bad-connect-target');
      return this.#rawRefusal(400, 'malformed');
    }
    this.inType = 'HTTPS';
    await this.openFlow(
      { client: socket, ...target, named: isIP(target.host) === 0, early: head, carries: 'bytes' },
      {
        connected: () => void socket.write('HTTP/1.1 200 Connection Established\r\n\r\n'),
        refused: (why) => {
          if (why.kind === 'rule') return this.#rawRefusal(403, 'rule-reject', undefined, refusedBy(why.decision));
          if (why.kind === 'https-only') return this.#rawRefusal(403, 'https-only');
          const code = isGatehopError(why.error) ? why.error.code : undefined;
          this.#rawRefusal(httpStatusFor(code), 'connect-failed', why.error);
        },
      },
    );
  }

  async onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const begin = await this.#beginRequest(req);
    if (this.closed) return;
    if (!begin.ok) return this.#rawRefusal(begin.status!, 'refused');
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('scheme');
    } catch {
      this.countMalformed('http-not-absolute-uri');
      return this.#rawRefusal(400, 'malformed');
    }
    socket.pause();
    this.inType = 'HTTP';
    await this.openFlow(
      { carries: 'http', host: unbracket(url.hostname), port: url.port ? Number(url.port) : 80 },
      {
        refused: (why) => {
          if (why.kind === 'rule') return this.#rawRefusal(403, 'rule-reject', undefined, refusedBy(why.decision));
          // A plain ws:// upgrade is plain HTTP too.
          if (why.kind === 'https-only') return this.refusePlainHttp(socket);
          const code = isGatehopError(why.error) ? why.error.code : undefined;
          this.#rawRefusal(httpStatusFor(code), 'connect-failed', why.error);
        },
        carry: (conn) => {
          const headers = withHost(stripHopByHop(req.rawHeaders, UPGRADE_KEEP), url.host);
          let text = `${req.method} ${url.pathname}${url.search} HTTP/${req.httpVersion}\r\n`;
          for (let i = 0; i + 1 < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
          conn.stream.write(`${text}\r\n`);
          if (head.length > 0) conn.stream.write(head);
          this.relay(socket, conn.stream);
          socket.resume();
        },
      },
    );
  }

  /** An absolute http:// request through a volunteer node with HTTPS only on: the page that says why. */
  #refusePlainRequest(res: ServerResponse, req: IncomingMessage): void {
    this.ctx.stats.httpsOnlyRefused++;
    bump(this.ctx.stats.errorReplies, 'http-403');
    this.log.info({ event: 'https-only-refused', target: req.url }, 'plain HTTP through a volunteer node refused');
    const body = Buffer.from(HTTPS_ONLY_PAGE, 'utf8');
    res.writeHead(403, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Length': body.length,
      'Cache-Control': 'no-store',
    });
    res.end(body);
    req.resume();
  }

  /** This listener's PAC script, naming the address the client reached it at. */
  #pacScript(): string | null {
    const host = unmapIpv4(this.socket.localAddress ?? '127.0.0.1');
    return this.ctx.router.pac(hostPort(host, this.socket.localPort ?? 0));
  }

  async #servePage(req: IncomingMessage, res: ServerResponse): Promise<void> {
    req.resume();
    let served: boolean;
    try {
      served = await this.ctx.options.pages!.serve(req, res, () => this.#pacScript());
    } catch (err) {
      this.log.warn({ event: 'page-failed', err: (err as Error).message }, 'a local page failed');
      if (!res.headersSent) this.#respondError(res, 500, req);
      else res.destroy();
      return;
    }
    if (!served) this.#respondError(res, 404, req);
  }

  #servePac(req: IncomingMessage, res: ServerResponse): void {
    const script = this.#pacScript();
    if (script === null) return this.#respondError(res, 404, req, 'no routing here, so no PAC');
    res.writeHead(200, {
      'Content-Type': 'application/x-ns-proxy-autoconfig',
      'Content-Length': Buffer.byteLength(script),
      'Cache-Control': 'no-cache',
    });
    res.end(script);
  }

  /** Up bytes as the request body arrives; down bytes are counted at the client socket (what the client has taken), as for every session. */
  #countUp(req: IncomingMessage): void {
    req.on('data', (c: Buffer) => {
      this.bytesUp += c.length;
      this.ctx.stats.bytesUp += c.length;
    });
  }

  #respondError(res: ServerResponse, status: number, req: IncomingMessage, detail?: string): void {
    bump(this.ctx.stats.errorReplies, `http-${status}`);
    const body = `${status} ${STATUS_CODES[status] ?? ''}${detail ? `: ${detail}` : ''}\n`;
    const headers: Record<string, string | number> = {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    };
    if (status === 407) headers['Proxy-Authenticate'] = 'Basic realm="gatehop"';
    // After a refusal that ends the session, say so; an upstream failure keeps the connection.
    const closing = status === 503 || status === 407 || status === 400;
    if (closing) headers['Connection'] = 'close';
    if (res.headersSent) {
      this.forceClose('upstream-error');
      return;
    }
    res.writeHead(status, headers);
    res.end(body);
    if (closing) res.on('finish', () => this.forceClose(`http-${status}`));
    req.resume();
  }

  /** A response written straight to the socket (no ServerResponse exists for CONNECT/Upgrade/errors). */
  #rawRefusal(status: number, reason: string, err?: Error, detail?: string): void {
    bump(this.ctx.stats.errorReplies, `http-${status}`);
    const extra = status === 407 ? 'Proxy-Authenticate: Basic realm="gatehop"\r\n' : '';
    const body = detail ? `${status} ${STATUS_CODES[status] ?? ''}: ${detail}\n` : '';
    const type = body ? 'Content-Type: text/plain; charset=utf-8\r\n' : '';
    const head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${extra}${type}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
    this.handshakeDone();
    if (this.socket.writable) this.socket.end(head, () => this.forceClose(reason, err));
    else this.forceClose(reason, err);
    const flushTimer = setTimeout(() => this.forceClose(reason, err), 2_000);
    flushTimer.unref();
    this.socket.once('close', () => clearTimeout(flushTimer));
  }
}

/** The short body of a 403 for a rule that refuses: which rule. */
function refusedBy(d: Decision): string {
  return `refused by the rule ${d.rule}${d.payload ? `,${d.payload}` : ''}`;
}
