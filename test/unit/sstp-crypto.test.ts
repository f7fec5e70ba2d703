/**
 * The cryptography of core/sstp against published values: MD4 (RFC 1320 appendix A.5),
 * MS-CHAPv2 (RFC 2759 section 9.2), the MPPE keys it yields (RFC 3079 section 3.5.3), and SSTP's
 * crypto binding ([MS-SSTP] 3.2.5.2) against a Windows client's Call Connected, whose Compound
 * MAC the spec's derivation must reproduce.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  authenticatorResponse,
  certHashField,
  challengeHash,
  clientMppeKeys,
  compoundMac,
  generateNtResponse,
  hlakOf,
  md4,
  mppeMasterKey,
  mppeStartKey,
  ntPasswordHash,
  pickBindingHash,
  verifyAuthenticatorResponse,
} from '../../core/sstp/index.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('MD4 (RFC 1320)', () => {
  it.each([
    ['', '31d6cfe0d16ae931b73c59d7e0c089c0'],
    ['a', 'bde52cb31de33e46245e05fbdbd6fb24'],
    ['abc', 'a448017aaf21d8525fc10ae87aa6729d'],
    ['message digest', 'd9130a8164549fe818874806e1c7014b'],
    ['abcdefghijklmnopqrstuvwxyz', 'd79e1c308aa5bbcdeea8ed63df412da9'],
    ['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', '043f8582f241db351ce627e153e7f0e4'],
    ['1234567890'.repeat(8), 'e33b4ddc9c38f2199c3e7b164fcc0536'],
  ])('md4(%j)', (input, digest) => {
    expect(md4(Buffer.from(input)).toString('hex')).toBe(digest);
  });

  it('pads correctly at every length around a block boundary', () => {
    // 55, 56 and 64 bytes take one, two and two blocks: each must differ from its neighbours.
    const seen = new Set([54, 55, 56, 57, 63, 64, 65].map((n) => md4(Buffer.alloc(n, 0x61)).toString('hex')));
    expect(seen.size).toBe(7);
  });
});

describe('MS-CHAPv2 (RFC 2759 9.2)', () => {
  const username = 'User';
  const password = 'clientPass';
  const authChallenge = hex('5B5D7C7D7B3F2F3E3C2C602132262628');
  const peerChallenge = hex('21402324255E262A28295F2B3A337C7E');

  it('computes the password hash, challenge, NT-Response and authenticator response', () => {
    expect(ntPasswordHash(password).toString('hex')).toBe('44ebba8d5312b8d611474411f56989ae');
    expect(md4(ntPasswordHash(password)).toString('hex')).toBe('41c00c584bd2d91c4017a2a12fa59f3f');
    expect(challengeHash(peerChallenge, authChallenge, username).toString('hex')).toBe('d02e4386bce91226');
    const nt = generateNtResponse(authChallenge, peerChallenge, username, password);
    expect(nt.toString('hex')).toBe('82309ecd8d708b5ea08faa3981cd83544233114a3d85d6df');
    const auth = authenticatorResponse(password, nt, peerChallenge, authChallenge, username);
    expect(auth.toString('hex').toUpperCase()).toBe('407A5589115FD0D6209F510FE9C04566932CDA56');
  });

  it("accepts the server's S= only when it matches", () => {
    const nt = generateNtResponse(authChallenge, peerChallenge, username, password);
    const expected = authenticatorResponse(password, nt, peerChallenge, authChallenge, username);
    expect(verifyAuthenticatorResponse('S=407A5589115FD0D6209F510FE9C04566932CDA56 M=Welcome', expected)).toBe(true);
    expect(verifyAuthenticatorResponse('S=407a5589115fd0d6209f510fe9c04566932cda56', expected)).toBe(true);
    expect(verifyAuthenticatorResponse('S=507A5589115FD0D6209F510FE9C04566932CDA56', expected)).toBe(false);
    expect(verifyAuthenticatorResponse('M=no proof at all', expected)).toBe(false);
  });

  it('derives the MPPE master key and 128-bit start keys (RFC 3079 3.5.3)', () => {
    const nt = hex('82309ECD8D708B5EA08FAA3981CD83544233114A3D85D6DF');
    const mk = mppeMasterKey(password, nt);
    expect(mk.toString('hex')).toBe('fdece3717a8c838cb388e527ae3cdd31');
    // The RFC's SendStartKey128 is the server's send key, which is the client's receive key.
    expect(mppeStartKey(mk, true, true).toString('hex')).toBe('8b7cdc149b993a1ba118cb153f56dccb');
    const { sendKey, recvKey } = clientMppeKeys(password, nt);
    expect(recvKey.toString('hex')).toBe('8b7cdc149b993a1ba118cb153f56dccb');
    expect(sendKey.equals(mppeStartKey(mk, false, true))).toBe(true); // client send = server receive
    expect(sendKey.equals(recvKey)).toBe(false);
  });
});

describe('SSTP crypto binding ([MS-SSTP] 3.2.5.2)', () => {
  // A Windows client's Call Connected (SHA-256), its MPPE keys, and the Compound MAC it sent.
  const nonce = hex('412B489AEBD7ECC7D08966F26BE7CD72B231A0E9210D7C91B308862B0344C435');
  const certHash = hex('7993EF314C493DACE9F02D60E7E61C84B6690AAFE9D7AEEA92CBBE8AD599422D');
  const sendKey = hex('2A1BB40D55AB0F5EF32F06F2B3CC73C4');
  const recvKey = hex('8FD3FAC41D7A1315A19228D9024CA164');
  const zeroMac = Buffer.concat([hex('10010070 00040001 00030068 00000002'), nonce, certHash, Buffer.alloc(32)]);

  it('reproduces the Compound MAC of a real Call Connected from the HLAK (send key, then receive key)', () => {
    const mac = compoundMac(hlakOf({ sendKey, recvKey }), zeroMac, 'sha256');
    expect(mac.toString('hex')).toBe('52a68efd8cffbf52770b8f0fe8ec73716583af6d611eb6d179b3b20840985449');
    // The other order is wrong: the client's send key comes first.
    expect(compoundMac(hlakOf({ sendKey: recvKey, recvKey: sendKey }), zeroMac, 'sha256').equals(mac)).toBe(false);
  });

  it('hashes the certificate with the chosen hash, padded to 32 bytes, and prefers SHA-256', () => {
    const der = Buffer.from('a certificate');
    expect(certHashField(der, 'sha256').equals(createHash('sha256').update(der).digest())).toBe(true);
    const sha1 = certHashField(der, 'sha1');
    expect(sha1.subarray(0, 20).equals(createHash('sha1').update(der).digest())).toBe(true);
    expect(sha1.subarray(20).equals(Buffer.alloc(12))).toBe(true);
    expect(pickBindingHash(0x03)).toBe('sha256');
    expect(pickBindingHash(0x01)).toBe('sha1');
    expect(pickBindingHash(0x04)).toBeNull();
    expect(hlakOf(null).equals(Buffer.alloc(32))).toBe(true); // PAP: no keys
  });
});
