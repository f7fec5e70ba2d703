import { Decompress } from 'fzstd';
import { RuleParseError } from './rule-error.js';
import { MAX_RULE_SET_ENTRIES, MAX_RULE_SET_NAME_BYTES } from './rule-set-limits.js';

/** What a set may hold once decompressed (a 100,000-name set is ~3 MiB; this bounds a zstd bomb). */
export const MAX_MRS_BYTES = 64 * 1024 * 1024;
/** The largest zstd window taken: mihomo's writer uses a few MiB; a frame asking for more is refused before it allocates. */
const MAX_WINDOW = 64 * 1024 * 1024;

const MAGIC = [0x4d, 0x52, 0x53, 0x01]; // "MRS" and version 1
const BEHAVIOR_BYTE = { domain: 0, ipcidr: 1 } as const;

export type MrsBehavior = keyof typeof BEHAVIOR_BYTE;

/**
 * mihomo's binary rule sets (`format: mrs`, what `mihomo convert-ruleset` and MetaCubeX's
 * meta-rules-dat publish), read from the layout mihomo's code writes (rules/provider
 * mrs_converter.go, component/trie/domain_set_bin.go, component/cidr/ipcidr_set_bin.go):
 *
 *   zstd( "MRS" 0x01 | behaviour byte (0 domain, 1 ipcidr) | count int64 BE | extra length int64 BE,
 *         extra | the set )
 *   domain set: version 1 | leaves: n int64, n × uint64 | label bitmap: n int64, n × uint64 |
 *               labels: n int64, n bytes      (a LOUDS-encoded trie of the reversed names)
 *   ipcidr set: version 1 | n int64 | n × (from 16 bytes, to 16 bytes)   (IPv4 as ::ffff:a.b.c.d)
 *
 * Every length is checked against what is left before anything is allocated for it, and a set's
 * entries and name bytes are counted from its shape (rule-set-limits) before one is built.
 */
export function readMrs(
  bytes: Uint8Array,
  behavior: MrsBehavior,
): { domains: string[] } | { ranges: Array<[Uint8Array, Uint8Array]> } {
  return readMrsPayload(inflate(bytes), behavior);
}

/** What a set may hold (rule-set-limits); the fuzzer sets small ones, so that bombs fit in its inputs. */
export interface MrsLimits {
  entries: number;
  nameBytes: number;
}

const LIMITS: MrsLimits = { entries: MAX_RULE_SET_ENTRIES, nameBytes: MAX_RULE_SET_NAME_BYTES };

/** The decompressed layout (see readMrs); on its own for the fuzzer, which cannot afford zstd per input. */
export function readMrsPayload(
  raw: Uint8Array,
  behavior: MrsBehavior,
  limits: MrsLimits = LIMITS,
): { domains: string[] } | { ranges: Array<[Uint8Array, Uint8Array]> } {
  const r = new Reader(raw);
  const magic = r.bytes(4);
  if (!MAGIC.every((b, i) => magic[i] === b)) throw new RuleParseError('not an mrs rule set (no MRS\\x01 header)');
  const b = r.u8();
  if (b !== BEHAVIOR_BYTE[behavior]) {
    const named = b === 0 ? 'domain' : b === 1 ? 'ipcidr' : b === 2 ? 'classical' : `unknown (${b})`;
    throw new RuleParseError(`the mrs file is a ${named} set, the config says ${behavior}`);
  }
  r.int64(); // the count mihomo shows; the set itself says what it holds
  r.bytes(r.length('extra'));
  if (r.u8() !== 1) throw new RuleParseError('an mrs set version other than 1');
  return behavior === 'domain' ? { domains: domainKeys(r, limits) } : { ranges: cidrRanges(r, limits) };
}

/** The longest key a domain trie may hold: more than any name (253 bytes), less than a bomb's. */
const MAX_KEY_BYTES = 512;

