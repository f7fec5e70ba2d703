/**
 * V8 flags the core's process starts with: the headless core `node FLAGS bin/gatehop.js` and the tray
 * app `electron --js-flags="FLAGS"` (scripts/start.mjs, bench:soak), the Linux packages' desktop entry
 * (electron-builder.yml). They must be given at start: V8 sizes its heap when the isolate is made,
 * and `v8.setFlagsFromString` afterwards leaves the heap's limits as they were. Windows and macOS
 * packages launch Electron without arguments and run without them.
 *
 * --max-semi-space-size=8 (MiB): the main thread's young generation stops at 16 MiB (two semi-spaces)
 * instead of V8's 32 on 64-bit. V8 doubles it each time the bytes that survived scavenges since the
 * last doubling exceed its size, so a long-running proxy reaches the maximum sooner or later. In the
 * soak's schedule (#44, 2026-12-05, --trace-gc-verbose) the main isolate's new space was 32 MiB
 * during the start, then 16 MiB from minute 2.5; with the cap it held 15–16 MiB through 24 minutes
 * (/status.mainHeap). What it cost: nothing measurable (bench:proxy --short, 3 rounds alternated:
 * 1,369–1,777 MiB/s at 0.64–0.84 CPU s/GiB with it, 1,460–1,543 at 0.74–0.84 without; CONNECT p50
 * 0.54–0.67 ms both ways). The tunnel threads cap theirs in worker-pool.ts.
 */
export const CORE_V8_FLAGS = ['--max-semi-space-size=8'];
