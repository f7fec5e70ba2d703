/**
 * Environment the core's process starts with, beside its V8 flags (core-v8-flags.mjs): the headless
 * core and the tray app from `npm start` (scripts/start.mjs), the `gatehop` command (its shebang)
 * and the benches. Like the V8 flags it must be there at start: glibc reads it when malloc first
 * runs, before any thread exists.
 *
 * MALLOC_ARENA_MAX=2: at most two glibc malloc arenas. Without it every thread that mallocs gets
 * an arena of its own up to eight per core; the core's runtime cap (limitMallocArenas in
 * core/common/malloc-tuning.ts) comes after Node's own threads have each made one, and the core
 * had seven (#44). Each arena keeps the free chunks its thread left, scattered over pages that a
 * live chunk pins, so the RSS grew with free memory, not held memory: in a 20-minute soak the
 * thread arenas held 43.9 MB on average over minutes 10–20 with 73.3 MB of malloc's memory free
 * against 24.9 MB in use. With two arenas from the start the thread arenas stayed at 25–31 MB
 * through a 60-minute soak (46 → 86 without) and the RSS ended 53 MB lower; no cost on the data
 * path was measurable (bench/README.md, the soak's "fifth hour"). Where malloc is not glibc's
 * (macOS, Windows, musl) the variable means nothing.
 */
export const CORE_ENV = { MALLOC_ARENA_MAX: '2' };
