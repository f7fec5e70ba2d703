import { parseAddress } from './cidr-set.js';

/**
 * mihomo's IP-SUFFIX: `8.8.8.8/24` matches the addresses whose **last** 24 bits are those of
 * 8.8.8.8 (the host part, where IP-CIDR compares the network part); v4 patterns match only v4
 * addresses, v6 only v6. Null when the payload is not ADDRESS/BITS.
 */
export function ipSuffixMatcher(payload: string): ((ip: string) => boolean) | null {
  const [addr, bitsText, extra] = payload.trim().split('/');
  if (extra !== undefined || !addr || bitsText === undefined || !/^\d{1,3}$/.test(bitsText)) return null;
  const want = parseAddress(addr, false);
  const bits = Number(bitsText);
  if (!want || bits > (want.v === 4 ? 32 : 128)) return null;
  const low = lowBits(want, bits);
  return (ip) => {
    const a = parseAddress(ip, false);
    return a !== null && a.v === want.v && lowBits(a, bits).every((w, i) => w === low[i]);
  };
}

/** The last `bits` bits of an address, as 32-bit words (v4: one word). */
function lowBits(a: NonNullable<ReturnType<typeof parseAddress>>, bits: number): number[] {
  const words = a.v === 4 ? [a.value >>> 0] : [...a.words];
  let left = bits;
  for (let i = words.length - 1; i >= 0; i--) {
    const keep = Math.min(32, Math.max(0, left));
    words[i] = keep === 32 ? words[i]! : (words[i]! & (2 ** keep - 1)) >>> 0;
    left -= 32;
  }
  return words;
}
