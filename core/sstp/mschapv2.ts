/**
 * MS-CHAPv2 (RFC 2759) as the client computes it, and the MPPE master keys it yields (RFC 3079),
 * which SSTP's crypto binding is keyed with. DES single-block encryption is 3DES-EDE with the same
 * key three times (one block, zero IV): single DES is in OpenSSL 3's legacy provider only.
 */
import { createCipheriv, createHash, timingSafeEqual } from 'node:crypto';
import { md4 } from './md4.js';

const sha1 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha1');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** NtPasswordHash: MD4 of the password in UTF-16LE. */
export function ntPasswordHash(password: string): Buffer {
  return md4(Buffer.from(password, 'utf16le'));
}

/** ChallengeHash: the first 8 bytes of SHA1(PeerChallenge | AuthenticatorChallenge | UserName). */
export function challengeHash(peerChallenge: Uint8Array, authChallenge: Uint8Array, username: string): Buffer {
  return sha1(peerChallenge, authChallenge, Buffer.from(username, 'utf8')).subarray(0, 8);
}

/** A 7-byte DES key spread over 8 bytes, each with its low (parity) bit set for odd parity. */
function desKey(key7: Uint8Array): Buffer {
  const k = Buffer.alloc(8);
  let bits = 0n;
  for (const b of key7) bits = (bits << 8n) | BigInt(b);
  for (let i = 0; i < 8; i++) {
    const seven = Number((bits >> BigInt(49 - 7 * i)) & 0x7fn);
    const byte = seven << 1;
    let ones = 0;
    for (let v = byte; v; v >>= 1) ones += v & 1;
    k[i] = byte | (ones % 2 === 0 ? 1 : 0);
  }
  return k;
}

function desEncryptBlock(block: Uint8Array, key7: Uint8Array): Buffer {
  const k = desKey(key7);
  const c = createCipheriv('des-ede3-cbc', Buffer.concat([k, k, k]), Buffer.alloc(8));
  c.setAutoPadding(false);
  return Buffer.concat([c.update(block), c.final()]);
}

/** ChallengeResponse: the 8-byte challenge DES-encrypted with the three 7-byte thirds of the zero-padded hash. */
export function challengeResponse(challenge: Uint8Array, passwordHash: Uint8Array): Buffer {
  const z = Buffer.alloc(21);
  z.set(passwordHash);
  return Buffer.concat([
    desEncryptBlock(challenge, z.subarray(0, 7)),
    desEncryptBlock(challenge, z.subarray(7, 14)),
    desEncryptBlock(challenge, z.subarray(14, 21)),
  ]);
}

export function generateNtResponse(
  authChallenge: Uint8Array,
  peerChallenge: Uint8Array,
  username: string,
  password: string,
): Buffer {
  return challengeResponse(challengeHash(peerChallenge, authChallenge, username), ntPasswordHash(password));
}

const AUTH_MAGIC1 = Buffer.from('Magic server to client signing constant', 'ascii');
const AUTH_MAGIC2 = Buffer.from('Pad to make it do more than one iteration', 'ascii');

/** The 20 bytes the server's Success message carries as "S=<40 hex digits>". */
export function authenticatorResponse(
  password: string,
  ntResponse: Uint8Array,
  peerChallenge: Uint8Array,
  authChallenge: Uint8Array,
  username: string,
): Buffer {
  const hashHash = md4(ntPasswordHash(password));
  const digest = sha1(hashHash, ntResponse, AUTH_MAGIC1);
  return sha1(digest, challengeHash(peerChallenge, authChallenge, username), AUTH_MAGIC2);
}

/** Whether a Success message's "S=…" proves the server knew the password (constant time). */
export function verifyAuthenticatorResponse(message: string, expected: Uint8Array): boolean {
  const m = /S=([0-9A-Fa-f]{40})/.exec(message);
  if (!m) return false;
  return timingSafeEqual(Buffer.from(m[1]!, 'hex'), expected);
}

const MPPE_MAGIC1 = Buffer.from('This is the MPPE Master Key', 'ascii');
const MPPE_MAGIC2 = Buffer.from(
  'On the client side, this is the send key; on the server side, it is the receive key.',
  'ascii',
);
const MPPE_MAGIC3 = Buffer.from(
  'On the client side, this is the receive key; on the server side, it is the send key.',
  'ascii',
);
const SHS_PAD1 = Buffer.alloc(40, 0x00);
const SHS_PAD2 = Buffer.alloc(40, 0xf2);

/** GetMasterKey (RFC 3079 §3.4). */
export function mppeMasterKey(password: string, ntResponse: Uint8Array): Buffer {
  return sha1(md4(ntPasswordHash(password)), ntResponse, MPPE_MAGIC1).subarray(0, 16);
}

/** GetAsymmetricStartKey (RFC 3079 §3.4), 128-bit keys. */
export function mppeStartKey(masterKey: Uint8Array, isSend: boolean, isServer: boolean): Buffer {
  const magic = isSend === isServer ? MPPE_MAGIC3 : MPPE_MAGIC2;
  return sha1(masterKey, SHS_PAD1, magic, SHS_PAD2).subarray(0, 16);
}

/** The client's MPPE keys after a successful MS-CHAPv2 exchange: what SSTP's HLAK is made of. */
export function clientMppeKeys(password: string, ntResponse: Uint8Array): { sendKey: Buffer; recvKey: Buffer } {
  const mk = mppeMasterKey(password, ntResponse);
  return { sendKey: mppeStartKey(mk, true, false), recvKey: mppeStartKey(mk, false, false) };
}
