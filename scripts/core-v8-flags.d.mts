/** V8 flags the core's process starts with (core-v8-flags.mjs). */
export declare const CORE_V8_FLAGS: readonly string[];
