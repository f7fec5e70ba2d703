import { loadNative, type NativeModule } from './native.js';
import { closeSync, openSync, writeSync } from 'node:fs';

let done = false;

/**
 * Makes glibc keep freed heap memory instead of returning it to the OS after every free.
 *
 * Why: every socket read in Node allocates a fresh 64 KiB buffer with malloc. With glibc's default
 * trim threshold (128 KiB) the heap top is handed back with brk() after nearly every free, so the
 * next read page-faults it in again. Measured here (1 GiB through the proxy over loopback): 3.5 s of
 * system time per GiB and ~260 MB/s, against 0.9 s and ~700 MB/s with a high threshold.
 *
 * How: glibc raises its thresholds dynamically when a chunk that was large enough to be mmapped is
 * freed (mallopt(3), M_MMAP_THRESHOLD: "dynamic adjustment"): the mmap threshold becomes that size
 * and the trim threshold twice it. Environment variables (MALLOC_TRIM_THRESHOLD_) would need to
 * be set before the process starts, which a library and Electron's main process cannot do. Writing
 * one 8 MiB string synchronously makes Node malloc and free an 8 MiB native buffer: a one-off
 * ~2 ms cost at start-up. Elsewhere (macOS, Windows, musl, Electron's PartitionAlloc) it is harmless.
 */
export function raiseMallocTrimThreshold(): void {
  if (done || process.platform !== 'linux') return;
  done = true;
  let fd: number | undefined;
  try {
    fd = openSync('/dev/null', 'w');
    writeSync(fd, 'x'.repeat(8 << 20));
  } catch {
    // Only a performance tuning: a machine without /dev/null just runs slower.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * glibc malloc arenas the process may have (mallopt M_ARENA_MAX): no new arena once there are this
 * many, instead of one per thread up to glibc's default of eight per core. The cap comes after Node's
 * own threads (V8's platform workers, libuv's pool) have each made one: the core has seven arenas
 * (malloc_info in a 20-minute soak, #44), and tunnel threads take those in turn rather than an eighth and
 * more. Only the process's environment (MALLOC_ARENA_MAX) caps them before those threads start:
 * scripts/core-env.mjs sets it wherever the core is started by a command (npm start, `gatehop`).
 *
 * Why: a worker thread's own arena keeps what that thread has touched: fragmented chunks that
 * malloc_trim cannot give back while a live one shares their pages. In a 20-minute soak (#44, five
 * threads) the thread arenas grew by 51.5 MB of the 72.7 MB the process grew by, while the JS heap
 * stayed flat. Shared, one thread's free chunks serve the next; the price is one lock that every
 * thread's malloc takes (a tunnel thread allocates per batch, not per byte: no cost measurable on
 * the data path, bench/README.md "sixth hour"). One rather than two: with two, malloc's free memory
 * still grew 29 → 51 MB over an hour in the arena the threads shared with the main thread.
 */
export const MALLOC_ARENAS = 1;

/** Caps glibc's malloc arenas through the native module; nothing without it or without glibc. */
export function limitMallocArenas(native: Pick<NativeModule, 'limitArenas'> | null = loadNative()): boolean {
  if (!native || process.platform !== 'linux') return false;
  return native.limitArenas(MALLOC_ARENAS) === true;
}
