import { abortReason } from './errors.js';

export interface SettleFirstOptions {
  /** Aborting rejects with abortReason(signal, what). Already aborted: rejected before the work starts. */
  signal?: AbortSignal | undefined;
  /** What is waited for, in the abort's error ("probe 1.2.3.4:443"). */
  what: string;
  /** After `ms`, rejected with `error()` (the caller's words: each wait times out in its own terms). */
  deadline?: { ms: number; error: () => Error } | undefined;
}

export interface Settle<T> {
  resolve(value: T): void;
  reject(err: Error): void;
}

/**
 * What a work's teardown is told: `true` when the work itself resolved (keep what it made, drop only
 * the listeners), `false` when it failed, was aborted or timed out (destroy what it made).
 */
export type Teardown = (resolved: boolean) => void;

/**
 * Settles on the first of: the work's own answer (through `settle`), the signal's abort, the
 * deadline. Whichever comes first, the timer and the abort listener are removed and the work's
 * teardown runs exactly once, before the promise settles; later answers are ignored. A work that
 * throws while starting is a rejection. The one shape for "wait for this, but not forever and not
 * past an abort", written once instead of beside every socket.
 */
export function settleFirst<T>(o: SettleFirstOptions, start: (settle: Settle<T>) => Teardown | void): Promise<T> {
  const { signal } = o;
  if (signal?.aborted) return Promise.reject(abortReason(signal, o.what));
  return new Promise<T>((resolve, reject) => {
    let settled: { resolved: boolean } | null = null;
    let teardown: Teardown | void;
    let tornDown = false;
    const tearDown = (): void => {
      if (tornDown || !teardown || !settled) return;
      tornDown = true;
      teardown(settled.resolved);
    };
    const finish = (resolved: boolean, answer: () => void): void => {
      if (settled) return;
      settled = { resolved };
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      try {
        tearDown();
      } finally {
        answer();
      }
    };
    const onAbort = (): void => finish(false, () => reject(abortReason(signal!, o.what)));
    const deadline = o.deadline;
    const timer = deadline ? setTimeout(() => finish(false, () => reject(deadline.error())), deadline.ms) : null;
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      teardown = start({
        resolve: (value) => finish(true, () => resolve(value)),
        reject: (err) => finish(false, () => reject(err)),
      });
    } catch (err) {
      finish(false, () => reject(err instanceof Error ? err : new Error(String(err))));
    }
    // Settled while starting, before the teardown was known: run it now.
    tearDown();
  });
}

/**
 * Waits for work that others may share (a lookup in flight): an abort ends this caller's wait, not
 * the work. Without a signal, the work itself.
 */
export function waitAbortably<T>(work: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return work;
  return settleFirst<T>({ signal, what }, (settle) => {
    work.then(
      (value) => settle.resolve(value),
      (err: unknown) => settle.reject(err instanceof Error ? err : new Error(String(err))),
    );
  });
}
