import { isIP, Socket } from 'node:net';
import { abortReason, ErrorCodes, GatehopError, type ErrorCode, settleFirst, unbracket } from '../common/index.js';
import {
  encodeSocksAddress,
  encodeSocksUdpHeader,
  parseSocksAddress,
  parseSocksUdpHeader,
  SocksAddrType,
} from './socks5-wire.js';

/**
 * The user's other proxy (config `upstream.url`): a corporate proxy, another circumvention tool.
 * Gatehop dials through it the way OpenVPN's own `socks-proxy` and `http-proxy` options do: a
 * SOCKS5 CONNECT (RFC 1928, RFC 1929 credentials) or an HTTP CONNECT (RFC 9110 §9.3.6), with the
 * target's name sent to the proxy so that it, not the local resolver, looks the name up.
 */
export interface UpstreamProxy {
  readonly kind: 'socks5' | 'http';
  readonly host: string;
  readonly port: number;
  readonly username: string | null;
  readonly password: string | null;
  /** The URL without its password, for logs and /status. */
  readonly display: string;
}

/** Parses `socks5://[user:pass@]HOST:PORT` (socks5h too) or `http://[user:pass@]HOST:PORT`. */
export function parseUpstreamUrl(text: string): UpstreamProxy {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new GatehopError(
      ErrorCodes.CONFIG_INVALID,
      `upstream "${text}" is not a URL (socks5://HOST:PORT or http://HOST:PORT)`,
    );
  }
  const scheme = u.protocol.replace(/:$/, '');
  const kind = scheme === 'socks5' || scheme === 'socks5h' ? 'socks5' : scheme === 'http' ? 'http' : null;
  if (!kind)
    throw new GatehopError(
      ErrorCodes.CONFIG_INVALID,
      `upstream "${redact(u)}": the scheme must be socks5 or http, not ${scheme}`,
    );
  if (!u.hostname) throw new GatehopError(ErrorCodes.CONFIG_INVALID, `upstream "${redact(u)}" has no host`);
  if (u.pathname !== '' && u.pathname !== '/')
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `upstream "${redact(u)}" must not have a path`);
  const port = u.port ? Number(u.port) : kind === 'socks5' ? 1080 : 8080;
  const username = u.username ? decodeURIComponent(u.username) : null;
  const password = u.password ? decodeURIComponent(u.password) : null;
  if (kind === 'socks5' && ((username?.length ?? 0) > 255 || (password?.length ?? 0) > 255)) {
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, 'upstream: a SOCKS5 user name or password is at most 255 bytes');
  }
  return Object.freeze({
    kind,
    host: unbracket(u.hostname),
    port,
    username,
    password,
    display: redact(u),
  });
}

function redact(u: URL): string {
  const who = u.username ? `${decodeURIComponent(u.username)}${u.password ? ':***' : ''}@` : '';
  return `${u.protocol}//${who}${u.host}`;
}

export interface UpstreamDialOptions {
  signal?: AbortSignal;
  /** The whole dial: the connection to the proxy and its handshake (default 15 s). */
  timeoutMs?: number;
}

/** SOCKS5 reply codes (RFC 1928 §6) as Gatehop's egress codes: the proxy reached the target or said why not. */
const SOCKS_REPLY: Record<number, [code: ErrorCode, text: string]> = {
  1: [ErrorCodes.UPSTREAM_FAILED, 'general failure'],
  2: [ErrorCodes.EGRESS_NOT_ALLOWED, 'not allowed by its rules'],
  3: [ErrorCodes.EGRESS_NETWORK_UNREACHABLE, 'network unreachable'],
  4: [ErrorCodes.EGRESS_HOST_UNREACHABLE, 'host unreachable'],
  5: [ErrorCodes.EGRESS_CONNECT_REFUSED, 'connection refused'],
  6: [ErrorCodes.EGRESS_CONNECT_TIMEOUT, 'TTL expired'],
  7: [ErrorCodes.UPSTREAM_FAILED, 'command not supported'],
  8: [ErrorCodes.UPSTREAM_FAILED, 'address type not supported'],
};

