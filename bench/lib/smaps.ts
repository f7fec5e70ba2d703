/**
 * A process's resident memory by what holds it, read from /proc/PID/smaps: which part of a growth
 * is glibc's (the main heap, the thread arenas), V8's (heap pages), WebAssembly memories, thread
 * stacks or files. Linux only; the kinds are told apart by how each allocator maps memory:
 *   - `[heap]`: glibc's main arena (brk).
 *   - thread arenas: glibc gives each arena 64 MiB-aligned reservations of 64 MiB (HEAP_MAX_SIZE
 *     on 64-bit), read-write from their start and PROT_NONE after: a read-write anonymous mapping
 *     that starts on a 64 MiB boundary and is at most 64 MiB.
 *   - WebAssembly memories: V8 reserves each with guard regions of gigabytes (PROT_NONE) behind the
 *     read-write part: a read-write mapping followed by an inaccessible one of ≥ 1 GiB.
 *   - V8 heap pages: 256 KiB read-write anonymous mappings (V8's page size), or larger ones that
 *     V8 aligns to 256 KiB (large objects); what is left anonymous is `other anonymous` (mmapped
 *     malloc chunks, thread stacks, code space).
 */
import { readFileSync } from 'node:fs';

export type MemoryKind =
  'main heap' | 'thread arenas' | 'wasm memories' | 'v8 pages' | 'other anonymous' | 'files' | 'stacks and vdso';

export const MEMORY_KINDS: MemoryKind[] = [
  'main heap',
  'thread arenas',
  'wasm memories',
  'v8 pages',
  'other anonymous',
  'files',
  'stacks and vdso',
];

interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  path: string;
  rssKb: number;
}

const MiB64 = 64n << 20n;
const GiB = 1n << 30n;
const KiB256 = 256n << 10n;

function parse(text: string): Mapping[] {
  const maps: Mapping[] = [];
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      maps.push({
        start: BigInt(`0x${head[1]}`),
        end: BigInt(`0x${head[2]}`),
        perms: head[3]!,
        path: head[4]!.trim(),
        rssKb: 0,
      });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && maps.length) maps.at(-1)!.rssKb = Number(rss[1]);
  }
  return maps;
}

function kindOf(m: Mapping, next: Mapping | undefined): MemoryKind {
  if (m.path === '[heap]') return 'main heap';
  if (m.path.startsWith('[')) return 'stacks and vdso';
  if (m.path) return 'files';
  const size = m.end - m.start;
  if (m.perms.startsWith('rw')) {
    if (next && next.start === m.end && next.perms.startsWith('---') && next.end - next.start >= GiB)
      return 'wasm memories';
    if (m.start % MiB64 === 0n && size <= MiB64) return 'thread arenas';
    if (m.start % KiB256 === 0n && size % KiB256 === 0n) return 'v8 pages';
  }
  return 'other anonymous';
}

/** Resident MB of each kind, and the number of mappings of each. */
export function memoryByKind(pid: number): Record<MemoryKind, { mb: number; mappings: number }> {
  const maps = parse(readFileSync(`/proc/${pid}/smaps`, 'utf8'));
  const out = Object.fromEntries(MEMORY_KINDS.map((k) => [k, { mb: 0, mappings: 0 }])) as Record<
    MemoryKind,
    { mb: number; mappings: number }
  >;
  maps.forEach((m, i) => {
    if (m.rssKb === 0) return;
    const k = kindOf(m, maps[i + 1]);
    out[k].mb += m.rssKb / 1024;
    out[k].mappings++;
  });
  for (const k of MEMORY_KINDS) out[k].mb = Math.round(out[k].mb * 10) / 10;
  return out;
}
