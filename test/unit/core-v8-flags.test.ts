/**
 * The V8 flags the core starts with (scripts/core-v8-flags.mjs) do what their comment says: with
 * them, a main thread whose objects keep surviving scavenges stops its young generation at 16 MiB;
 * without them V8 doubles it to 32 (#44: the step the 60-minute soak's RSS took after its warm-up).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CORE_ENV } from '../../scripts/core-env.mjs';
import { CORE_V8_FLAGS } from '../../scripts/core-v8-flags.mjs';

/** Keeps a sliding window of objects alive while allocating: survivors pile up, so V8 grows new space. */
const CHURN = `
const v8 = require('node:v8');
const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
let keep = [];
let max = 0;
for (let round = 0; round < 2000; round++) {
  for (let i = 0; i < 2000; i++) keep.push({ i, pair: [i, i], text: 'x' + i });
  if (keep.length > 200000) keep = keep.slice(100000);
  max = Math.max(max, young());
}
process.stdout.write(String(max / 1048576));
`;

function largestYoungMb(flags: readonly string[]): number {
  return Number(execFileSync(process.execPath, [...flags, '-e', CHURN], { encoding: 'utf8' }));
}

describe('the V8 flags the core starts with', () => {
  it("cap the main thread's young generation at 16 MiB, where V8 alone grows it to 32", () => {
    expect(largestYoungMb([])).toBeGreaterThan(16);
    expect(largestYoungMb(CORE_V8_FLAGS)).toBeLessThanOrEqual(16);
  });

  it('are the ones the `gatehop` command starts with, with the environment of scripts/core-env.mjs (its shebang: npm links the bin to it)', () => {
    const shebang = readFileSync(new URL('../../bin/gatehop.js', import.meta.url), 'utf8').split('\n')[0];
    const env = Object.entries(CORE_ENV).map(([k, v]) => `${k}=${v}`);
    expect(shebang).toBe(`#!/usr/bin/env -S ${env.join(' ')} node ${CORE_V8_FLAGS.join(' ')}`);
  });
});
