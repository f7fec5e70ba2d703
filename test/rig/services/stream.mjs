// The rig's seeded byte stream: AES-128-CTR of zeros under a fixed key, so any process can make
// the same bytes (and their SHA-256) fast and without storing them.
import { createCipheriv, createHash } from 'node:crypto';

const KEY = createHash('sha256').update('gatehop-rig').digest().subarray(0, 16);
const ZEROS = Buffer.alloc(256 * 1024);

export function* seededStream(total) {
  const cipher = createCipheriv('aes-128-ctr', KEY, Buffer.alloc(16));
  let left = total;
  while (left > 0) {
    const n = Math.min(left, ZEROS.length);
    left -= n;
    yield cipher.update(ZEROS.subarray(0, n));
  }
}

export function seededSha256(total) {
  const h = createHash('sha256');
  for (const c of seededStream(total)) h.update(c);
  return h.digest('hex');
}
