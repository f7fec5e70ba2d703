import { isIP } from 'node:net';
import { ErrorCodes, GatehopError } from '../common/index.js';

export type OvpnProto = 'tcp' | 'udp';

export interface OvpnRemote {
  readonly host: string;
  readonly port: number;
  readonly proto: OvpnProto;
}

/** A parsed, sanitized .ovpn profile: only what the client acts on. */
export interface OvpnProfile {
  readonly remotes: readonly OvpnRemote[];
  readonly cipher: string | null;
  readonly dataCiphers: readonly string[];
  readonly dataCiphersFallback: string | null;
  readonly auth: string | null;
  readonly ca: string | null;
  readonly cert: string | null;
  readonly key: string | null;
  readonly tlsAuth: string | null;
  readonly tlsCrypt: string | null;
  readonly keyDirection: 0 | 1 | null;
  /** The profile asks for a user name and password (the caller supplies them). */
  readonly authUserPass: boolean;
  readonly tunMtu: number | null;
  readonly pingS: number | null;
  readonly pingRestartS: number | null;
  readonly renegSec: number | null;
  readonly verifyX509Name: { name: string; type: 'subject' | 'name' | 'name-prefix' } | null;
  readonly remoteCertTls: 'server' | null;
  /** `compress`/`comp-lzo` as written, null when absent. */
  readonly compression: string | null;
  /** Directives dropped (they would run code or touch the host) or not understood. */
  readonly warnings: readonly string[];
}

const MAX_PROFILE_BYTES = 256 * 1024;
const INLINE = new Set(['ca', 'cert', 'key', 'tls-auth', 'tls-crypt', 'extra-certs']);

/** Directives that would run programs or touch the host: never acted on. */
const DANGEROUS = new Set([
  'up',
  'down',
  'script-security',
  'plugin',
  'route-up',
  'route-pre-down',
  'ipchange',
  'client-connect',
  'client-disconnect',
  'learn-address',
  'auth-user-pass-verify',
  'tls-verify',
  'dev-node',
  'management',
  'management-client',
  'management-hold',
  'management-query-passwords',
  'daemon',
  'log',
  'log-append',
  'writepid',
  'cd',
  'chroot',
  'user',
  'group',
  'iproute',
  'config',
  'status',
  'tmp-dir',
  'setenv-safe',
  'up-restart',
  'down-pre',
  'route-noexec',
  'ifconfig-noexec',
  'lladdr',
  'machine-readable-output',
  'auth-user-pass-optional',
  'askpass',
  'pkcs11-providers',
  'cryptoapicert',
  'engine',
]);

/** Understood and harmless for a user-space client, or handled elsewhere: ignored quietly. */
const IGNORED = new Set([
  'client',
  'nobind',
  'persist-key',
  'persist-tun',
  'resolv-retry',
  'verb',
  'mute',
  'float',
  'pull',
  'tls-client',
  'remote-random',
  'redirect-gateway',
  'http-proxy-retry',
  'connect-retry',
  'connect-retry-max',
  'connect-timeout',
  'auth-nocache',
  'mute-replay-warnings',
  'setenv',
  'ignore-unknown-option',
  'block-outside-dns',
  'sndbuf',
  'rcvbuf',
  'route-method',
  'route-delay',
  'explicit-exit-notify',
  'tls-version-min',
  'tls-version-max',
  'tls-cipher',
  'tls-ciphersuites',
  'route',
  'route-ipv6',
  'dhcp-option',
  'topology',
  'mssfix',
  'link-mtu',
  'allow-compression',
  'auth-retry',
  'push-peer-info',
  'ns-cert-type',
  'key-direction',
  'ncp-ciphers',
  'keysize',
  'tun-ipv6',
  'fast-io',
  'hand-window',
  'tran-window',
  'server-poll-timeout',
  'inactive',
  'pull-filter',
  'route-nopull',
  'dev-type',
  'single-session',
  'remote-cert-ku',
  'remote-cert-eku',
  'replay-window',
  'windows-driver',
  'register-dns',
]);

/** Not understood, and they change what goes on the wire: the profile cannot be used. */
const FATAL = new Set([
  'tls-crypt-v2',
  'secret',
  'fragment',
  'http-proxy',
  'socks-proxy',
  'tls-server',
  'mode',
  'server',
  'peer-fingerprint',
  'pkcs12',
]);

