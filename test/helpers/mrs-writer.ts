import { execFileSync } from 'node:child_process';

/**
 * mihomo's mrs rule sets, written as mihomo's own writer lays them out (rules/provider
 * mrs_converter.go, component/trie/domain_set.go NewDomainSet + domain_set_bin.go WriteBin,
 * component/cidr/ipcidr_set_bin.go) and compressed by zstd's own CLI: fixtures for the reader that
 * do not share its code. Test-only.
 */
export function writeMrsDomains(patterns: string[]): Buffer {
  // The domain trie's Foreach: `+.x` is stored as `x` and `.x`, and `.x` comes back out as `+.x`.
  const keys = new Set<string>();
  for (const p of patterns) {
    if (p.startsWith('+.')) {
      keys.add(p.slice(2));
      keys.add(p);
    } else if (p.startsWith('.')) keys.add(`+${p}`);
    else keys.add(p);
  }
  const sorted = [...keys].map((k) => Array.from(k).reverse().join('')).map((k) => Buffer.from(k, 'utf8'));
  sorted.sort(Buffer.compare);
  // NewDomainSet: a breadth-first walk over the sorted keys' shared prefixes (LOUDS).
  const leaves: number[] = [];
  const bitmap: number[] = [];
  const labels: number[] = [];
  const queue: Array<{ s: number; e: number; col: number }> = [{ s: 0, e: sorted.length, col: 0 }];
  for (let i = 0; i < queue.length; i++) {
    const elt = { ...queue[i]! };
    if (elt.col === sorted[elt.s]!.length) {
      elt.s++;
      leaves.push(i);
    }
    for (let j = elt.s; j < elt.e;) {
      const from = j;
      while (j < elt.e && sorted[j]![elt.col] === sorted[from]![elt.col]) j++;
      queue.push({ s: from, e: j, col: elt.col + 1 });
      labels.push(sorted[from]![elt.col]!);
      bitmap.push(0);
    }
    bitmap.push(1);
  }
  const ones = bitmap.flatMap((b, i) => (b ? [i] : []));
  const body = Buffer.concat([Buffer.from([1]), words(leaves), words(ones), int64(labels.length), Buffer.from(labels)]);
  return frame(0, patterns.length, body);
}

export function writeMrsRanges(ranges: Array<[string, string]>): Buffer {
  const parts = [Buffer.from([1]), int64(ranges.length)];
  for (const [from, to] of ranges) parts.push(addr16(from), addr16(to));
  return frame(1, ranges.length, Buffer.concat(parts));
}

function frame(behavior: number, count: number, body: Buffer): Buffer {
  const raw = Buffer.concat([Buffer.from('MRS\x01', 'latin1'), Buffer.from([behavior]), int64(count), int64(0), body]);
  return execFileSync('zstd', ['-q', '-c', '-19'], { input: raw });
}

function int64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
}

/** A bitmap with the given bits set, as mihomo's []uint64: a count, then each word big-endian. */
function words(bits: number[]): Buffer {
  const n = bits.length ? Math.floor(bits.reduce((a, b) => Math.max(a, b), 0) / 64) + 1 : 0;
  const w = new BigUint64Array(n);
  for (const i of bits) w[i >> 6] = w[i >> 6]! | (1n << BigInt(i & 63));
  const out = Buffer.alloc(8 * n);
  w.forEach((x, i) => out.writeBigUInt64BE(x, i * 8));
  return Buffer.concat([int64(n), out]);
}

function addr16(ip: string): Buffer {
  const b = Buffer.alloc(16);
  if (ip.includes('.')) {
    b[10] = 0xff;
    b[11] = 0xff;
    ip.split('.').forEach((o, i) => (b[12 + i] = Number(o)));
    return b;
  }
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  groups.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
  return b;
}

/**
 * A decompressed mrs domain set (the layout readMrs reads) whose trie is `chains` paths of `depth`
 * labels from the root, every node a leaf: a bomb, whose keys spell out chains × depth²/2 bytes
 * from chains × depth labels. Written straight as LOUDS (no names needed), for the size checks.
 */
export function mrsChainBombPayload(chains: number, depth: number): Buffer {
  const nodes = chains * depth;
  const bits: number[] = [];
  // Breadth first: the root has `chains` children; every node above the last level has one child.
  for (let i = 0; i < chains; i++) bits.push(0);
  bits.push(1);
  for (let level = 1; level <= depth; level++)
    for (let i = 0; i < chains; i++) {
      if (level < depth) bits.push(0);
      bits.push(1);
    }
  const leafBits = Array.from({ length: nodes + 1 }, (_, i) => (i === 0 ? 0 : 1));
  const words = (b: number[]): Buffer => {
    const n = Math.ceil(b.length / 64);
    const out = Buffer.alloc(8 + n * 8);
    out.writeBigInt64BE(BigInt(n), 0);
    // Bit k of word w is position 64w + k, low half first (as the reader takes it); stored big-endian.
    for (let w = 0; w < n; w++)
      for (const half of [0, 1]) {
        let v = 0;
        for (let k = 0; k < 32; k++) if (b[w * 64 + half * 32 + k]) v |= 1 << k;
        out.writeUInt32BE(v >>> 0, 8 + w * 8 + (half === 0 ? 4 : 0));
      }
    return out;
  };
  const labels = Buffer.alloc(8 + nodes, 0x61);
  labels.writeBigInt64BE(BigInt(nodes), 0);
  const head = Buffer.alloc(4 + 1 + 8 + 8 + 1);
  head.write('MRS\x01', 0, 'latin1');
  head[4] = 0; // domain
  head.writeBigInt64BE(BigInt(nodes), 5);
  head.writeBigInt64BE(0n, 13); // no extra
  head[21] = 1; // set version
  return Buffer.concat([head, words(leafBits), words(bits), labels]);
}
