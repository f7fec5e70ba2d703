/**
 * Into an SE-VPN session (shared/docs/softether-protocol-notes.md; SoftEther's Protocol.c
 * `ClientConnect`): TCP (straight or through the upstream), TLS under the node trust rule, the
 * signature POST, the Hello, the login with the password proof, the Welcome. What follows on the
 * same TLS stream is the session's data (se-session.ts).
 */
import { randomBytes } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { ErrorCodes, GatehopError } from '../common/index.js';
import { dialNodeTls, type NodeTrust, type TrustRule, type UpstreamProxy } from '../reach/index.js';
import { postHttp, readPackAnswer } from './http-exchange.js';
import { Pack } from './pack.js';
import { hashPassword, securePassword } from './password.js';

/** What SoftEther's own client says it is (its ClientStr / version / build); servers log it. */
const CLIENT_STR = 'SoftEther VPN Client';
const CLIENT_VER = 443;
const CLIENT_BUILD = 9798;
/** The body SoftEther accepts in place of its watermark (HTTP_VPN_TARGET_POSTDATA). */
const SIGNATURE = Buffer.from('VPNCONNECT');

export interface SeDialOptions {
  /** Where to connect: the node's address. */
  host: string;
  port: number;
  trust: NodeTrust;
  /** Send the DDNS name as SNI (SoftEther's client does). */
  sni?: boolean;
  upstream?: UpstreamProxy | null;
  /** VPN Gate's: `VPNGATE` / `vpn` / `vpn`. */
  hub: string;
  username: string;
  password: string;
  /** TCP connections the session may use (the server's policy may allow fewer). */
  maxConnection: number;
  signal: AbortSignal;
}

/** What the server's Welcome says about the session. */
export interface Welcome {
  sessionName: string;
  connectionName: string;
  /** Names the session when more connections join it. */
  sessionKey: Buffer;
  maxConnection: number;
  halfConnection: boolean;
  /** Silence past this ends the session on the server (ms); keep-alives go at a fifth to a half of it. */
  timeoutMs: number;
  /** The Hello's server string, version and build. */
  server: { name: string; version: number; build: number };
  /** The hub's message to its users (VPN Gate nodes' operators write here), if any. */
  message: string | null;
}

export interface SeConnection {
  tls: TLSSocket;
  /** Which trust rule accepted the node's certificate. */
  trustRule: TrustRule;
  welcome: Welcome;
  /** Data that came with the Welcome: the start of the block stream. */
  rest: Buffer;
}

export async function dialSeVpn(o: SeDialOptions): Promise<SeConnection> {
  const where = `SE-VPN to ${o.trust.serverName ?? o.host} (${o.host}:${o.port})`;
  const { tls, trustRule } = await openTls(o, where);
  try {
    const hello = await signatureAndHello(tls, o, where);
    // The login, answered by the Welcome.
    postHttp(
      tls,
      '/vpnsvc/vpn.cgi',
      o.host,
      'application/octet-stream',
      loginPack(o, hello.random).encode({ pencore: true }),
    );
    const { pack: w, rest } = await readPackAnswer(tls, where, o.signal);
    if (w.getInt('Redirect'))
      throw new GatehopError(ErrorCodes.SOFTETHER_REFUSED, `${where} redirects to a cluster member (not followed)`);
    const sessionKey = w.getData('session_key');
    const sessionName = w.getStr('session_name');
    if (!sessionKey || sessionKey.length !== 20 || sessionName === null)
      throw new GatehopError(ErrorCodes.SOFTETHER_PROTOCOL, `${where} sent a Welcome without its session`);
    if (w.getInt('use_encrypt') === 0)
      throw new GatehopError(ErrorCodes.SOFTETHER_REFUSED, `${where} would carry the session unencrypted (refused)`);
    const msg = w.getData('Msg');
    return {
      tls,
      trustRule,
      rest,
      welcome: {
        sessionName,
        connectionName: w.getStr('connection_name') ?? '',
        sessionKey,
        maxConnection: Math.max(1, Math.min(32, w.getInt('max_connection') ?? 1)),
        halfConnection: w.getBool('half_connection'),
        timeoutMs: clampTimeout(w.getInt('timeout')),
        server: hello.server,
        message: msg && msg.length > 0 ? msg.toString('utf8').replace(/\0+$/, '').slice(0, 4096) : null,
      },
    };
  } catch (err) {
    tls.destroy();
    throw err;
  }
}

/** Which way an additional connection carries blocks (SoftEther's TCP_BOTH, TCP_CLIENT_TO_SERVER, TCP_SERVER_TO_CLIENT). */
export type LaneDirection = 'both' | 'up' | 'down';

