/** Environment the core's process starts with (core-env.mjs). */
export declare const CORE_ENV: Readonly<Record<string, string>>;