/**
 * A TCP connection to `host:port` through the upstream proxy, handshake done: what is read from
 * it is the target's. Bytes the proxy sent after its reply are pushed back into the socket.
 */
export async function dialThroughUpstream(
  up: UpstreamProxy,
  host: string,
  port: number,
  opts: UpstreamDialOptions = {},
): Promise<Socket> {
  const deadline = AbortSignal.timeout(opts.timeoutMs ?? 15_000);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  const target = `${host}:${port}`;
  const socket = await connectToProxy(up, signal);
  const reader = new HandshakeReader(socket, signal, `upstream ${up.display}`);
  try {
    if (up.kind === 'socks5') await socks5Connect(up, reader, host, port);
    else await httpConnect(up, reader, host, port);
    reader.finish();
    return socket;
  } catch (err) {
    reader.finish();
    socket.destroy();
    if (err instanceof GatehopError)
      throw new GatehopError(err.code, `${target} through ${up.display}: ${err.message}`, { cause: err });
    throw err;
  }
}

/** The SOCKS5 proxy's UDP relay (UDP ASSOCIATE, RFC 1928 §7): the association lives as long as `control` is open. */
export async function socks5UdpAssociate(
  up: UpstreamProxy,
  opts: UpstreamDialOptions = {},
): Promise<{ control: Socket; relay: { host: string; port: number } }> {
  if (up.kind !== 'socks5')
    throw new GatehopError(ErrorCodes.UPSTREAM_FAILED, `${up.display} is an HTTP proxy: it carries no UDP`);
  const deadline = AbortSignal.timeout(opts.timeoutMs ?? 15_000);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  const control = await connectToProxy(up, signal);
  const reader = new HandshakeReader(control, signal, `upstream ${up.display}`);
  try {
    await socks5Greet(up, reader);
    // DST.ADDR 0.0.0.0:0: we do not know the address we will send from (RFC 1928 §7).
    control.write(Buffer.from([5, 3, 0, 1, 0, 0, 0, 0, 0, 0]));
    const bound = await socks5Reply(reader);
    reader.finish();
    // A relay that names 0.0.0.0 means "the address you reached me at".
    const relayHost = bound.host === '0.0.0.0' || bound.host === '::' ? up.host : bound.host;
    control.on('error', () => {}); // its owner watches 'close'
    return { control, relay: { host: relayHost, port: bound.port } };
  } catch (err) {
    reader.finish();
    control.destroy();
    throw err;
  }
}

/** The SOCKS5 UDP request header (RFC 1928 §7) for a datagram to `host:port` (an IPv4 address or a name). */
export function socks5UdpHeader(host: string, port: number): Buffer {
  return encodeSocksUdpHeader(host, port);
}

/** Strips the SOCKS5 UDP header; null for a fragment or a malformed datagram (both dropped, §7). */
export function parseSocks5Udp(datagram: Buffer): { host: string; port: number; data: Buffer } | null {
  if (datagram.length < 4 || datagram[0] !== 0 || datagram[1] !== 0) return null;
  const h = parseSocksUdpHeader(datagram);
  if ('error' in h || h.frag !== 0) return null;
  return { host: h.target.host, port: h.target.port, data: datagram.subarray(h.headerLength) };
}

function connectToProxy(up: UpstreamProxy, signal: AbortSignal): Promise<Socket> {
  return settleFirst<Socket>({ signal, what: `connect to upstream ${up.display}` }, (settle) => {
    const socket = new Socket();
    const onError = (err: NodeJS.ErrnoException): void =>
      settle.reject(
        new GatehopError(
          ErrorCodes.UPSTREAM_FAILED,
          `cannot reach the upstream proxy ${up.display}: ${err.code ?? err.message}`,
          { cause: err },
        ),
      );
    socket.once('error', onError);
    socket.connect({ host: up.host, port: up.port, noDelay: true }, () => settle.resolve(socket));
    return (resolved) => {
      socket.off('error', onError);
      if (!resolved) socket.destroy();
    };
  });
}

