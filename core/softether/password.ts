import { sha0 } from './sha0.js';

/**
 * SoftEther's stored password hash (src/Cedar/Account.c `HashPassword`): SHA-0 of the password
 * followed by the user name in upper case (ASCII, as its StrUpper does).
 */
export function hashPassword(username: string, password: string): Buffer {
  return sha0(Buffer.concat([Buffer.from(password, 'utf8'), Buffer.from(asciiUpper(username), 'utf8')]));
}

/**
 * The login's proof (src/Cedar/Sam.c `SecurePassword`): SHA-0 of the 20-byte hash followed by the
 * server's 20-byte Hello random, so the password itself never crosses the wire.
 */
export function securePassword(hashed: Buffer, random: Buffer): Buffer {
  if (hashed.length !== 20 || random.length !== 20) throw new RangeError('the hash and the random are 20 bytes each');
  return sha0(Buffer.concat([hashed, random]));
}

function asciiUpper(s: string): string {
  return s.replace(/[a-z]/g, (c) => c.toUpperCase());
}
