import { createCipheriv, createHmac, timingSafeEqual } from 'node:crypto';
import { ErrorCodes, GatehopError } from '../common/index.js';
import type { OvpnProfile } from './profile.js';

/** Wraps control packets for stock OpenVPN servers (notes §2.6); VPN Gate/SoftEther uses neither. */
export interface ControlWrapper {
  wrap(plain: Buffer): Buffer;
  /** The plain packet, or null when authentication fails (the packet is dropped). */
  unwrap(wire: Buffer): Buffer | null;
}

/** The 256 bytes of an "OpenVPN Static key V1" block. */
export function parseStaticKey(text: string): Buffer {
  const m = /-----BEGIN OpenVPN Static key V1-----([\s\S]*?)-----END OpenVPN Static key V1-----/.exec(text);
  const hex = (m?.[1] ?? '').replace(/\s+/g, '');
  if (!/^[0-9a-fA-F]{512}$/.test(hex))
    throw new GatehopError(ErrorCodes.PROFILE_INVALID, 'static key is not a 2048-bit OpenVPN Static key V1');
  return Buffer.from(hex, 'hex');
}

const DIGEST_LEN: Record<string, number> = { sha1: 20, sha256: 32, sha512: 64, md5: 16 };

function header(replayId: number): Buffer {
  const h = Buffer.allocUnsafe(8);
  h.writeUInt32BE(replayId >>> 0, 0);
  h.writeUInt32BE(Math.floor(Date.now() / 1000) >>> 0, 4);
  return h;
}

/**
 * tls-auth: [byte0][sid 8][HMAC][replay-id u32][time u32][rest]; the HMAC covers
 * replay-id‖time‖byte0‖sid‖rest. key-direction 1 (clients) sends with keys[1], checks keys[0].
 */
export function tlsAuthWrapper(staticKey: Buffer, keyDirection: 0 | 1 | null, auth: string | null): ControlWrapper {
  const digest = (auth ?? 'SHA1').toLowerCase();
  const hlen = DIGEST_LEN[digest];
  if (!hlen) throw new GatehopError(ErrorCodes.PROFILE_INVALID, `tls-auth with digest ${auth} is not supported`);
  const keyOf = (i: number): Buffer => staticKey.subarray(i * 128 + 64, i * 128 + 64 + hlen);
  const sendKey = keyOf(keyDirection === 1 ? 1 : 0);
  const recvKey = keyOf(keyDirection === 1 ? 0 : keyDirection === 0 ? 1 : 0);
  let replayId = 0;
  return {
    wrap(plain) {
      const h = header(++replayId);
      const mac = createHmac(digest, sendKey).update(h).update(plain.subarray(0, 9)).update(plain.subarray(9)).digest();
      return Buffer.concat([plain.subarray(0, 9), mac, h, plain.subarray(9)]);
    },
    unwrap(wire) {
      if (wire.length < 9 + hlen + 8 + 1) return null;
      const mac = wire.subarray(9, 9 + hlen);
      const h = wire.subarray(9 + hlen, 9 + hlen + 8);
      const rest = wire.subarray(9 + hlen + 8);
      const want = createHmac(digest, recvKey).update(h).update(wire.subarray(0, 9)).update(rest).digest();
      if (!timingSafeEqual(mac, want)) return null;
      return Buffer.concat([wire.subarray(0, 9), rest]);
    },
  };
}

/**
 * tls-crypt: [byte0][sid 8][replay-id u32][time u32][tag 32][AES-256-CTR(rest)], tag =
 * HMAC-SHA256(Ka, byte0‖sid‖replay-id‖time‖rest), IV = tag[0..15]. Clients send with keys[1].
 */
export function tlsCryptWrapper(staticKey: Buffer): ControlWrapper {
  const keys = (i: number): { ke: Buffer; ka: Buffer } => ({
    ke: staticKey.subarray(i * 128, i * 128 + 32),
    ka: staticKey.subarray(i * 128 + 64, i * 128 + 96),
  });
  const send = keys(1);
  const recv = keys(0);
  let replayId = 0;
  return {
    wrap(plain) {
      const h = header(++replayId);
      const head = plain.subarray(0, 9);
      const rest = plain.subarray(9);
      const tag = createHmac('sha256', send.ka).update(head).update(h).update(rest).digest();
      const c = createCipheriv('aes-256-ctr', send.ke, tag.subarray(0, 16));
      return Buffer.concat([head, h, tag, c.update(rest), c.final()]);
    },
    unwrap(wire) {
      if (wire.length < 9 + 8 + 32 + 1) return null;
      const head = wire.subarray(0, 9);
      const h = wire.subarray(9, 17);
      const tag = wire.subarray(17, 49);
      const d = createCipheriv('aes-256-ctr', recv.ke, tag.subarray(0, 16));
      const rest = Buffer.concat([d.update(wire.subarray(49)), d.final()]);
      const want = createHmac('sha256', recv.ka).update(head).update(h).update(rest).digest();
      if (!timingSafeEqual(tag, want)) return null;
      return Buffer.concat([head, rest]);
    },
  };
}

/** The profile's control-channel wrapping (tls-crypt, else tls-auth, else none), made anew per attempt. */
export function controlWrapperFactory(p: OvpnProfile): (() => ControlWrapper) | null {
  if (p.tlsCrypt) {
    const key = parseStaticKey(p.tlsCrypt);
    return () => tlsCryptWrapper(key);
  }
  if (p.tlsAuth) {
    const key = parseStaticKey(p.tlsAuth);
    return () => tlsAuthWrapper(key, p.keyDirection, p.auth);
  }
  return null;
}