async function socks5Greet(up: UpstreamProxy, r: HandshakeReader): Promise<void> {
  const withAuth = up.username !== null;
  r.socket.write(Buffer.from(withAuth ? [5, 2, 0, 2] : [5, 1, 0]));
  const [ver, method] = await r.read(2);
  if (ver !== 5) throw new GatehopError(ErrorCodes.UPSTREAM_FAILED, 'not a SOCKS5 proxy (bad version in its greeting)');
  if (method === 0xff)
    throw new GatehopError(
      ErrorCodes.UPSTREAM_AUTH_FAILED,
      withAuth
        ? 'the proxy accepts neither no authentication nor a user name and password'
        : 'the proxy wants credentials (add user:pass@ to upstream.url)',
    );
  if (method === 2) {
    if (!withAuth)
      throw new GatehopError(
        ErrorCodes.UPSTREAM_AUTH_FAILED,
        'the proxy wants credentials (add user:pass@ to upstream.url)',
      );
    const user = Buffer.from(up.username, 'utf8');
    const pass = Buffer.from(up.password ?? '', 'utf8');
    r.socket.write(Buffer.concat([Buffer.from([1, user.length]), user, Buffer.from([pass.length]), pass]));
    const [, status] = await r.read(2);
    if (status !== 0)
      throw new GatehopError(ErrorCodes.UPSTREAM_AUTH_FAILED, 'the proxy refused the user name and password');
  } else if (method !== 0) {
    throw new GatehopError(
      ErrorCodes.UPSTREAM_FAILED,
      `the proxy chose an authentication method Gatehop does not speak (${method})`,
    );
  }
}

async function socks5Reply(r: HandshakeReader): Promise<{ host: string; port: number }> {
  const [ver, rep, , atyp] = await r.read(4);
  if (ver !== 5) throw new GatehopError(ErrorCodes.UPSTREAM_FAILED, 'bad SOCKS5 reply');
  if (rep !== 0) {
    const [code, text] = SOCKS_REPLY[rep!] ?? [ErrorCodes.UPSTREAM_FAILED, `reply ${rep}`];
    throw new GatehopError(code, `the proxy answered: ${text}`);
  }
  // The bound address, read as far as its type says, then parsed by the one SOCKS5 codec.
  let rest: Buffer;
  if (atyp === SocksAddrType.IPV4) rest = await r.read(4 + 2);
  else if (atyp === SocksAddrType.IPV6) rest = await r.read(16 + 2);
  else if (atyp === SocksAddrType.DOMAIN) {
    const len = await r.read(1);
    rest = Buffer.concat([len, await r.read(len[0]! + 2)]);
  } else throw new GatehopError(ErrorCodes.UPSTREAM_FAILED, `bad address type ${atyp} in the SOCKS5 reply`);
  const a = parseSocksAddress(Buffer.concat([Buffer.from([atyp]), rest]), 0);
  if (a.kind !== 'ok')
    throw new GatehopError(ErrorCodes.UPSTREAM_FAILED, `bad address in the SOCKS5 reply (${a.kind})`);
  return { host: a.value.host, port: a.value.port };
}

async function socks5Connect(up: UpstreamProxy, r: HandshakeReader, host: string, port: number): Promise<void> {
  let addr: Buffer;
  try {
    addr = encodeSocksAddress(host, port);
  } catch (err) {
    throw new GatehopError(ErrorCodes.UPSTREAM_FAILED, `${host}: ${(err as Error).message}`, { cause: err });
  }
  await socks5Greet(up, r);
  r.socket.write(Buffer.concat([Buffer.from([5, 1, 0]), addr]));
  await socks5Reply(r);
}