/** The names of a domain set, in mihomo's text forms (`+.` for "names under it"). */
function domainKeys(r: Reader, limits: MrsLimits): string[] {
  const leaves = r.words(r.length('leaves', 8));
  const bitmap = r.words(r.length('label bitmap', 8));
  const labels = r.bytes(r.length('labels'));
  if (!r.done) throw new RuleParseError('bytes after the mrs domain set');
  // Each uint64 as two uint32 halves, low first: bit i is in half i >> 5 (no BigInt on the hot path).
  const bit = (halves: Uint32Array, i: number): boolean =>
    i >> 5 < halves.length && ((halves[i >> 5]! >>> (i & 31)) & 1) === 1;
  // LOUDS: nodes in breadth-first order; for each, a 0 per child (whose label is the next label)
  // and then a 1. Children get the next node ids in order. Node 0 is the root.
  const parent = new Int32Array(labels.length + 1);
  const label = new Uint8Array(labels.length + 1);
  // A node's depth is its key's length: a leaf's key is the path down to it.
  const depth = new Uint16Array(labels.length + 1);
  let next = 1;
  let at = 0;
  const maxBits = bitmap.length * 32;
  for (let node = 0; node < next; node++) {
    for (;;) {
      if (at >= maxBits) throw new RuleParseError('an mrs domain set whose bitmap ends early');
      if (bit(bitmap, at++)) break;
      if (next > labels.length) throw new RuleParseError('an mrs domain set with more children than labels');
      parent[next] = node;
      label[next] = labels[next - 1]!;
      depth[next] = Math.min(depth[node]! + 1, MAX_KEY_BYTES + 1);
      next++;
    }
  }
  // What the keys would cost, from the trie's shape alone: a small trie whose leaves share long
  // paths spells out gigabytes (a few hundred bytes of zstd), so nothing is built before this holds.
  let keys = 0;
  let keyBytes = 0;
  for (let node = 1; node < next; node++) {
    if (!bit(leaves, node)) continue;
    if (depth[node]! > MAX_KEY_BYTES) throw new RuleParseError('an mrs domain key longer than any name');
    keys++;
    keyBytes += depth[node]!;
  }
  if (keys > limits.entries || keyBytes > limits.nameBytes)
    throw new RuleParseError(
      `an mrs domain set of ${keys} names in ${keyBytes} bytes: more than a rule set may hold (${limits.entries} names, ${limits.nameBytes} bytes)`,
    );
  const out: string[] = [];
  const chars: number[] = [];
  for (let node = 1; node < next; node++) {
    if (!bit(leaves, node)) continue;
    chars.length = 0;
    // Walking up from the leaf reads the stored key's bytes from its end.
    for (let n = node; n !== 0; n = parent[n]!) chars.push(label[n]!);
    // The stored key is the name reversed, so walking up reads the name forwards; mihomo reverses by
    // code points before storing UTF-8, so a name with non-ASCII bytes is undone in both steps.
    const key = chars.every((c) => c < 0x80)
      ? String.fromCharCode(...chars)
      : Array.from(Buffer.from(chars.reverse()).toString('utf8')).reverse().join('');
    // In the binary set `+.` stands alone for "names under it" (mihomo's `.` form); the name itself is its own key.
    out.push(key.startsWith('+.') ? key.slice(1) : key);
  }
  return out;
}

function cidrRanges(r: Reader, limits: MrsLimits): Array<[Uint8Array, Uint8Array]> {
  const n = r.length('ranges', 32);
  if (n > limits.entries)
    throw new RuleParseError(`an mrs ipcidr set of ${n} ranges: more than a rule set may hold (${limits.entries})`);
  const out: Array<[Uint8Array, Uint8Array]> = [];
  for (let i = 0; i < n; i++) out.push([r.bytes(16), r.bytes(16)]);
  if (!r.done) throw new RuleParseError('bytes after the mrs ipcidr set');
  return out;
}

/** The zstd stream, decompressed up to MAX_MRS_BYTES; a frame's window is checked before it allocates. */
function inflate(bytes: Uint8Array): Uint8Array {
  checkFrameHeader(bytes);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const d = new Decompress((chunk) => {
    size += chunk.length;
    if (size > MAX_MRS_BYTES) throw new RuleParseError(`an mrs set larger than ${MAX_MRS_BYTES} bytes unpacked`);
    chunks.push(chunk);
  });
  try {
    d.push(bytes, true);
  } catch (err) {
    if (err instanceof RuleParseError) throw err;
    throw new RuleParseError(`not a zstd stream: ${(err as Error).message}`);
  }
  return Buffer.concat(chunks);
}

function checkFrameHeader(b: Uint8Array): void {
  if (b.length < 6 || b[0] !== 0x28 || b[1] !== 0xb5 || b[2] !== 0x2f || b[3] !== 0xfd)
    throw new RuleParseError('not an mrs rule set (not zstd-compressed)');
  const fhd = b[4]!;
  if ((fhd & 0x20) !== 0) return; // single segment: the window is the content size, bounded by the output cap
  const wd = b[5]!;
  const base = 2 ** (10 + (wd >> 3));
  if (base + (base / 8) * (wd & 7) > MAX_WINDOW)
    throw new RuleParseError('an mrs zstd frame with a window over 64 MiB');
}

class Reader {
  #at = 0;
  constructor(private readonly b: Uint8Array) {}

  get done(): boolean {
    return this.#at === this.b.length;
  }

  bytes(n: number): Uint8Array {
    if (n > this.b.length - this.#at) throw new RuleParseError('an mrs set cut short');
    const out = this.b.subarray(this.#at, this.#at + n);
    this.#at += n;
    return out;
  }

  u8(): number {
    return this.bytes(1)[0]!;
  }

  int64(): bigint {
    return Buffer.from(this.bytes(8)).readBigInt64BE();
  }

  /** An int64 count of items of `size` bytes, refused unless that many bytes are left. */
  length(what: string, size = 1): number {
    const n = this.int64();
    if (n < 0n || n * BigInt(size) > BigInt(this.b.length - this.#at))
      throw new RuleParseError(`an mrs ${what} length (${n}) past the end of the set`);
    return Number(n);
  }

  /** `n` big-endian uint64 words as 2n uint32 halves, low half first. */
  words(n: number): Uint32Array {
    const raw = this.bytes(n * 8);
    const out = new Uint32Array(n * 2);
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    for (let i = 0; i < n; i++) {
      out[2 * i + 1] = view.getUint32(i * 8, false);
      out[2 * i] = view.getUint32(i * 8 + 4, false);
    }
    return out;
  }
}
