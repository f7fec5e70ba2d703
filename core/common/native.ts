import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What gatehop-native (native/, Node-API) exports at the ABI this core was written for. */
export interface NativeModule {
  readonly abi: number;
  /**
   * malloc_trim(0) on a thread-pool thread (one took 208 ms in the soak: not on the main thread):
   * true when memory was released, false when none was, undefined without glibc.
   */
  heapTrim(): Promise<boolean | undefined>;
}

/** The exports' meaning this core expects (native/src/addon.c GATEHOP_NATIVE_ABI). */
const EXPECTED_ABI = 2;
const BINARY = join('native', 'build', 'Release', 'gatehop_native.node');

export type NativeStatus = { loaded: true; path: string } | { loaded: false; reason: string };

let cached: { module: NativeModule | null; status: NativeStatus } | undefined;

/**
 * The native module, loaded once, or null where it is absent (not built: no C toolchain at
 * install), refused (a build for another ABI) or turned off with GATEHOP_NATIVE=off (how the tests
 * run the JavaScript path). Everything that uses it has a JavaScript path; `nativeStatus()` says
 * which runs and why.
 */
export function loadNative(): NativeModule | null {
  return (cached ??= load()).module;
}

export function nativeStatus(): NativeStatus {
  return (cached ??= load()).status;
}

function load(): { module: NativeModule | null; status: NativeStatus } {
  if (process.env.GATEHOP_NATIVE === 'off') return { module: null, status: { loaded: false, reason: 'turned off (GATEHOP_NATIVE=off)' } };
  const path = findBinary();
  if (!path) return { module: null, status: { loaded: false, reason: `not built (${BINARY} not found; npm ci or node scripts/build-native.mjs builds it)` } };
  try {
    const mod = createRequire(import.meta.url)(path) as NativeModule;
    if (mod.abi !== EXPECTED_ABI) return { module: null, status: { loaded: false, reason: `${path} is ABI ${String(mod.abi)}, this core needs ${EXPECTED_ABI}: rebuild it` } };
    return { module: mod, status: { loaded: true, path } };
  } catch (err) {
    return { module: null, status: { loaded: false, reason: `${path} did not load: ${(err as Error).message}` } };
  }
}

/**
 * The binary in the project folder above this file: core/common (source), dist/core/common
 * (built) and app.asar/dist/core/common (packaged; Electron reads the unpacked copy for us).
 * GATEHOP_NATIVE_PATH names another one.
 */
function findBinary(): string | null {
  const named = process.env.GATEHOP_NATIVE_PATH;
  if (named) return existsSync(named) ? named : null;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, BINARY);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return null;
}