/** One more TCP connection of an established session (SoftEther's ClientAdditionalConnect). */
export interface SeAdditionalConnection {
  tls: TLSSocket;
  direction: LaneDirection;
  rest: Buffer;
}

/**
 * Joins one more TCP connection to the session `sessionKey` names: the same TLS, signature and
 * Hello as the first, then `additional_connect` with the key instead of a login. The server
 * answers with the direction the connection carries (both ways unless the session is half-duplex)
 * or refuses (too many connections, the session gone): GH_ERR_SOFTETHER_REFUSED.
 */
export async function dialSeVpnAdditional(
  o: Omit<SeDialOptions, 'hub' | 'username' | 'password' | 'maxConnection'>,
  sessionKey: Buffer,
): Promise<SeAdditionalConnection> {
  const where = `SE-VPN additional connection to ${o.trust.serverName ?? o.host} (${o.host}:${o.port})`;
  const { tls } = await openTls(o, where);
  try {
    await signatureAndHello(tls, o, where);
    const join = new Pack()
      .addStr('method', 'additional_connect')
      .addData('session_key', sessionKey)
      .addStr('client_str', CLIENT_STR)
      .addInt('client_ver', CLIENT_VER)
      .addInt('client_build', CLIENT_BUILD);
    postHttp(tls, '/vpnsvc/vpn.cgi', o.host, 'application/octet-stream', join.encode({ pencore: true }));
    const { pack, rest } = await readPackAnswer(tls, where, o.signal);
    const d = pack.getInt('direction') ?? 0;
    return { tls, rest, direction: d === 1 ? 'up' : d === 2 ? 'down' : 'both' };
  } catch (err) {
    tls.destroy();
    throw err;
  }
}

/** The signature POST, answered by the Hello: the server's random for the login and who it is. */
async function signatureAndHello(
  tls: TLSSocket,
  o: { host: string; signal: AbortSignal },
  where: string,
): Promise<{ random: Buffer; server: Welcome['server'] }> {
  postHttp(tls, '/vpnsvc/connect.cgi', o.host, 'image/jpeg', SIGNATURE);
  const hello = (await readPackAnswer(tls, where, o.signal)).pack;
  const random = hello.getData('random');
  const name = hello.getStr('hello');
  if (!random || random.length !== 20 || name === null)
    throw new GatehopError(ErrorCodes.SOFTETHER_PROTOCOL, `${where} sent a Hello without its random`);
  return { random, server: { name, version: hello.getInt('version') ?? 0, build: hello.getInt('build') ?? 0 } };
}

/** The login PACK: SoftEther's ClientUploadAuth with password authentication and no UDP acceleration. */
function loginPack(o: SeDialOptions, random: Buffer): Pack {
  return new Pack()
    .addStr('method', 'login')
    .addStr('hubname', o.hub)
    .addStr('username', o.username)
    .addInt('authtype', 1)
    .addData('secure_password', securePassword(hashPassword(o.username, o.password), random))
    .addStr('client_str', CLIENT_STR)
    .addInt('client_ver', CLIENT_VER)
    .addInt('client_build', CLIENT_BUILD)
    .addInt('protocol', 0)
    .addStr('hello', CLIENT_STR)
    .addInt('version', CLIENT_VER)
    .addInt('build', CLIENT_BUILD)
    .addInt('client_id', 0)
    .addInt('max_connection', Math.max(1, Math.min(32, o.maxConnection)))
    .addInt('use_encrypt', 1)
    .addInt('use_compress', 0)
    .addInt('half_connection', 0)
    .addBool('require_bridge_routing_mode', false)
    .addBool('require_monitor_mode', false)
    .addBool('qos', true)
    .addBool('support_bulk_on_rudp', false)
    .addBool('support_hmac_on_bulk_of_rudp', false)
    .addBool('support_udp_recovery', false)
    .addData('unique_id', randomBytes(20))
    .addInt('rudp_bulk_max_version', 0);
}

/** The Welcome's timeout, within what keeps keep-alives sensible (SoftEther's default is 20–60 s). */
function clampTimeout(ms: number | null): number {
  if (!ms) return 30_000;
  return Math.max(5_000, Math.min(600_000, ms));
}

/** TCP and TLS under the node trust rule: the one node dial (core/reach/node-tls). */
async function openTls(
  o: Pick<SeDialOptions, 'host' | 'port' | 'trust' | 'sni' | 'upstream' | 'signal'>,
  where: string,
): Promise<{ tls: TLSSocket; trustRule: TrustRule }> {
  const c = await dialNodeTls({
    host: o.host,
    port: o.port,
    trust: o.trust,
    ...(o.sni !== undefined ? { sni: o.sni } : {}),
    upstream: o.upstream ?? null,
    signal: o.signal,
    what: where,
  });
  return { tls: c.tls, trustRule: c.rule };
}
