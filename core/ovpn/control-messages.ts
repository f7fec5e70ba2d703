import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';

/** Randoms we keep from our key-method message until the keys are derived. */
export interface ClientKeySource {
  preMaster: Buffer;
  random1: Buffer;
  random2: Buffer;
}

function str(s: string): Buffer {
  if (s === '') return Buffer.from([0, 0]);
  const body = Buffer.from(`${s}\0`, 'utf8');
  const len = Buffer.allocUnsafe(2);
  len.writeUInt16BE(body.length);
  return Buffer.concat([len, body]);
}

/** The options ("OCC") string (notes §5.1). */
export function optionsString(p: {
  proto: 'tcp' | 'udp';
  cipher: string;
  auth: string | null;
  aead: boolean;
  keyBits: number;
}): string {
  const linkMtu = p.aead
    ? 1500 + 1 + 4 + 16 + (p.proto === 'tcp' ? 2 : 0)
    : 1500 + 4 + 1 + 16 + 16 + 20 + (p.proto === 'tcp' ? 2 : 0);
  const auth = p.aead ? '[null-digest]' : (p.auth ?? 'SHA1');
  return `V4,dev-type tun,link-mtu ${linkMtu},tun-mtu 1500,proto ${p.proto === 'tcp' ? 'TCPv4_CLIENT' : 'UDPv4'},cipher ${p.cipher},auth ${auth},keysize ${p.keyBits},key-method 2,tls-client`;
}

/** key-method 2 client message (notes §4.1): one TLS record. */
export function clientKeyMethod2(p: { options: string; username: string; password: string; peerInfo: string }): {
  message: Buffer;
  keys: ClientKeySource;
} {
  const keys = { preMaster: randomBytes(48), random1: randomBytes(32), random2: randomBytes(32) };
  const message = Buffer.concat([
    Buffer.from([0, 0, 0, 0, 2]),
    keys.preMaster,
    keys.random1,
    keys.random2,
    str(p.options),
    // SoftEther needs the user and password fields present even when empty.
    str(p.username),
    str(p.password),
    str(p.peerInfo),
  ]);
  return { message, keys };
}

export interface ServerKeyMethod2 {
  random1: Buffer;
  random2: Buffer;
  options: string;
}

function readStr(b: Buffer, o: number): { value: string; next: number } | null {
  if (b.length < o + 2) return null;
  const n = b.readUInt16BE(o);
  if (b.length < o + 2 + n) return null;
  return { value: b.toString('utf8', o + 2, o + 2 + n).replace(/\0+$/, ''), next: o + 2 + n };
}

/** The server's key-method 2 message (no pre-master): null until a whole one is there, or malformed. */
export function parseServerKeyMethod2(b: Buffer): ServerKeyMethod2 | null {
  if (b.length < 5 + 64 + 2 || b.readUInt32BE(0) !== 0 || (b[4]! & 0x0f) !== 2) return null;
  const options = readStr(b, 69);
  if (!options) return null;
  return { random1: Buffer.from(b.subarray(5, 37)), random2: Buffer.from(b.subarray(37, 69)), options: options.value };
}

export function optionValue(options: string, key: string): string | null {
  for (const token of options.split(',')) {
    const sp = token.indexOf(' ');
    if (sp > 0 && token.slice(0, sp).toLowerCase() === key) return token.slice(sp + 1).trim();
  }
  return null;
}

/** What the server pushed that a user-space client acts on. */
export interface PushedConfig {
  address: string;
  netmask: string;
  gateway: string | null;
  dns: string[];
  pingS: number | null;
  pingRestartS: number | null;
  cipher: string | null;
  peerId: number | null;
  tlsEkm: boolean;
  /** The server takes an EXIT control message at shutdown (`protocol-flags cc-exit`). */
  ccExit: boolean;
  /** A pushed `comp-lzo …` / `compress …` (data payloads are framed, notes §6.6). */
  compression: string | null;
  topology: string | null;
  tunMtu: number | null;
}

const MAX_OPTIONS = 256;

/** Parses the option list of a PUSH_REPLY (without the "PUSH_REPLY," prefix); ignores unknown options. */
export function parsePushOptions(
  text: string,
  into: Partial<PushedConfig> & { dns?: string[] } = {},
): Partial<PushedConfig> & { dns: string[]; continuation: number | null } {
  const out = { ...into, dns: [...(into.dns ?? [])], continuation: null as number | null };
  let peer: string | null = null;
  for (const opt of text.split(',').slice(0, MAX_OPTIONS)) {
    const [name, ...a] = opt.trim().split(/\s+/);
    switch (name) {
      case 'ifconfig':
        if (isIP(a[0] ?? '') === 4) {
          out.address = a[0]!;
          peer = a[1] ?? null;
        }
        break;
      case 'comp-lzo':
      case 'compress':
        out.compression = [name, ...a].join(' ');
        break;
      case 'topology':
        out.topology = a[0] ?? null;
        break;
      case 'route-gateway':
        if (isIP(a[0] ?? '') === 4) out.gateway = a[0]!;
        break;
      case 'dhcp-option':
        if (a[0] === 'DNS' && isIP(a[1] ?? '') === 4 && out.dns.length < 4) out.dns.push(a[1]!);
        break;
      case 'ping':
        out.pingS = Math.min(3600, Number(a[0]) || 0) || null;
        break;
      case 'ping-restart':
        out.pingRestartS = Math.min(3600, Number(a[0]) || 0) || null;
        break;
      case 'cipher':
        out.cipher = (a[0] ?? '').toUpperCase() || null;
        break;
      case 'peer-id': {
        const n = Number(a[0]);
        if (Number.isInteger(n) && n >= 0 && n < 0xffffff) out.peerId = n;
        break;
      }
      case 'key-derivation':
        if (a[0] === 'tls-ekm') out.tlsEkm = true;
        break;
      case 'protocol-flags':
        if (a.includes('tls-ekm')) out.tlsEkm = true;
        if (a.includes('cc-exit')) out.ccExit = true;
        break;
      case 'tun-mtu': {
        const n = Number(a[0]);
        if (n >= 576 && n <= 65535) out.tunMtu = n;
        break;
      }
      case 'push-continuation':
        out.continuation = Number(a[0]) || null;
        break;
    }
  }
  if (peer && isIP(peer) === 4) {
    // topology subnet: the second ifconfig argument is a netmask; net30/p2p: the peer's address.
    if (out.topology === 'subnet' || peer.startsWith('255.')) out.netmask = peer;
    else {
      out.netmask = '255.255.255.252';
      out.gateway ??= peer;
    }
  }
  return out;
}
