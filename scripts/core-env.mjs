/**
 * Environment the core's process starts with, beside its V8 flags (core-v8-flags.mjs): the headless
 * core and the tray app from `npm start` (scripts/start.mjs), the `gatehop` command (its shebang)
 * and the benches. Like the V8 flags it must be there at start: glibc reads it when malloc first
 * runs, before any thread exists.
 *
 * MALLOC_ARENA_MAX=1: one glibc malloc arena for every thread. Without it every thread that mallocs
 * gets an arena of its own up to eight per core; the core's runtime cap (limitMallocArenas in
 * core/common/malloc-tuning.ts) comes after Node's own threads have each made one, and the core
 * had seven (#44). Each arena keeps the free chunks its thread left, scattered over pages that a
 * live chunk pins, so the RSS grew with free memory, not held memory. Over 60-minute soaks
 * (bench/README.md): seven arenas, thread arenas 46 → 86 MB and RSS +24.0 % after the warm-up;
 * two from the start, thread arenas flat but malloc's free memory 29 → 51 MB and the RSS still
 * climbing for half an hour (+2.25 MB per 10 minutes); one, the free memory flat at ~15 MB, where
 * a tunnel thread's freed batch serves the next batch of any thread. What one lock costs the data
 * path was within this machine's noise (the "sixth hour"). Where malloc is not glibc's (macOS,
 * Windows, musl) the variable means nothing.
 */
export const CORE_ENV = { MALLOC_ARENA_MAX: '1' };