async function httpConnect(up: UpstreamProxy, r: HandshakeReader, host: string, port: number): Promise<void> {
  const authority = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  const auth =
    up.username !== null
      ? `Proxy-Authorization: Basic ${Buffer.from(`${up.username}:${up.password ?? ''}`).toString('base64')}\r\n`
      : '';
  r.socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
  const head = (await r.readUntil('\r\n\r\n', 16 * 1024)).toString('latin1');
  const m = /^HTTP\/1\.[01] (\d{3})(?: ([^\r\n]*))?/.exec(head);
  if (!m) throw new GatehopError(ErrorCodes.UPSTREAM_FAILED, 'not an HTTP proxy (no status line in its answer)');
  const status = Number(m[1]);
  if (status >= 200 && status < 300) return;
  const said = `${status}${m[2] ? ` ${m[2].slice(0, 80)}` : ''}`;
  // 407 is the standard answer; tinyproxy answers a CONNECT without good credentials with 401.
  if (status === 407 || status === 401)
    throw new GatehopError(ErrorCodes.UPSTREAM_AUTH_FAILED, `the proxy wants credentials or refused them (${said})`);
  if (status === 403 || status === 405)
    throw new GatehopError(ErrorCodes.EGRESS_NOT_ALLOWED, `the proxy refused CONNECT (${said})`);
  if (status === 504)
    throw new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, `the proxy timed out reaching the target (${said})`);
  if (status === 500 || status === 502 || status === 503)
    throw new GatehopError(ErrorCodes.EGRESS_CONNECT_REFUSED, `the proxy could not reach the target (${said})`);
  throw new GatehopError(ErrorCodes.UPSTREAM_FAILED, `the proxy answered ${said}`);
}

/**
 * Reads a proxy's handshake replies off a socket in paused mode ('readable' and read()), so that
 * when it lets go the socket is neither flowing nor paused on purpose: whoever attaches a 'data'
 * listener next gets everything, the bytes the proxy sent after its reply first.
 */
class HandshakeReader {
  #buf: Buffer = Buffer.alloc(0);
  #wake: (() => void) | null = null;
  #failure: Error | null = null;
  readonly #onReadable = (): void => {
    for (let c = this.socket.read() as Buffer | null; c !== null; c = this.socket.read() as Buffer | null) {
      this.#buf = this.#buf.length === 0 ? c : Buffer.concat([this.#buf, c]);
    }
    this.#wake?.();
  };
  readonly #onEnd = (): void =>
    this.#fail(new GatehopError(ErrorCodes.UPSTREAM_FAILED, 'the proxy closed the connection during its handshake'));
  readonly #onError = (err: NodeJS.ErrnoException): void =>
    this.#fail(
      new GatehopError(ErrorCodes.UPSTREAM_FAILED, `the connection to the proxy failed: ${err.code ?? err.message}`, {
        cause: err,
      }),
    );
  readonly #onAbort = (): void => this.#fail(abortReason(this.signal, this.what));

  constructor(
    readonly socket: Socket,
    private readonly signal: AbortSignal,
    private readonly what: string,
  ) {
    socket.on('readable', this.#onReadable);
    socket.on('end', this.#onEnd);
    socket.on('error', this.#onError);
    signal.addEventListener('abort', this.#onAbort, { once: true });
    if (signal.aborted) this.#onAbort();
  }

  #fail(err: Error): void {
    this.#failure ??= err;
    this.#wake?.();
  }

  async read(n: number): Promise<Buffer> {
    while (this.#buf.length < n) await this.#more();
    const out = this.#buf.subarray(0, n);
    this.#buf = this.#buf.subarray(n);
    return out;
  }

  async readUntil(delimiter: string, max: number): Promise<Buffer> {
    for (;;) {
      const at = this.#buf.indexOf(delimiter, 0, 'latin1');
      if (at >= 0) {
        const out = this.#buf.subarray(0, at + delimiter.length);
        this.#buf = this.#buf.subarray(at + delimiter.length);
        return out;
      }
      if (this.#buf.length > max)
        throw new GatehopError(ErrorCodes.UPSTREAM_FAILED, `the proxy's answer is longer than ${max} bytes`);
      await this.#more();
    }
  }

  #more(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise<void>((resolve, reject) => {
      this.#wake = () => {
        this.#wake = null;
        if (this.#failure) reject(this.#failure);
        else resolve();
      };
    });
  }

  /** Detaches; bytes of the target's stream that came with the proxy's reply go back into the socket. */
  finish(): void {
    this.socket.off('readable', this.#onReadable);
    this.socket.off('end', this.#onEnd);
    this.socket.off('error', this.#onError);
    this.signal.removeEventListener('abort', this.#onAbort);
    if (this.#buf.length > 0) this.socket.unshift(this.#buf);
    this.#buf = Buffer.alloc(0);
  }
}
