import type { Logger } from './logger.js';

/**
 * A set of event listeners where one that throws is logged and does not stop the others (an
 * observer must never break the component it observes).
 */
export class Listeners<T> {
  readonly #fns = new Set<(ev: T) => void>();

  constructor(
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  /** Returns an unsubscribe function. */
  add(fn: (ev: T) => void): () => void {
    this.#fns.add(fn);
    return () => this.#fns.delete(fn);
  }

  emit(ev: T): void {
    for (const fn of [...this.#fns]) {
      try {
        fn(ev);
      } catch (err) {
        this.log.error({ event: 'listener-failed', err: (err as Error).message }, `a ${this.what} listener threw`);
      }
    }
  }
}
