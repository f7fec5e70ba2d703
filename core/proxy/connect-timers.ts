import { ErrorCodes, GatehopError } from '../common/index.js';

/** One connect's deadline and abort (see ConnectTimers.arm). */
export interface ArmedConnect {
  controller: AbortController;
  timeoutMs: number;
  disarm(): void;
}

/**
 * A session's connects in flight, each with its deadline and abort: the session closing aborts
 * what is armed (abortAll), a timeout aborts that one with GH_ERR_SESSION_CONNECT_TIMEOUT.
 */
export class ConnectTimers {
  readonly #armed = new Set<{ controller: AbortController; timer: NodeJS.Timeout }>();

  constructor(
    private readonly timeoutMs: () => number,
    private readonly onTimeout: () => void,
  ) {}

  arm(host: string, port: number): ArmedConnect {
    const controller = new AbortController();
    const timeoutMs = this.timeoutMs();
    const timer = setTimeout(() => {
      this.onTimeout();
      controller.abort(
        new GatehopError(
          ErrorCodes.SESSION_CONNECT_TIMEOUT,
          `connect to ${host}:${port} timed out after ${timeoutMs} ms`,
        ),
      );
    }, timeoutMs);
    timer.unref();
    const entry = { controller, timer };
    this.#armed.add(entry);
    return {
      controller,
      timeoutMs,
      disarm: () => {
        clearTimeout(timer);
        this.#armed.delete(entry);
      },
    };
  }

  /** Every armed connect aborted with `reason`. */
  abortAll(reason: GatehopError): void {
    for (const c of this.#armed) {
      clearTimeout(c.timer);
      c.controller.abort(reason);
    }
    this.#armed.clear();
  }
}
