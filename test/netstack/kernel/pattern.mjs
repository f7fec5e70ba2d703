import { createHash } from 'node:crypto';

/** Deterministic bytes: SHA-256 in counter mode, yielded in 64 KiB chunks. */
export function* pattern(seed, total) {
  let counter = 0;
  let left = total;
  while (left > 0) {
    const size = Math.min(left, 64 * 1024);
    const chunk = Buffer.allocUnsafe(size);
    for (let off = 0; off < size; off += 32) {
      const block = createHash('sha256').update(`${seed}:${counter++}`).digest();
      block.copy(chunk, off, 0, Math.min(32, size - off));
    }
    left -= size;
    yield chunk;
  }
}

export function patternSha256(seed, total) {
  const h = createHash('sha256');
  for (const c of pattern(seed, total)) h.update(c);
  return h.digest('hex');
}
