/**
 * Inputs for the fuzz targets: random bytes, and valid seeds broken the ways hostile or broken
 * peers break them (flipped bits, bytes set to boundary values, cuts, splices, repeats, lying
 * lengths). Without coverage guidance, seeds carry the fuzzer past the first length check.
 */
import fc from 'fast-check';

const INTERESTING = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, 0x0d, 0x0a, 0x2c, 0x22, 0x3a, 0x20];

type Mutation = (b: Buffer, r: () => number) => Buffer;

const at = (b: Buffer, r: () => number): number => Math.floor(r() * Math.max(1, b.length));

const MUTATIONS: Mutation[] = [
  // flip one bit
  (b, r) => {
    if (b.length === 0) return b;
    const c = Buffer.from(b);
    c[at(c, r)]! ^= 1 << Math.floor(r() * 8);
    return c;
  },
  // a byte to a boundary value
  (b, r) => {
    if (b.length === 0) return Buffer.of(INTERESTING[Math.floor(r() * INTERESTING.length)]!);
    const c = Buffer.from(b);
    c[at(c, r)] = INTERESTING[Math.floor(r() * INTERESTING.length)]!;
    return c;
  },
  // a 16-bit field to a boundary (lengths)
  (b, r) => {
    if (b.length < 2) return b;
    const c = Buffer.from(b);
    c.writeUInt16BE(
      [0, 1, 0x7fff, 0x8000, 0xffff, c.length, c.length + 1][Math.floor(r() * 7)]! & 0xffff,
      Math.min(at(c, r), c.length - 2),
    );
    return c;
  },
  // cut short
  (b, r) => b.subarray(0, at(b, r)),
  // drop a range
  (b, r) => {
    const i = at(b, r);
    return Buffer.concat([b.subarray(0, i), b.subarray(Math.min(b.length, i + 1 + Math.floor(r() * 16)))]);
  },
  // repeat a range
  (b, r) => {
    const i = at(b, r);
    const part = b.subarray(i, i + 1 + Math.floor(r() * 32));
    return Buffer.concat([b.subarray(0, i), part, part, b.subarray(i)]);
  },
  // insert random bytes
  (b, r) => {
    const i = at(b, r);
    const junk = Buffer.from(Array.from({ length: 1 + Math.floor(r() * 8) }, () => Math.floor(r() * 256)));
    return Buffer.concat([b.subarray(0, i), junk, b.subarray(i)]);
  },
];

/** A seed with 1–8 mutations, picked and placed by fast-check (so failures shrink). */
export function mutatedFrom(seeds: readonly Buffer[]): fc.Arbitrary<Buffer> {
  return fc
    .tuple(
      fc.nat({ max: seeds.length - 1 }),
      fc.array(fc.tuple(fc.nat({ max: MUTATIONS.length - 1 }), fc.integer()), { minLength: 1, maxLength: 8 }),
    )
    .map(([i, steps]) => {
      let b = seeds[i]!;
      for (const [m, seed] of steps) {
        let x = seed | 0;
        // A small PRNG per step from fast-check's integer: deterministic, so the case replays.
        const r = () => (
          (x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0),
          ((x >>> 0) % 1_000_003) / 1_000_003
        );
        b = MUTATIONS[m]!(b, r);
      }
      return b;
    });
}

/** Mostly mutated seeds, sometimes bytes from nowhere. */
export function bytesLike(seeds: readonly Buffer[], maxLength = 512): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 4, arbitrary: mutatedFrom(seeds) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength }).map((u) => Buffer.from(u)) },
  );
}

/** The same, as text (latin1 keeps every byte; parsers of text see what a socket would give). */
export function textLike(seeds: readonly string[], maxLength = 2048): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: mutatedFrom(seeds.map((s) => Buffer.from(s, 'utf8'))).map((b) => b.toString('utf8')) },
    { weight: 1, arbitrary: fc.string({ maxLength, unit: 'binary' }) },
  );
}
