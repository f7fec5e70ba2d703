import { once } from 'node:events';
import { readdirSync } from 'node:fs';

/** Open file descriptors of this process (Linux). */
export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

/** Polls until `check` holds or the deadline passes; for state that settles after I/O, not timing. */
export async function eventually(
  check: () => boolean,
  timeoutMs = 5_000,
  what: string | (() => string) = 'condition',
): Promise<void> {
  await until(() => (check() ? true : undefined), timeoutMs, what);
}

/** Polls `fn` (sync or async) until it yields something other than undefined, and returns that; fails at the deadline. */
export async function until<T>(
  fn: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  what: string | (() => string | Promise<string>) = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new Error(`${typeof what === 'function' ? await what() : what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits for 'drain' or `ms`, whichever comes first, leaving no listener behind. */
export async function drainOrTimeout(stream: NodeJS.EventEmitter, ms: number): Promise<void> {
  await once(stream, 'drain', { signal: AbortSignal.timeout(ms) }).catch((err: Error) => {
    if (err.name !== 'AbortError') throw err;
  });
}