function tokenize(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line))
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3]!));
  return out;
}

function protoOf(text: string, where: string): OvpnProto {
  const p = text.toLowerCase();
  if (/^tcp(4|6)?(-client)?$/.test(p)) return 'tcp';
  if (/^udp(4|6)?$/.test(p)) return 'udp';
  throw new GatehopError(ErrorCodes.PROFILE_INVALID, `${where}: unsupported protocol "${text}"`);
}

function portOf(text: string, where: string): number {
  const n = Number(text);
  if (!/^\d{1,5}$/.test(text) || n < 1 || n > 65535)
    throw new GatehopError(ErrorCodes.PROFILE_INVALID, `${where}: bad port "${text}"`);
  return n;
}

function intOf(text: string | undefined, where: string): number {
  const n = Number(text);
  if (text === undefined || !/^\d{1,9}$/.test(text))
    throw new GatehopError(ErrorCodes.PROFILE_INVALID, `${where}: expected a number`);
  return n;
}

/**
 * Parses `.ovpn` text (CRLF or LF). Throws GH_ERR_PROFILE_INVALID naming the line for anything that
 * makes the profile unusable; collects warnings for what it drops. Never acts on anything.
 */
export function parseProfile(text: string): OvpnProfile {
  if (text.length > MAX_PROFILE_BYTES)
    throw new GatehopError(ErrorCodes.PROFILE_INVALID, `profile larger than ${MAX_PROFILE_BYTES} bytes`);
  const warnings: string[] = [];
  const inline: Record<string, string> = {};
  const remotesRaw: Array<{ host: string; port?: number; proto?: OvpnProto }> = [];
  let proto: OvpnProto = 'udp';
  let port = 1194;
  let cipher: string | null = null;
  let dataCiphers: string[] = [];
  let dataCiphersFallback: string | null = null;
  let auth: string | null = null;
  let keyDirection: 0 | 1 | null = null;
  let authUserPass = false;
  let tunMtu: number | null = null;
  let pingS: number | null = null;
  let pingRestartS: number | null = null;
  let renegSec: number | null = null;
  let verifyX509Name: OvpnProfile['verifyX509Name'] = null;
  let remoteCertTls: 'server' | null = null;
  let compression: string | null = null;
  let sawDev = false;

  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const where = `line ${i + 1}`;
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const block = /^<([a-z0-9-]+)>$/i.exec(line);
    if (block) {
      const tag = block[1]!.toLowerCase();
      const body: string[] = [];
      let j = i + 1;
      while (j < lines.length && lines[j]!.trim().toLowerCase() !== `</${tag}>`)
        body.push(lines[j++]!.replace(/\r$/, ''));
      if (j >= lines.length) throw new GatehopError(ErrorCodes.PROFILE_INVALID, `${where}: <${tag}> is never closed`);
      if (INLINE.has(tag)) inline[tag] = `${body.join('\n').trim()}\n`;
      else if (FATAL.has(tag))
        throw new GatehopError(ErrorCodes.PROFILE_INVALID, `${where}: <${tag}> is not supported`);
      else warnings.push(`${where}: inline <${tag}> ignored`);
      i = j;
      continue;
    }
    const [name0, ...args] = tokenize(line);
    const name = name0!.toLowerCase().replace(/^--/, '');
    if (DANGEROUS.has(name)) {
      warnings.push(`${where}: "${name}" dropped (would run code or touch the host)`);
      continue;
    }
    if (FATAL.has(name))
      throw new GatehopError(
        ErrorCodes.PROFILE_INVALID,
        `${where}: "${name}" changes the wire protocol and is not supported`,
      );
    switch (name) {
      case 'remote': {
        if (!args[0]) throw new GatehopError(ErrorCodes.PROFILE_INVALID, `${where}: remote needs a host`);
        remotesRaw.push({
          host: args[0],
          ...(args[1] !== undefined ? { port: portOf(args[1], where) } : {}),
          ...(args[2] !== undefined ? { proto: protoOf(args[2], where) } : {}),
        });
        break;
      }
      case 'proto':
        proto = protoOf(args[0] ?? '', where);
        break;
      case 'port':
      case 'rport':
        port = portOf(args[0] ?? '', where);
        break;
      case 'dev':
        if (!/^tun\d*$/i.test(args[0] ?? ''))
          throw new GatehopError(
            ErrorCodes.PROFILE_INVALID,
            `${where}: only "dev tun" is supported (got "${args[0] ?? ''}")`,
          );
        sawDev = true;
        break;
      case 'cipher':
        cipher = (args[0] ?? '').toUpperCase() || null;
        break;
      case 'data-ciphers':
      case 'ncp-ciphers':
        dataCiphers = (args[0] ?? '')
          .split(':')
          .map((c) => c.toUpperCase())
          .filter(Boolean);
        break;
      case 'data-ciphers-fallback':
        dataCiphersFallback = (args[0] ?? '').toUpperCase() || null;
        break;
      case 'auth':
        auth = (args[0] ?? '').toUpperCase() || null;
        break;
      case 'auth-user-pass':
        if (args.length > 0) warnings.push(`${where}: auth-user-pass file ignored; credentials come from the caller`);
        authUserPass = true;
        break;
      case 'key-direction':
        if (args[0] !== '0' && args[0] !== '1')
          throw new GatehopError(ErrorCodes.PROFILE_INVALID, `${where}: key-direction must be 0 or 1`);
        keyDirection = args[0] === '0' ? 0 : 1;
        break;
      case 'tun-mtu':
        tunMtu = intOf(args[0], where);
        if (tunMtu < 576 || tunMtu > 65535)
          throw new GatehopError(ErrorCodes.PROFILE_INVALID, `${where}: tun-mtu out of range`);
        break;
      case 'ping':
        pingS = intOf(args[0], where);
        break;
      case 'ping-restart':
        pingRestartS = intOf(args[0], where);
        break;
      case 'keepalive':
        pingS = intOf(args[0], where);
        pingRestartS = intOf(args[1], where);
        break;
      case 'reneg-sec':
        renegSec = intOf(args[0], where);
        break;
      case 'verify-x509-name': {
        const type = (args[1] ?? 'subject').toLowerCase();
        if (!args[0] || (type !== 'subject' && type !== 'name' && type !== 'name-prefix')) {
          throw new GatehopError(
            ErrorCodes.PROFILE_INVALID,
            `${where}: verify-x509-name needs a name and a type of subject, name or name-prefix`,
          );
        }
        verifyX509Name = { name: args[0], type };
        break;
      }
      case 'remote-cert-tls':
        if (args[0] === 'server') remoteCertTls = 'server';
        else warnings.push(`${where}: remote-cert-tls ${args[0] ?? ''} ignored`);
        break;
      case 'compress':
      case 'comp-lzo':
        compression = [name, ...args].join(' ');
        break;
      case 'tls-auth':
      case 'tls-crypt':
      case 'ca':
      case 'cert':
      case 'key':
        if (args[0] === '[inline]' || args.length === 0) break;
        warnings.push(`${where}: "${name} ${args[0]}" names a file; only inline <${name}> blocks are used`);
        if (name === 'tls-auth' && (args[1] === '0' || args[1] === '1')) keyDirection = args[1] === '0' ? 0 : 1;
        break;
      default:
        if (!IGNORED.has(name)) warnings.push(`${where}: unknown directive "${name}" ignored`);
    }
  }
  if (!sawDev) warnings.push('no "dev" directive; assuming tun');
  if (remotesRaw.length === 0) throw new GatehopError(ErrorCodes.PROFILE_INVALID, 'profile has no "remote"');
  const remotes = remotesRaw.map((r) => ({ host: r.host, port: r.port ?? port, proto: r.proto ?? proto }));
  for (const r of remotes) {
    if (!isIP(r.host) && !/^[a-z0-9.-]{1,253}$/i.test(r.host))
      throw new GatehopError(ErrorCodes.PROFILE_INVALID, `remote "${r.host}" is not a host`);
  }
  return Object.freeze({
    remotes,
    cipher,
    dataCiphers,
    dataCiphersFallback,
    auth,
    ca: inline['ca'] ?? null,
    cert: inline['cert'] ?? null,
    key: inline['key'] ?? null,
    tlsAuth: inline['tls-auth'] ?? null,
    tlsCrypt: inline['tls-crypt'] ?? null,
    keyDirection,
    authUserPass,
    tunMtu,
    pingS,
    pingRestartS,
    renegSec,
    verifyX509Name,
    remoteCertTls,
    compression,
    warnings,
  });
}
